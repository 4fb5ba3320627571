"""Repair one damaged session without touching its history.

Repair only re-links: it recreates a session row whose entries remain, and
points a missing or broken head at the newest entry whose path to the root is
intact. No entry is ever written, changed or deleted. It ends with a fresh
check of the session, which alone decides whether the quarantine is released.
"""

from __future__ import annotations

import sqlite3

from ...errors import UnknownSession
from ...model import SUPPORTED_SCHEMA_VERSIONS, RepairAction, RepairReport, Unrepaired
from . import integrity

RECOVERED_TITLE = "(recovered session)"

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

IMMUTABLE = "entries are immutable: repair never re-links, rewrites or deletes one"

# Why each kind of problem outlives a repair.
WHY = {
    "orphan-parent": f"the entry's parent is gone; {IMMUTABLE}",
    "cross-session-parent": f"the entry's parent belongs to another session; {IMMUTABLE}",
    "cycle": f"the cycle is made of the entries' own parent links; {IMMUTABLE}",
    "sequence-gap": f"an entry was removed or renumbered behind the store's back; {IMMUTABLE}",
    "unsupported-version": (
        "written by a newer sessionforest (or damaged): only a sessionforest that reads "
        f"this version can check it; {IMMUTABLE}"
    ),
    "invalid-head": "no entry of this session has an intact path to the root to move the head to",
    "missing-head": "no entry of this session has an intact path to the root to move the head to",
}


def intact(rows: list[integrity.Row]) -> set[str]:
    """The entries whose path to the root is whole: every ancestor stored in this
    session, readable, and no cycle on the way."""
    links = {r[0]: (r[1], r[3]) for r in rows}  # id -> (parent, version)
    known: dict[str, bool] = {}
    for start in links:
        trail: list[str] = []
        on_trail: set[str] = set()
        node = start
        while True:
            if node in known:
                whole = known[node]
                break
            if node in on_trail:
                whole = False  # a cycle
                break
            parent, version = links[node]
            trail.append(node)
            on_trail.add(node)
            if version not in SUPPORTED_SCHEMA_VERSIONS:
                whole = False
                break
            if parent is None:
                whole = True
                break
            if parent not in links:  # missing, or another session's
                whole = False
                break
            node = parent
        for visited in trail:  # one chain: all share the verdict of its top
            known[visited] = whole
    return {entry_id for entry_id, whole in known.items() if whole}


def repair_session(conn: sqlite3.Connection, session_id: str, now: str) -> RepairReport:
    """Repair `session_id` inside the caller's write transaction."""
    has_row, quarantine, has_head_row, head, head_owner = conn.execute(
        SESSION_STATE, {"sid": session_id}
    ).fetchone()
    rows: list[integrity.Row] = [
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
            (session_id, RECOVERED_TITLE, created_at, "missing-session: being repaired"),
        )
        actions.append(
            RepairAction(
                "recreated-session-row",
                f"recreated the missing session row (title {RECOVERED_TITLE!r}, created "
                f"{created_at}); the old row's title, harness, directory, status and import "
                "source were lost with it and are left empty",
            )
        )
    if (head is None and rows) or (head is not None and head_owner != session_id):
        actions.extend(_move_head(conn, session_id, head, head_owner, rows, now))
    report = integrity.scan(conn, session_id)
    unrepaired = tuple(
        Unrepaired(p, WHY.get(p.code, "repair cannot fix this")) for p in report.problems
    )
    after = integrity.reason(report.problems[0]) if report.problems else None
    conn.execute("UPDATE sessions SET quarantine = ? WHERE id = ?", (after, session_id))
    return RepairReport(session_id, tuple(actions), unrepaired, fenced and after is None, after)


def _move_head(
    conn: sqlite3.Connection,
    session_id: str,
    head: str | None,
    head_owner: str | None,
    rows: list[integrity.Row],
    now: str,
) -> list[RepairAction]:
    """Point a missing or broken head at the newest entry with an intact path."""
    if head is None:
        was = "the session had entries but no head"
    elif head_owner is None:
        was = f"the head pointed at {head}, which does not exist"
    else:
        was = f"the head pointed at {head}, an entry of session {head_owner}"
    if not rows:
        conn.execute(SET_HEAD, (session_id, None, now))
        return [
            RepairAction(
                "cleared-head", f"{was}; the session has no entries, so the head now points at none"
            )
        ]
    whole = intact(rows)
    target = max((r for r in rows if r[0] in whole), key=lambda r: r[2], default=None)
    if target is None:
        return []  # the fresh check reports the head, WHY says why it stayed
    conn.execute(SET_HEAD, (session_id, target[0], now))
    code = "set-head" if head is None else "moved-head"
    return [
        RepairAction(
            code,
            f"{was}; set it to {target[0]} (sequence {target[2]}), the newest entry "
            "whose path to the root is intact",
        )
    ]
