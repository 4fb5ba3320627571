"""`check` and `repair` on PostgreSQL: the scanning SQL for store/sql/integrity.py.

Entries are keyed by (session_id, id), so a parent's (and a head's) owner is
looked up by its key within the session first, else by id anywhere (the
damage case). A repair takes the session's row lock first.
"""

from __future__ import annotations

from typing import Any

import psycopg

from ..sql.dialect import POSTGRES
from ..sql.integrity import Integrity

SCAN_ENTRIES = """
SELECT e.session_id, e.id, e.parent_entry_id, e.sequence, e.semantic_schema_version,
       coalesce(p.session_id, o.session_id), e.created_at
FROM session_entries e
LEFT JOIN session_entries p ON p.session_id = e.session_id AND p.id = e.parent_entry_id
LEFT JOIN LATERAL (SELECT session_id FROM session_entries o
                   WHERE p.id IS NULL AND o.id = e.parent_entry_id LIMIT 1) o ON true
{where}
ORDER BY e.session_id, e.sequence
"""

# A head's owner: this session's entry by key, else any session's by id.
_HEAD_OWNER = """(SELECT coalesce(
    (SELECT session_id FROM session_entries WHERE session_id = {sid} AND id = h.active_entry_id),
    (SELECT session_id FROM session_entries WHERE id = h.active_entry_id LIMIT 1)))"""
SCAN_HEADS = f"""
SELECT s.id, 1, h.active_entry_id, {_HEAD_OWNER.format(sid="s.id")}
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id
{{where_session}}
UNION ALL
SELECT h.session_id, 0, h.active_entry_id, {_HEAD_OWNER.format(sid="h.session_id")}
FROM session_heads h
WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = h.session_id) {{and_head}}
"""

SESSION_STATE = """
SELECT EXISTS (SELECT 1 FROM sessions WHERE id = :sid),
       (SELECT quarantine FROM sessions WHERE id = :sid),
       EXISTS (SELECT 1 FROM session_heads WHERE session_id = :sid),
       (SELECT active_entry_id FROM session_heads WHERE session_id = :sid),
       (SELECT coalesce(
           (SELECT e.session_id FROM session_entries e WHERE e.session_id = :sid
              AND e.id = h.active_entry_id),
           (SELECT e.session_id FROM session_entries e WHERE e.id = h.active_entry_id LIMIT 1))
        FROM session_heads h WHERE h.session_id = :sid)
"""

INTEGRITY: Integrity[psycopg.Connection[Any]] = Integrity(
    POSTGRES,
    entries=SCAN_ENTRIES,
    heads=SCAN_HEADS,
    state=SESSION_STATE,
    lock="SELECT 1 FROM sessions WHERE id = ? FOR UPDATE",
)
