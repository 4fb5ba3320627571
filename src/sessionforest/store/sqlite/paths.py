"""The active path, materialised as the head moves: loads read it like a plain list.

A path is stored as segments: runs of entries whose sequences follow one
another (in a linear chat, the whole path is one run). `session_path_segments`
holds (session, depth, from_sequence): the path entry at `depth` has sequence
`from_sequence`, and each next depth the next sequence, up to the next
segment's depth (or the path's length). `session_heads.path_tip` and
`path_length` say which head the segments describe; no segment lies at or past
path_length. Entries are immutable and sequences unique per session, so a
segment names its entries for good.

- An append at the head whose sequence follows the head's (the common case)
  writes nothing here: only the head row's length grows. Otherwise (another
  branch was appended to in between) it adds one segment row.
- A move or a branch walks up from the new head only until it meets the
  materialised path (often at once: the target or its parent is on it), drops
  the segments past the fork and adds one row per run it walked: a branch at
  the root of 100,000 entries costs what one at the head does.
- Any other writer of a head (imports, restore, repair) leaves path_tip
  behind: the path is then stale, reads walk the parent links as before, and
  the next append or move re-materialises it from the root.

A load reads each segment as one ordered range of the (session_id, sequence)
index and trusts the rows only after checking each one's parent is the row
before, the last is the head and (for a whole path) the first is a root;
otherwise it walks. `check` compares the entries the segments name with the
parent-link walk.

A whole-path load takes the path's first depths from its sealed chunks
(chunks.py: one packed body per run of entries, checked the same way) when a
catch-up made them, and reads only the rest as rows.

`PathCache` keeps, per session, the rows (and chunk bodies) of the last whole
path a load read, by its head. Entries are immutable and a path to a given
entry never changes, so the rows stay right whatever any process writes later: a load whose head is
the cached one reuses them; one whose head grew past it (appends by this or
another process) reads only the new depths and checks that the first of them
names the cached head as its parent; anything else reads the whole path. The
rows are tuples of strings and numbers and the bodies bytes: each load still
builds its own entries (a chunk's decoded again), so no caller sees another's
decoded payload.
"""

from __future__ import annotations

import bisect
import operator
import sqlite3
import threading
from collections import OrderedDict
from itertools import repeat
from typing import Any

from ...model import Entry, Problem
from ...rules import integrity as rules
from ...rules import reading
from . import chunks

# Up from `target`, within the session, bounded by its entry count against a
# corrupt cycle. FIFO recursion: rows come target first, and SQLite computes
# them as they are stepped, so a walk read only to the fork costs only that.
WALK_UP = """
WITH RECURSIVE up(id, parent, sequence, n) AS (
    SELECT id, parent_entry_id, sequence, 0 FROM session_entries
    WHERE id = :target AND session_id = :sid
    UNION ALL
    SELECT e.id, e.parent_entry_id, e.sequence, up.n + 1
    FROM up JOIN session_entries e ON e.id = up.parent
    WHERE e.session_id = :sid
      AND up.n < (SELECT MAX(sequence) FROM session_entries WHERE session_id = :sid)
)
SELECT id, parent, sequence FROM up
"""

SEGMENTS = (
    "SELECT depth, from_sequence FROM session_path_segments "
    "WHERE session_id = ? AND depth < ? ORDER BY depth"
)
PUT = (
    "INSERT OR REPLACE INTO session_path_segments(session_id, depth, from_sequence) "
    "VALUES (?, ?, ?)"
)
DROP_FROM = "DELETE FROM session_path_segments WHERE session_id = ? AND depth >= ?"

SET_HEAD = """
INSERT INTO session_heads(session_id, active_entry_id, updated_at, path_tip, path_length)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id,
    updated_at = excluded.updated_at, path_tip = excluded.path_tip,
    path_length = excluded.path_length
"""

# An append's head move: SET_HEAD adding the messages it appended (sql/rows.APPEND_HEAD).
APPEND_HEAD = """
INSERT INTO session_heads(session_id, active_entry_id, updated_at, path_tip, path_length, messages)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id,
    updated_at = excluded.updated_at, path_tip = excluded.path_tip,
    path_length = excluded.path_length, messages = session_heads.messages + excluded.messages
"""

# A head move keeps `updated_at`: a move is not activity (sql/rows.MOVE_HEAD).
MOVE_HEAD = """
INSERT INTO session_heads(session_id, active_entry_id, updated_at, path_tip, path_length)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id,
    path_tip = excluded.path_tip, path_length = excluded.path_length
"""

# One segment's entries (or a tail of it): a plain ordered range of the index,
# without the two columns a row's place already says (each column read costs the
# sqlite3 module about 0.25 ms per 2,000 rows): the WHERE names the session, and
# a range holding as many rows as it spans holds each sequence once (they are
# unique per session), in order. `rows` puts both back.
RANGE = (
    "SELECT id, parent_entry_id, semantic_schema_version, kind, payload, "
    "context_visibility, created_at, stamp FROM session_entries "
    "WHERE session_id = ? AND sequence >= ? AND sequence <= ? ORDER BY sequence"
)
RANGE_IDS = (
    "SELECT id FROM session_entries "
    "WHERE session_id = ? AND sequence >= ? AND sequence <= ? ORDER BY sequence"
)

# What `check` compares with the walk: each session whose path claims to be its head's.
CLAIMED = """
SELECT session_id, active_entry_id, path_length FROM session_heads
WHERE path_tip IS NOT NULL AND path_tip = active_entry_id {where}
ORDER BY session_id
"""
CLAIMED_ALL = CLAIMED.format(where="")
CLAIMED_SESSION = CLAIMED.format(where="AND session_id = :sid")

# A segment at or past a current path's length: appends would grow into it.
STRAY = (
    "SELECT depth FROM session_path_segments WHERE session_id = ? AND depth >= ? "
    "ORDER BY depth LIMIT 1"
)

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

HEAD_PATH = "SELECT active_entry_id, path_tip, path_length FROM session_heads WHERE session_id = ?"
ID_AT = "SELECT id FROM session_entries WHERE session_id = ? AND sequence = ?"

# Forget a session's materialised path (repair; reads walk until the next write).
FORGET = "UPDATE session_heads SET path_tip = NULL, path_length = NULL WHERE session_id = ?"

Conn = sqlite3.Connection | sqlite3.Cursor


def reach(
    conn: Conn,
    session_id: str,
    target: str | None,
    tip: str | None,
    head: str | None,
    length: int | None,
) -> int | None:
    """Make the materialised path end at `target` (inside the caller's write
    transaction); returns its length, or None when the path cannot be built
    (damage: reads then walk, and raise what the walk finds)."""
    current = length if tip is not None and tip == head and length is not None else 0
    if target is None:
        conn.execute(DROP_FROM, (session_id, 0))
        return 0
    if current and target == tip:
        return current
    segments = conn.execute(SEGMENTS, (session_id, current)).fetchall() if current else []
    starts = [s[1] for s in segments]
    fork: int | None = None
    walked: list[int] = []  # sequences from the target up, short of the fork
    last_parent: Any = None
    for _id, parent, sequence in conn.execute(WALK_UP, {"sid": session_id, "target": target}):
        fork = _depth_of(segments, starts, current, sequence)
        if fork is not None:
            break
        walked.append(sequence)
        last_parent = parent
    if fork is not None:
        base = fork + 1
    elif walked and last_parent is None:
        base = 0
    else:
        return None  # a missing, foreign or cyclic parent: not a path
    conn.execute(DROP_FROM, (session_id, base))
    walked.reverse()
    runs, before = [], None
    for i, sequence in enumerate(walked):
        if before is None or sequence != before + 1:
            runs.append((session_id, base + i, sequence))
        before = sequence
    if runs:
        conn.executemany(PUT, runs)
    return base + len(walked)


def _depth_of(
    segments: list[tuple[int, int]], starts: list[int], length: int, sequence: int
) -> int | None:
    """The depth of the entry with `sequence` on the materialised path, or None.

    Sequences grow strictly along a path (a parent is always older), so the
    segment that can hold it is the last one starting at or below it."""
    i = bisect.bisect_right(starts, sequence) - 1
    if i < 0:
        return None
    depth, first = segments[i]
    end = segments[i + 1][0] if i + 1 < len(segments) else length
    at = depth + sequence - first
    return at if at < end else None


def extend(conn: Conn, session_id: str, length: int, below: int | None, first: int) -> None:
    """Record an append's entries (sequences from `first` on, each the child of the
    one before) at depth `length`, below the path's last entry (sequence `below`)."""
    if length == 0 or below is None or first != below + 1:
        conn.execute(PUT, (session_id, length, first))


def spans(conn: Conn, session_id: str, length: int, low: int) -> list[tuple[int, int]] | None:
    """The sequence ranges (inclusive) holding the path's depths `low`..length-1,
    root side first; None when the segments do not describe a path of `length`."""
    segments = conn.execute(SEGMENTS, (session_id, length)).fetchall()
    if not segments or segments[0][0] != 0:
        return None
    found = []
    for i, (depth, first) in enumerate(segments):
        end = segments[i + 1][0] if i + 1 < len(segments) else length
        if end <= low:
            continue
        start = max(depth, low)
        found.append((first + start - depth, first + end - 1 - depth))
    return found


def rows(
    conn: Conn,
    session_id: str,
    ranges: list[tuple[int, int]],
    head: str,
    expected: int,
    below: str | None = None,
    *,
    anchored: bool = True,
) -> list[tuple[Any, ...]] | None:
    """The entry rows (ENTRY_COLUMNS' order) of `ranges` (from `spans`), in path
    order, if they are exactly the path's `expected` last entries: each the parent
    of the next, ending at the head and (when `anchored`) starting below the entry
    `below` (None: at a root); None when they are not to be trusted."""
    found: list[tuple[Any, ...]] = []
    ids: list[str] = []
    parents: list[str | None] = []
    for low, high in ranges:
        fetched = conn.execute(RANGE, (session_id, low, high)).fetchall()
        if not fetched or len(fetched) != high - low + 1:
            return None  # a missing entry: the segments do not describe this path
        # Columns, then rows again, in C loops (no Python frame per row).
        got, parent, version, kind, payload, visibility, created, stamp = zip(*fetched, strict=True)
        ids += got
        parents += parent
        sequences = range(low, high + 1)
        sessions = repeat(session_id, len(got))
        found += zip(got, sessions, parent, sequences, version, kind, payload, visibility,
                     created, stamp, strict=True)  # fmt: skip
    if len(found) != expected or not found or ids[-1] != head:
        return None
    if anchored and parents[0] != below:
        return None
    # Every parent is the row before it (whole columns compared at once).
    if parents[1:] != ids[:-1]:
        return None
    return found


Rows = list[tuple[Any, ...]]


class PathCache:
    """Each session's last whole path read, by head (see the module docstring): the
    chunk bodies it was read from (chunks.py), checked once, and the rows after
    them; least recently used first out beyond `budget` bytes in all (a row counts
    its payload's characters and ROW_BYTES for the rest, a chunk its body's bytes:
    a path holding a 60 MB payload costs 60 MB of the budget, and one larger than
    it is not kept). Each load builds its own entries from them (a chunk's are
    decoded again), so no caller sees another's decoded payload."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        # session -> (head, packed or None, rows after it, bytes)
        self._paths: OrderedDict[str, tuple[str, chunks.Packed | None, Rows, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        """Bytes held (as counted)."""
        return self._size

    def clear(self) -> None:
        """Forget every cached path (benchmarks time a first read with it)."""
        with self._lock:
            self._paths.clear()
            self._size = 0

    def holds(self, session_id: str, head: str) -> bool:
        """Whether the path ending at `head` is cached (a tail can then be cut from it)."""
        with self._lock:
            known = self._paths.get(session_id)
        return known is not None and known[0] == head

    def entries(
        self, conn: Conn, session_id: str, head: str, length: int, low: int = 0
    ) -> list[Entry] | None:
        """The entries of depths `low`.. of the materialised path of `length` ending at
        `head` (the caller read both in this snapshot), root first; None: not to be
        trusted (the caller walks the parent links)."""
        with self._lock:
            known = self._paths.get(session_id)
            if known is not None:
                self._paths.move_to_end(session_id)
        if known is not None:
            tip, packed, cached, size = known
            done = (packed.covered if packed is not None else 0) + len(cached)
            if tip == head and done == length:
                return _built(session_id, packed, cached, low)
            if done < length:
                ranges = spans(conn, session_id, length, done)
                if ranges is not None:
                    last = cached[-1][0] if cached else packed.last_id if packed else None
                    new = rows(conn, session_id, ranges, head, length - done, last)
                    if new is not None:
                        cached = cached + new
                        self._keep(session_id, head, packed, cached, size + _bytes(new))
                        return _built(session_id, packed, cached, low)
        ranges = spans(conn, session_id, length, 0)
        if ranges is None:
            return None
        depths = chunks.Depths(ranges)
        got = chunks.read(conn, session_id, depths) if depths.length == length else None
        if got is not None:
            packed, first = got
            covered = packed.covered
            tail: Rows | None = []
            if covered < length:
                tail = rows(conn, session_id, depths.after(covered), head, length - covered,
                            packed.last_id)  # fmt: skip
            elif packed.last_id != head:
                tail = None
            if tail is not None:
                self._keep(session_id, head, packed, tail, packed.size + _bytes(tail))
                return first[low:] + reading.entries_of(tail[max(0, low - covered) :])
        found = rows(conn, session_id, ranges, head, length)
        if found is None:
            return None
        self._keep(session_id, head, None, found, _bytes(found))
        return reading.entries_of(found[low:])

    def _keep(
        self, session_id: str, head: str, packed: chunks.Packed | None, found: Rows, size: int
    ) -> None:
        with self._lock:
            old = self._paths.pop(session_id, None)
            if old is not None:
                self._size -= old[3]
            if size <= self._budget:
                self._paths[session_id] = (head, packed, found, size)
                self._size += size
            while self._size > self._budget:
                _, (_, _, _, dropped) = self._paths.popitem(last=False)
                self._size -= dropped


def _built(session_id: str, packed: chunks.Packed | None, cached: Rows, low: int) -> list[Entry]:
    """Fresh entries of depths `low`.. of a cached path."""
    if packed is None:
        return reading.entries_of(cached[low:])
    covered = packed.covered
    first = chunks.entries(session_id, packed, low) if low < covered else []
    return first + reading.entries_of(cached[max(0, low - covered) :])


# What a cached row holds beyond its payload's characters: ids, kind, times, the
# stamp, the tuple and its objects (about; CPython).
ROW_BYTES = 600
_PAYLOAD = operator.itemgetter(6)  # ENTRY_COLUMNS' payload


def _bytes(found: Rows) -> int:
    # Whole columns at once (C loops): a 10,000-row path is counted in well under 1 ms.
    return sum(map(len, map(_PAYLOAD, found))) + ROW_BYTES * len(found)


def seal(conn: Conn, session_id: str, limit: int | None = None) -> tuple[int, bool]:
    """Pack the session's materialised path up to its head into chunks (chunks.py),
    inside the caller's write transaction, at most about `limit` entries of it (whole
    chunks, at least one): a 100,000-entry path packed at once holds the write lock
    for most of a second. Returns how many entries were packed (0: nothing to do, or
    the path is not materialised, or damaged: reads then do as before) and whether
    the limit left more to pack."""
    head_row = conn.execute(HEAD_PATH, (session_id,)).fetchone()
    if head_row is None:
        return 0, False
    head, tip, length = head_row
    if tip is None or tip != head or not length or length < chunks.CHUNK:
        return 0, False
    ranges = spans(conn, session_id, length, 0)
    if ranges is None:
        return 0, False
    depths = chunks.Depths(ranges)
    if depths.length != length:
        return 0, False
    links = chunks.chain(conn, session_id, depths)
    covered = links[-1].depth + links[-1].entries if links else 0
    if length - covered < chunks.SEAL_AT_LEAST:
        return 0, False
    start, replaced = covered, None
    if links and links[-1].entries < chunks.CHUNK:
        start, replaced = links[-1].depth, links[-1].last_sequence
    below = None
    if start:
        row = conn.execute(ID_AT, (session_id, depths.sequence(start - 1))).fetchone()
        if row is None:
            return 0, False
        below = row[0]
    # Chunks start at multiples of CHUNK (so does `start`): a cut there leaves whole ones.
    end = length
    if limit is not None:
        end = min(length, start + max(chunks.CHUNK, limit - limit % chunks.CHUNK))
    last = head
    if end < length:
        row = conn.execute(ID_AT, (session_id, depths.sequence(end - 1))).fetchone()
        if row is None:
            return 0, False
        last = row[0]
    got = rows(conn, session_id, depths.between(start, end), last, end - start, below)
    if got is None:
        return 0, False
    packed = 0
    for i in range(0, len(got), chunks.CHUNK):
        piece = chunks.sealable(got[i : i + chunks.CHUNK])
        if not piece:
            break
        body = chunks.pack(piece)
        if body is None:
            break
        last = piece[-1][3]
        conn.execute(chunks.PUT, (session_id, last, start + i, len(piece), body))
        if replaced is not None and replaced != last:
            conn.execute(chunks.DROP, (session_id, replaced))
        replaced = None
        packed += len(piece)
        if len(piece) < chunks.CHUNK:
            break
    return packed, end < length and packed == end - start


def problems(conn: sqlite3.Connection, session_id: str | None = None) -> list[Problem]:
    """Each session whose materialised path (one claiming to be its head's) is not the
    parent-link walk from the head (rules.integrity.path_problem)."""
    query, args = (
        (CLAIMED_ALL, {}) if session_id is None else (CLAIMED_SESSION, {"sid": session_id})
    )
    found = []
    for sid, head, length in conn.execute(query, args).fetchall():
        ids: list[str] = []
        for low, high in spans(conn, sid, length, 0) or []:
            ids += [r[0] for r in conn.execute(RANGE_IDS, (sid, low, high))]
        walk = {"sid": sid, "head": head, "bound": length}
        walked = [row[0] for row in conn.execute(WALK_IDS, walk)]
        walked.reverse()
        problem = rules.path_problem(sid, ids, walked)
        stray = conn.execute(STRAY, (sid, length)).fetchone()
        if problem is None and stray is not None:
            detail = f"the stored active path has a segment at depth {stray[0]}, past its end"
            problem = Problem(sid, "path-mismatch", None, f"{detail} (length {length})")
        if problem is not None:
            found.append(problem)
    return found
