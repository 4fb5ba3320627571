"""Hand-offs (store/base/handoffs.py) on either SQL backend: one table, one row a transcript."""

from __future__ import annotations

from typing import Any

from ..base.handoffs import Handoff
from .dialect import Dialect

COLUMNS = "format, source_id, session_id, entry_id, path, target, plan, created_at"
ONE = f"SELECT {COLUMNS} FROM handoffs WHERE format = ? AND source_id = ?"
# created_at, then the key: two hand-offs written within one clock tick keep one order.
OF_SESSION = (
    f"SELECT {COLUMNS} FROM handoffs WHERE session_id = ? ORDER BY created_at, format, source_id"
)
KEEP = f"""
INSERT INTO handoffs({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (format, source_id) DO UPDATE SET session_id = excluded.session_id,
    entry_id = excluded.entry_id, path = excluded.path, target = excluded.target,
    plan = excluded.plan, created_at = excluded.created_at
"""


class SQLHandoffs:
    """`HandoffStore` over a backend's `Database` (read() and write() transactions)."""

    def __init__(self, db: Any, dialect: Dialect) -> None:
        self._db = db
        self._one = dialect.sql(ONE)
        self._of_session = dialect.sql(OF_SESSION)
        self._keep = dialect.sql(KEEP)

    def handoff(self, fmt: str, source_id: str) -> Handoff | None:
        with self._db.read() as conn:
            row = conn.execute(self._one, (fmt, source_id)).fetchone()
        return None if row is None else Handoff(*row)

    def handoffs(self, session_id: str) -> list[Handoff]:
        with self._db.read() as conn:
            rows = conn.execute(self._of_session, (session_id,)).fetchall()
        return [Handoff(*row) for row in rows]

    def keep_handoff(self, handoff: Handoff) -> None:
        h = handoff
        row = (h.format, h.source_id, h.session_id, h.entry_id, h.path, h.target, h.plan,
               h.created_at)  # fmt: skip
        with self._db.write() as conn:
            conn.execute(self._keep, row)
