"""The integrity report: find damaged session trees and fence them off.

One streaming pass over all entries (grouped by session), one over heads and
session rows. Damage in one session never stops the scan of another. The same
scan, narrowed to one session, is the fresh check `repair` ends with.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from ...errors import SessionDamaged
from ...model import SUPPORTED_SCHEMA_VERSIONS, CheckReport, Problem
from .migrations import ADOPTION_REFUSED

# Every entry with its parent's owner; ordered so each session arrives as one group.
_SCAN_ENTRIES = """
SELECT e.session_id, e.id, e.parent_entry_id, e.sequence, e.semantic_schema_version,
       p.session_id
FROM session_entries e LEFT JOIN session_entries p ON p.id = e.parent_entry_id
{where}
ORDER BY e.session_id, e.sequence
"""
SCAN_ENTRIES = _SCAN_ENTRIES.format(where="")
SCAN_SESSION_ENTRIES = _SCAN_ENTRIES.format(where="WHERE e.session_id = :sid")

# Every session row with its head, then every head row whose session row is
# gone (has_row 0): a deleted session row must not hide what it left behind.
_SCAN_HEADS = """
SELECT s.id, 1, h.active_entry_id, e.session_id
FROM sessions s
LEFT JOIN session_heads h ON h.session_id = s.id
LEFT JOIN session_entries e ON e.id = h.active_entry_id
{where_session}
UNION ALL
SELECT h.session_id, 0, h.active_entry_id, e.session_id
FROM session_heads h LEFT JOIN session_entries e ON e.id = h.active_entry_id
WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = h.session_id) {and_head}
"""
SCAN_HEADS = _SCAN_HEADS.format(where_session="", and_head="")
SCAN_SESSION_HEADS = _SCAN_HEADS.format(
    where_session="WHERE s.id = :sid", and_head="AND h.session_id = :sid"
)

READABLE = ", ".join(map(str, sorted(SUPPORTED_SCHEMA_VERSIONS)))

# (entry id, parent id, sequence, schema version, parent's session)
Row = tuple[str, str | None, int, int, str | None]


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def session_problems(sid: str, rows: list[Row]) -> Iterable[Problem]:
    """What is wrong with one session's entries (in sequence order)."""
    parents: dict[str, str | None] = {}
    for expected, (entry_id, parent, sequence, _version, _owner) in enumerate(rows, 1):
        parents[entry_id] = parent
        if sequence != expected:
            yield Problem(
                sid, "sequence-gap", entry_id, f"sequence {sequence} where {expected} was expected"
            )
            break
    for entry_id, parent, _sequence, version, parent_owner in rows:
        if version not in SUPPORTED_SCHEMA_VERSIONS:
            yield Problem(
                sid,
                "unsupported-version",
                entry_id,
                f"semantic_schema_version {version} cannot be read by this sessionforest "
                f"(readable: {READABLE})",
            )
        if parent is None:
            continue
        if parent_owner is None:
            yield Problem(sid, "orphan-parent", entry_id, f"parent {parent} does not exist")
        elif parent_owner != sid:
            yield Problem(
                sid, "cross-session-parent", entry_id, f"parent {parent} belongs to {parent_owner}"
            )
    # Iterative cycle detection over parent pointers: 0 new, 1 on stack, 2 done.
    state: dict[str, int] = {}
    for start in parents:
        if state.get(start):
            continue
        trail = []
        node: str | None = start
        while node is not None and node in parents and not state.get(node):
            state[node] = 1
            trail.append(node)
            node = parents[node]
        if node is not None and state.get(node) == 1:
            yield Problem(sid, "cycle", node, f"following parents from {start} returns to {node}")
        for visited in trail:
            state[visited] = 2


def scan(conn: sqlite3.Connection, session_id: str | None = None) -> CheckReport:
    """Check every session (or only `session_id`); reads only."""
    params = {"sid": session_id}
    problems: list[Problem] = []
    counts: dict[str, int] = {}  # entries per session
    entries = 0
    group: list[Row] = []
    current: str | None = None
    query = SCAN_ENTRIES if session_id is None else SCAN_SESSION_ENTRIES
    for sid, entry_id, parent, sequence, version, parent_owner in conn.execute(query, params):
        entries += 1
        if sid != current:
            if current is not None:
                problems.extend(session_problems(current, group))
                counts[current] = len(group)
            current, group = sid, []
        group.append((entry_id, parent, sequence, version, parent_owner))
    if current is not None:
        problems.extend(session_problems(current, group))
        counts[current] = len(group)
    rows: set[str] = set()
    heads: dict[str, str | None] = {}
    query = SCAN_HEADS if session_id is None else SCAN_SESSION_HEADS
    for sid, has_row, head, head_owner in conn.execute(query, params):
        if has_row:
            rows.add(sid)
        heads[sid] = head
        if head is None:
            continue
        if head_owner is None:
            problems.append(Problem(sid, "invalid-head", head, f"head {head} does not exist"))
        elif head_owner != sid:
            problems.append(
                Problem(sid, "invalid-head", head, f"head {head} belongs to {head_owner}")
            )
    for sid, count in counts.items():
        if heads.get(sid) is None:
            # Reads would show an empty session: every entry hidden.
            problems.append(
                Problem(
                    sid, "missing-head", None, f"{plural(count, 'entry', 'entries')} but no head"
                )
            )
    for sid in sorted((counts.keys() | heads.keys()) - rows):
        count = counts.get(sid, 0)
        if count == 0:
            left = "its head row remains"
        else:
            left = plural(count, "entry", "entries") + (" remains" if count == 1 else " remain")
        problems.append(
            Problem(sid, "missing-session", None, f"the session row is gone but {left}")
        )
    damaged = tuple(sorted({p.session_id for p in problems}))
    return CheckReport(len(counts.keys() | heads.keys()), entries, tuple(problems), damaged)


def reason(problem: Problem) -> str:
    """The quarantine text `check` and `repair` store for a session's first problem."""
    at = f" at {problem.entry_id}" if problem.entry_id else ""
    return f"{problem.code}{at}: {problem.detail}"


def apply_quarantine(conn: sqlite3.Connection, report: CheckReport) -> None:
    """Fence off every damaged session and release every other one.

    A session whose row is gone has nowhere to hold a quarantine: its missing
    row already fences it (reads and appends raise UnknownSession, search
    joins on session rows), and the sessions_no_adoption trigger lets a row
    come back only quarantined, which `repair` then checks afresh.
    """
    reasons: dict[str, str] = {}
    for problem in report.problems:
        reasons.setdefault(problem.session_id, reason(problem))
    conn.execute("UPDATE sessions SET quarantine = NULL WHERE quarantine IS NOT NULL")
    conn.executemany(
        "UPDATE sessions SET quarantine = ? WHERE id = ?",
        [(text, sid) for sid, text in reasons.items()],
    )


def adoption_refused(exc: sqlite3.IntegrityError, session_id: str) -> SessionDamaged | None:
    """The error for a new session row refused by sessions_no_adoption, else None."""
    if ADOPTION_REFUSED not in str(exc):
        return None
    return SessionDamaged(
        session_id,
        "entries (or a head) of an earlier session with this id remain after its row was "
        f"deleted; a new session would adopt them. `forest repair {session_id}` recreates "
        "the row instead",
    )
