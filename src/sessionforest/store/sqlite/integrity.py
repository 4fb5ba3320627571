"""The integrity report: find damaged session trees and fence them off.

One streaming pass over all entries (grouped by session), one over heads and
session rows. Damage in one session never stops the scan of another. The same
scan, narrowed to one session, is the fresh check `repair` ends with.
"""

from __future__ import annotations

import sqlite3

from ...errors import SessionDamaged
from ...model import CheckReport, Problem
from ...rules import integrity as rules
from . import paths
from .migrations import ADOPTION_REFUSED

# The readable versions as an SQL list (bulk.py refuses to write below others).
READABLE = rules.READABLE

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


def scan(conn: sqlite3.Connection, session_id: str | None = None) -> CheckReport:
    """Check every session (or only `session_id`); reads only."""
    params = {"sid": session_id}
    problems: list[Problem] = []
    counts: dict[str, int] = {}  # entries per session
    entries = 0
    group: list[rules.Row] = []
    current: str | None = None
    query = SCAN_ENTRIES if session_id is None else SCAN_SESSION_ENTRIES
    for sid, entry_id, parent, sequence, version, parent_owner in conn.execute(query, params):
        entries += 1
        if sid != current:
            if current is not None:
                problems.extend(rules.session_problems(current, group))
                counts[current] = len(group)
            current, group = sid, []
        group.append((entry_id, parent, sequence, version, parent_owner))
    if current is not None:
        problems.extend(rules.session_problems(current, group))
        counts[current] = len(group)
    query = SCAN_HEADS if session_id is None else SCAN_SESSION_HEADS
    heads = {
        sid: (bool(has_row), head, owner)
        for sid, has_row, head, owner in conn.execute(query, params)
    }
    problems.extend(rules.head_problems(heads, counts))
    problems.extend(paths.problems(conn, session_id))
    return rules.report(problems, len(counts.keys() | heads.keys()), entries)


def apply_quarantine(conn: sqlite3.Connection, report: CheckReport) -> None:
    """Fence off every damaged session and release every other one.

    A session whose row is gone has nowhere to hold a quarantine: its missing
    row already fences it (reads and appends raise UnknownSession, search
    joins on session rows), and the sessions_no_adoption trigger lets a row
    come back only quarantined, which `repair` then checks afresh.
    """
    reasons: dict[str, str] = {}
    for problem in report.problems:
        reasons.setdefault(problem.session_id, rules.reason(problem))
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
