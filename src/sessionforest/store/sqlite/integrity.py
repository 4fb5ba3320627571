"""`check` and `repair` on SQLite: the scanning SQL for store/sql/integrity.py.

Entries are keyed by id alone, so a parent's (and a head's) owner is one
primary-key join. The materialised active paths (paths.py) and each entry's
stored parent sequence (migrations.entry_branch_index) are checked against the
parent links too, and the path chunks (chunks.py) against the entries and their
links; a repair forgets a wrong path and the session's chunks (an entry row
cannot change).
"""

from __future__ import annotations

import sqlite3

from ...model import Problem
from ...rules import integrity as rules
from ..sql import integrity as shared
from ..sql.dialect import SQLITE
from . import chunks, paths
from .migrations import ADOPTION_REFUSED

# The readable versions as an SQL list (bulk.py refuses to write below others).
READABLE = rules.READABLE

# Every entry with its parent's owner; ordered so each session arrives as one group.
SCAN_ENTRIES = """
SELECT e.session_id, e.id, e.parent_entry_id, e.sequence, e.semantic_schema_version,
       p.session_id, e.created_at
FROM session_entries e LEFT JOIN session_entries p ON p.id = e.parent_entry_id
{where}
ORDER BY e.session_id, e.sequence
"""

# Every session row with its head, then every head row whose session row is
# gone (has_row 0): a deleted session row must not hide what it left behind.
SCAN_HEADS = """
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

# Row, quarantine and head in one snapshot (inside repair's write transaction).
SESSION_STATE = """
SELECT EXISTS (SELECT 1 FROM sessions WHERE id = :sid),
       (SELECT quarantine FROM sessions WHERE id = :sid),
       EXISTS (SELECT 1 FROM session_heads WHERE session_id = :sid),
       h.active_entry_id, e.session_id
FROM (SELECT 1) LEFT JOIN session_heads h ON h.session_id = :sid
LEFT JOIN session_entries e ON e.id = h.active_entry_id
"""

# Entries whose stored parent sequence (migrations.entry_branch_index) is not their
# parent's: children and tips would look for them in the wrong index.
PARENT_SEQUENCE = """
SELECT c.session_id, c.id, c.parent_sequence, p.sequence FROM session_entries c
JOIN session_entries p ON p.id = c.parent_entry_id
WHERE c.parent_sequence IS NOT NULL AND c.parent_sequence IS NOT p.sequence {where}
ORDER BY c.session_id, c.sequence
"""
PARENT_SEQUENCE_ALL = PARENT_SEQUENCE.format(where="")
PARENT_SEQUENCE_SESSION = PARENT_SEQUENCE.format(where="AND c.session_id = :sid")


def problems(conn: sqlite3.Connection, session_id: str | None = None) -> list[Problem]:
    """What SQLite stores beyond the shared rows, checked against the parent links:
    the materialised paths (paths.py) and each entry's parent sequence."""
    found = paths.problems(conn, session_id) + chunks.problems(conn, session_id)
    query, args = (
        (PARENT_SEQUENCE_ALL, {})
        if session_id is None
        else (PARENT_SEQUENCE_SESSION, {"sid": session_id})
    )
    for sid, entry_id, stored, actual in conn.execute(query, args):
        found.append(
            Problem(
                sid,
                "parent-sequence-mismatch",
                entry_id,
                f"the entry names its parent's sequence as {stored}, but the parent has {actual}",
            )
        )
    return found


INTEGRITY = shared.Integrity(
    SQLITE,
    entries=SCAN_ENTRIES,
    heads=SCAN_HEADS,
    state=SESSION_STATE,
    extra=problems,
    forget=(paths.FORGET, chunks.FORGET),
)


def adoption_refused(exc: sqlite3.IntegrityError, session_id: str) -> Exception | None:
    """The error for a new session row refused by sessions_no_adoption, else None."""
    return shared.adoption_refused(session_id) if ADOPTION_REFUSED in str(exc) else None


def insert_session(
    conn: sqlite3.Connection, sql: str, values: tuple[object, ...], session_id: str
) -> None:
    """Insert a session row; a refusal by sessions_no_adoption leaves as SessionDamaged."""
    try:
        conn.execute(sql, values)
    except sqlite3.IntegrityError as exc:
        refused = adoption_refused(exc, session_id)
        if refused is None:
            raise
        raise refused from exc
