"""`check` and `repair` on PostgreSQL: the SQL that streams what rules/integrity.py judges.

One pass over all entries (grouped by session, each parent's owner found by
its key within the session, else by id anywhere), one over heads and session
rows. Repair only re-links (a session row, a head), under the session's lock.
"""

from __future__ import annotations

from typing import Any

import psycopg

from ...errors import UnknownSession
from ...model import CheckReport, Problem, RepairAction, RepairReport, Unrepaired
from ...rules import integrity as rules
from .rows import UPSERT_HEAD

_SCAN_ENTRIES = """
SELECT e.session_id, e.id, e.parent_entry_id, e.sequence, e.semantic_schema_version,
       coalesce(p.session_id, o.session_id)
FROM session_entries e
LEFT JOIN session_entries p ON p.session_id = e.session_id AND p.id = e.parent_entry_id
LEFT JOIN LATERAL (SELECT session_id FROM session_entries o
                   WHERE p.id IS NULL AND o.id = e.parent_entry_id LIMIT 1) o ON true
{where}
ORDER BY e.session_id, e.sequence
"""
SCAN_ENTRIES = _SCAN_ENTRIES.format(where="")
SCAN_SESSION_ENTRIES = _SCAN_ENTRIES.format(where="WHERE e.session_id = %(sid)s")

# A head's owner: this session's entry by key, else any session's by id.
_HEAD_OWNER = """(SELECT coalesce(
    (SELECT session_id FROM session_entries WHERE session_id = {sid} AND id = h.active_entry_id),
    (SELECT session_id FROM session_entries WHERE id = h.active_entry_id LIMIT 1)))"""
_SCAN_HEADS = f"""
SELECT s.id, 1, h.active_entry_id, {_HEAD_OWNER.format(sid="s.id")}
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id
{{where_session}}
UNION ALL
SELECT h.session_id, 0, h.active_entry_id, {_HEAD_OWNER.format(sid="h.session_id")}
FROM session_heads h
WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = h.session_id) {{and_head}}
"""
SCAN_HEADS = _SCAN_HEADS.format(where_session="", and_head="")
SCAN_SESSION_HEADS = _SCAN_HEADS.format(
    where_session="WHERE s.id = %(sid)s", and_head="AND h.session_id = %(sid)s"
)


def scan(conn: psycopg.Connection[Any], session_id: str | None = None) -> CheckReport:
    """Check every session (or only `session_id`); reads only."""
    params = {"sid": session_id}
    problems: list[Problem] = []
    counts: dict[str, int] = {}
    entries = 0
    group: list[rules.Row] = []
    current: str | None = None
    query = SCAN_ENTRIES if session_id is None else SCAN_SESSION_ENTRIES
    with conn.cursor() as cur:
        cur.execute(query, params)
        for sid, entry_id, parent, sequence, version, parent_owner in cur:
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
    return rules.report(problems, len(counts.keys() | heads.keys()), entries)


def apply_quarantine(conn: psycopg.Connection[Any], report: CheckReport) -> None:
    """Fence off every damaged session and release every other one (as SQLite's)."""
    reasons: dict[str, str] = {}
    for problem in report.problems:
        reasons.setdefault(problem.session_id, rules.reason(problem))
    conn.execute("UPDATE sessions SET quarantine = NULL WHERE quarantine IS NOT NULL")
    with conn.cursor() as cur:
        cur.executemany(
            "UPDATE sessions SET quarantine = %s WHERE id = %s",
            [(text, sid) for sid, text in reasons.items()],
        )


SESSION_STATE = """
SELECT EXISTS (SELECT 1 FROM sessions WHERE id = %(sid)s),
       (SELECT quarantine FROM sessions WHERE id = %(sid)s),
       EXISTS (SELECT 1 FROM session_heads WHERE session_id = %(sid)s),
       (SELECT active_entry_id FROM session_heads WHERE session_id = %(sid)s),
       (SELECT coalesce(
           (SELECT e.session_id FROM session_entries e WHERE e.session_id = %(sid)s
              AND e.id = h.active_entry_id),
           (SELECT e.session_id FROM session_entries e WHERE e.id = h.active_entry_id LIMIT 1))
        FROM session_heads h WHERE h.session_id = %(sid)s)
"""
RECREATE_SESSION = (
    "INSERT INTO sessions(id, title, harness, created_at, quarantine) VALUES (%s, %s, '', %s, %s)"
)


def repair_session(conn: psycopg.Connection[Any], session_id: str, now: str) -> RepairReport:
    """Repair `session_id` inside the caller's write transaction (see store/sqlite/repair.py)."""
    conn.execute("SELECT 1 FROM sessions WHERE id = %s FOR UPDATE", (session_id,))
    state = conn.execute(SESSION_STATE, {"sid": session_id}).fetchone()
    assert state is not None
    has_row, quarantine, has_head_row, head, head_owner = state
    rows: list[rules.Row] = [
        (r[1], r[2], r[3], r[4], r[5])
        for r in conn.execute(SCAN_SESSION_ENTRIES, {"sid": session_id})
    ]
    if not has_row and not rows and not has_head_row:
        raise UnknownSession(session_id)
    fenced = quarantine is not None or not has_row
    actions: list[RepairAction] = []
    if not has_row:
        created = conn.execute(
            "SELECT created_at FROM session_entries WHERE session_id = %s "
            "ORDER BY sequence LIMIT 1",
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
        conn.execute(UPSERT_HEAD, (session_id, move[0], now))
        actions.append(move[1])
    report = scan(conn, session_id)
    unrepaired = tuple(
        Unrepaired(p, rules.WHY.get(p.code, "repair cannot fix this")) for p in report.problems
    )
    after = rules.reason(report.problems[0]) if report.problems else None
    conn.execute("UPDATE sessions SET quarantine = %s WHERE id = %s", (after, session_id))
    return RepairReport(session_id, tuple(actions), unrepaired, fenced and after is None, after)
