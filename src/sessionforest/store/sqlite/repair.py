"""Repair one damaged session without touching its history.

Repair only re-links: it recreates a session row whose entries remain, and
points a missing or broken head at the newest entry whose path to the root is
intact. No entry is ever written, changed or deleted. It ends with a fresh
check of the session, which alone decides whether the quarantine is released.
"""

from __future__ import annotations

import sqlite3

from ...errors import UnknownSession
from ...model import RepairAction, RepairReport, Unrepaired
from ...rules import integrity as rules
from . import integrity, paths

# Row, quarantine and head in one snapshot (inside repair's write transaction).
SESSION_STATE = """
SELECT EXISTS (SELECT 1 FROM sessions WHERE id = :sid),
       (SELECT quarantine FROM sessions WHERE id = :sid),
       EXISTS (SELECT 1 FROM session_heads WHERE session_id = :sid),
       h.active_entry_id, e.session_id
FROM (SELECT 1) LEFT JOIN session_heads h ON h.session_id = :sid
LEFT JOIN session_entries e ON e.id = h.active_entry_id
"""

# A row may come back over existing entries only quarantined (trigger
# sessions_no_adoption); the fresh check at the end of repair releases it.
RECREATE_SESSION = (
    "INSERT INTO sessions(id, title, harness, created_at, quarantine) VALUES (?, ?, '', ?, ?)"
)

SET_HEAD = """
INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, ?)
ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id,
                                      updated_at = excluded.updated_at
"""


def repair_session(conn: sqlite3.Connection, session_id: str, now: str) -> RepairReport:
    """Repair `session_id` inside the caller's write transaction."""
    has_row, quarantine, has_head_row, head, head_owner = conn.execute(
        SESSION_STATE, {"sid": session_id}
    ).fetchone()
    rows: list[rules.Row] = [
        (r[1], r[2], r[3], r[4], r[5])
        for r in conn.execute(integrity.SCAN_SESSION_ENTRIES, {"sid": session_id})
    ]
    if not has_row and not rows and not has_head_row:
        raise UnknownSession(session_id)
    fenced = quarantine is not None or not has_row
    actions: list[RepairAction] = []
    if not has_row:
        created = conn.execute(
            "SELECT created_at FROM session_entries WHERE session_id = ? ORDER BY sequence LIMIT 1",
            (session_id,),
        ).fetchone()
        created_at = created[0] if created is not None else now
        conn.execute(
            RECREATE_SESSION,
            (session_id, rules.RECOVERED_TITLE, created_at, "missing-session: being repaired"),
        )
        actions.append(rules.recreated(created_at))
    move = rules.head_move(session_id, head, head_owner, rows)
    if move is not None:
        conn.execute(SET_HEAD, (session_id, move[0], now))
        actions.append(move[1])
    if paths.problems(conn, session_id):
        conn.execute(paths.FORGET, (session_id,))
        actions.append(rules.FORGOT_PATH)
    report = integrity.scan(conn, session_id)
    unrepaired = tuple(
        Unrepaired(p, rules.WHY.get(p.code, "repair cannot fix this")) for p in report.problems
    )
    after = rules.reason(report.problems[0]) if report.problems else None
    conn.execute("UPDATE sessions SET quarantine = ? WHERE id = ?", (after, session_id))
    return RepairReport(session_id, tuple(actions), unrepaired, fenced and after is None, after)
