"""The integrity report: find damaged session trees and fence them off.

One streaming pass over all entries (grouped by session), one over heads.
Damage in one session never stops the scan of another.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from ...model import CheckReport, Problem

# Every entry with its parent's owner; ordered so each session arrives as one group.
SCAN_ENTRIES = """
SELECT e.session_id, e.id, e.parent_entry_id, e.sequence, p.session_id
FROM session_entries e LEFT JOIN session_entries p ON p.id = e.parent_entry_id
ORDER BY e.session_id, e.sequence
"""

SCAN_HEADS = """
SELECT s.id, h.active_entry_id, e.session_id
FROM sessions s
LEFT JOIN session_heads h ON h.session_id = s.id
LEFT JOIN session_entries e ON e.id = h.active_entry_id
"""


def _session_problems(
    sid: str, rows: list[tuple[str, str | None, int, str | None]]
) -> Iterable[Problem]:
    parents: dict[str, str | None] = {}
    for expected, (entry_id, parent, sequence, _owner) in enumerate(rows, 1):
        parents[entry_id] = parent
        if sequence != expected:
            yield Problem(
                sid, "sequence-gap", entry_id, f"sequence {sequence} where {expected} was expected"
            )
            break
    for entry_id, parent, _sequence, parent_owner in rows:
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


def scan(conn: sqlite3.Connection) -> CheckReport:
    problems: list[Problem] = []
    sessions: set[str] = set()
    entries = 0
    group: list[tuple[str, str | None, int, str | None]] = []
    current: str | None = None
    for sid, entry_id, parent, sequence, parent_owner in conn.execute(SCAN_ENTRIES):
        entries += 1
        if sid != current:
            if current is not None:
                problems.extend(_session_problems(current, group))
            current, group = sid, []
            sessions.add(sid)
        group.append((entry_id, parent, sequence, parent_owner))
    if current is not None:
        problems.extend(_session_problems(current, group))
    for sid, head, head_owner in conn.execute(SCAN_HEADS):
        sessions.add(sid)
        if head is None:
            continue
        if head_owner is None:
            problems.append(Problem(sid, "invalid-head", head, f"head {head} does not exist"))
        elif head_owner != sid:
            problems.append(
                Problem(sid, "invalid-head", head, f"head {head} belongs to {head_owner}")
            )
    damaged = tuple(sorted({p.session_id for p in problems}))
    return CheckReport(len(sessions), entries, tuple(problems), damaged)


def apply_quarantine(conn: sqlite3.Connection, report: CheckReport) -> None:
    reasons: dict[str, str] = {}
    for problem in report.problems:
        reasons.setdefault(
            problem.session_id, f"{problem.code} at {problem.entry_id}: {problem.detail}"
        )
    conn.execute("UPDATE sessions SET quarantine = NULL WHERE quarantine IS NOT NULL")
    conn.executemany(
        "UPDATE sessions SET quarantine = ? WHERE id = ?",
        [(reason, sid) for sid, reason in reasons.items()],
    )
