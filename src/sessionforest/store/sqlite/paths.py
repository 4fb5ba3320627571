"""The active path, materialised as the head moves: loads read it like a plain list.

`session_paths` holds (session, depth, entry): depth is an entry's distance
from the root, which never changes (entries are immutable), so an entry has at
most one row. `session_heads.path_tip` and `path_length` say which head the
rows 0..path_length-1 describe; rows at or past path_length are leftovers of
an abandoned branch, ignored and overwritten as the path grows again.

- An append at the head adds its rows at path_length: one insert per entry.
- A move or a branch walks up from the new head only until it meets the
  materialised path (often at once: the target or its parent is on it), then
  sets path_length to the fork's depth + 1 plus what it walked: no row is
  deleted, so a branch at the root of 100,000 entries costs what one at the
  head does.
- Any other writer of a head (imports, restore, repair) leaves path_tip
  behind: the path is then stale, reads walk the parent links as before, and
  the next append or move re-materialises it from the root.

A load trusts the rows only after checking each one's parent is the row
before, the last is the head and (for a whole path) the first is a root;
otherwise it walks. `check` compares the rows with the parent-link walk.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from ...model import Problem
from ...rules import integrity as rules

# Up from `target` until an entry on the materialised path (depth below the
# length), bounded by the session's entry count against a corrupt cycle.
# Rows come in walk order (FIFO recursion): n = 0 is the target.
FORK = """
WITH RECURSIVE up(id, parent, n, depth) AS (
    SELECT e.id, e.parent_entry_id, 0,
           (SELECT p.depth FROM session_paths p
            WHERE p.entry_id = e.id AND p.session_id = :sid AND p.depth < :length)
    FROM session_entries e WHERE e.id = :target AND e.session_id = :sid
    UNION ALL
    SELECT e.id, e.parent_entry_id, up.n + 1,
           (SELECT p.depth FROM session_paths p
            WHERE p.entry_id = e.id AND p.session_id = :sid AND p.depth < :length)
    FROM up JOIN session_entries e ON e.id = up.parent
    WHERE up.depth IS NULL AND e.session_id = :sid
      AND up.n < (SELECT MAX(sequence) FROM session_entries WHERE session_id = :sid)
)
SELECT id, parent, n, depth FROM up
"""

PUT = "INSERT OR REPLACE INTO session_paths(session_id, depth, entry_id) VALUES (?, ?, ?)"

SET_HEAD = """
INSERT INTO session_heads(session_id, active_entry_id, updated_at, path_tip, path_length)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id,
    updated_at = excluded.updated_at, path_tip = excluded.path_tip,
    path_length = excluded.path_length
"""

# The rows of the materialised path from depth `low` (a tail) to the head,
# each with its distance below the head (rules.reading.path_of's 11th column).
ROWS = """
SELECT e.id, e.session_id, e.parent_entry_id, e.sequence, e.semantic_schema_version,
       e.kind, e.payload, e.context_visibility, e.created_at, e.stamp, :top - p.depth
FROM session_paths p JOIN session_entries e ON e.id = p.entry_id
WHERE p.session_id = :sid AND p.depth >= :low AND p.depth <= :top
ORDER BY p.depth
"""

# What `check` compares with the walk: the rows a current path claims.
CLAIMED = """
SELECT h.session_id, h.active_entry_id, h.path_length, p.depth, p.entry_id
FROM session_heads h JOIN session_paths p
  ON p.session_id = h.session_id AND p.depth < h.path_length
WHERE h.path_tip IS NOT NULL AND h.path_tip = h.active_entry_id {where}
ORDER BY h.session_id, p.depth
"""
CLAIMED_ALL = CLAIMED.format(where="")
CLAIMED_SESSION = CLAIMED.format(where="AND h.session_id = :sid")

# The parent-link walk `check` compares with (ids only, head first), bounded.
WALK_IDS = """
WITH RECURSIVE up(id, parent, n) AS (
    SELECT id, parent_entry_id, 0 FROM session_entries WHERE id = :head AND session_id = :sid
    UNION ALL
    SELECT e.id, e.parent_entry_id, up.n + 1 FROM up JOIN session_entries e ON e.id = up.parent
    WHERE e.session_id = :sid AND up.n < :bound
)
SELECT id FROM up
"""

# Forget a session's materialised path (repair; reads walk until the next write).
FORGET = "UPDATE session_heads SET path_tip = NULL, path_length = NULL WHERE session_id = ?"


def reach(
    conn: sqlite3.Connection | sqlite3.Cursor,
    session_id: str,
    target: str | None,
    tip: str | None,
    head: str | None,
    length: int | None,
) -> int | None:
    """Make the materialised path end at `target` (inside the caller's write
    transaction); returns its length, or None when the path cannot be built
    (damage: reads then walk, and raise what the walk finds)."""
    if target is None:
        return 0
    current = length if tip is not None and tip == head and length is not None else 0
    if current and target == tip:
        return current
    walked = conn.execute(FORK, {"sid": session_id, "target": target, "length": current}).fetchall()
    if not walked:
        return None
    _, last_parent, _, fork = walked[-1]
    if fork is not None:
        new = walked[:-1]  # the fork itself is on the path already
        base = fork + 1
    elif last_parent is None:
        new = walked
        base = 0
    else:
        return None  # a missing, foreign or cyclic parent: not a path
    top: int = base + len(new) - 1
    if new:
        conn.executemany(PUT, [(session_id, top - n, row[0]) for n, row in enumerate(new)])
    return top + 1


def extend(
    conn: sqlite3.Connection | sqlite3.Cursor, session_id: str, length: int, ids: Sequence[str]
) -> None:
    """Add `ids` (an append's new entries, each the child of the one before) at `length`."""
    if len(ids) == 1:
        conn.execute(PUT, (session_id, length, ids[0]))
    else:
        conn.executemany(PUT, [(session_id, length + i, e) for i, e in enumerate(ids)])


def trusted(
    session_id: str, head: str, rows: list[tuple[Any, ...]], whole: bool, expected: int
) -> bool:
    """Whether materialised rows (root first) are exactly the path's `expected` last
    entries: each the parent of the next, ending at the head, starting at a root
    when `whole`, all of this session."""
    if len(rows) != expected or not rows or rows[-1][0] != head:
        return False
    if whole and rows[0][2] is not None:
        return False
    before = rows[0]
    if before[1] != session_id:
        return False
    for row in rows[1:]:
        if row[2] != before[0] or row[1] != session_id:
            return False
        before = row
    return True


def problems(conn: sqlite3.Connection, session_id: str | None = None) -> list[Problem]:
    """Each session whose materialised path (one claiming to be its head's) is not the
    parent-link walk from the head (rules.integrity.path_problem)."""
    claimed: dict[str, tuple[str, list[str]]] = {}
    query, args = (
        (CLAIMED_ALL, {}) if session_id is None else (CLAIMED_SESSION, {"sid": session_id})
    )
    for sid, head, _length, _depth, entry_id in conn.execute(query, args):
        claimed.setdefault(sid, (head, []))[1].append(entry_id)
    found = []
    for sid, (head, ids) in claimed.items():
        walk = {"sid": sid, "head": head, "bound": len(ids)}
        walked = [row[0] for row in conn.execute(WALK_IDS, walk)]
        walked.reverse()
        problem = rules.path_problem(sid, ids, walked)
        if problem is not None:
            found.append(problem)
    return found
