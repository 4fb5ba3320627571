"""`PostgresVectors`: the semantic leg's entry vectors as bytea rows (VectorStore).

pgvector is not installed on the service this project runs against, so the
vectors are float32 bytes searched in Python (search/semantic.py), as on
SQLite. Tables from the `entry_vectors` migration (schema.py), keyed by
session; an append only notes its session in `vector_pending` (a statement
trigger), `pending` reads the noted sessions' searchable entries above their
`vector_progress` mark, `put` stores vectors and marks in one transaction and
un-notes a session only when nothing of it is left above its mark. Keys are
search's: sessions.num << 32 + sequence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import psycopg

from ..base import ChatKey, EntryKey
from ..base.vectors import Pending
from .database import Database

SESSION_SHIFT: Final = 32
SEQUENCE_MASK: Final = (1 << SESSION_SHIFT) - 1
CHATS_AT_ONCE: Final = 256

NOTED = """
SELECT p.session_id, s.num, coalesce(g.upto, 0) FROM vector_pending p
JOIN sessions s ON s.id = p.session_id
LEFT JOIN vector_progress g ON g.session_id = p.session_id
ORDER BY s.num LIMIT %s
"""
ROWS = """
SELECT sequence, text FROM session_entries
WHERE session_id = %s AND sequence > %s AND text IS NOT NULL ORDER BY sequence LIMIT %s
"""
# Under another model every chat is pending (the first put re-notes them all).
EVERY = "SELECT s.id, s.num, 0 FROM sessions s ORDER BY s.num LIMIT %s"
MODEL = "SELECT model FROM vector_model"
SET_MODEL = """INSERT INTO vector_model(one, model) VALUES (1, %s)
ON CONFLICT (one) DO UPDATE SET model = excluded.model"""
IDS = "SELECT num, id FROM sessions WHERE num = ANY(%s)"
INSERT = """INSERT INTO entry_vectors(session_id, sequence, vector) VALUES (%s, %s, %s)
ON CONFLICT DO NOTHING"""
PROGRESS = """INSERT INTO vector_progress(session_id, upto) VALUES (%s, %s)
ON CONFLICT (session_id) DO UPDATE SET upto = GREATEST(vector_progress.upto, excluded.upto)"""
LEFT = """SELECT 1 FROM session_entries WHERE session_id = %s AND text IS NOT NULL
AND sequence > coalesce((SELECT upto FROM vector_progress WHERE session_id = %s), 0) LIMIT 1"""
BACKLOG = """SELECT count(*) FROM vector_pending p
JOIN session_entries e ON e.session_id = p.session_id AND e.text IS NOT NULL
AND e.sequence > coalesce((SELECT upto FROM vector_progress g
                           WHERE g.session_id = p.session_id), 0)"""
UNNOTE = "DELETE FROM vector_pending WHERE session_id = %s"
LOAD = """SELECT v.id, s.num, v.sequence, v.vector FROM entry_vectors v
JOIN sessions s ON s.id = v.session_id WHERE v.id > %s ORDER BY v.id LIMIT %s"""
RENOTE = """INSERT INTO vector_pending(session_id)
SELECT DISTINCT session_id FROM session_entries WHERE text IS NOT NULL ON CONFLICT DO NOTHING"""


def _model(conn: psycopg.Connection[Any]) -> str | None:
    row = conn.execute(MODEL).fetchone()
    return None if row is None else str(row[0])


class PostgresVectors:
    """The VectorStore of one PostgreSQL store."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def pending(self, model: str, limit: int) -> Pending:
        rows: list[tuple[EntryKey, str]] = []
        idle: list[ChatKey] = []
        with self._db.read() as conn:
            stale = _model(conn) not in (None, model)
            chats = conn.execute(EVERY if stale else NOTED, (CHATS_AT_ONCE,)).fetchall()
            for sid, num, upto in chats:
                if len(rows) >= limit:
                    break
                found = conn.execute(ROWS, (sid, upto, limit - len(rows)))
                got = [((num << SESSION_SHIFT) + seq, text or "") for seq, text in found]
                if not got:
                    idle.append(int(num))
                rows.extend(got)
        return Pending(rows, idle)

    def put(
        self,
        model: str,
        vectors: Sequence[tuple[EntryKey, bytes]],
        done: Sequence[EntryKey],
        idle: Sequence[ChatKey] = (),
    ) -> None:
        def work(conn: psycopg.Connection[Any]) -> None:
            current = _model(conn)
            if current != model:
                if current is not None:
                    conn.execute("DELETE FROM entry_vectors")
                    conn.execute("DELETE FROM vector_progress")
                    conn.execute(RENOTE)
                conn.execute(SET_MODEL, (model,))
            nums = sorted({key >> SESSION_SHIFT for key in (*done, *(k for k, _ in vectors))})
            ids = dict(conn.execute(IDS, (list({*nums, *idle}),)).fetchall())
            with conn.cursor() as cur:
                cur.executemany(
                    INSERT,
                    [
                        (ids[key >> SESSION_SHIFT], key & SEQUENCE_MASK, vector)
                        for key, vector in vectors
                        if key >> SESSION_SHIFT in ids
                    ],
                )
            highest: dict[int, int] = {}
            for key in done:
                num = key >> SESSION_SHIFT
                highest[num] = max(highest.get(num, 0), key & SEQUENCE_MASK)
            for num in sorted(highest):
                if num in ids:
                    conn.execute(PROGRESS, (ids[num], highest[num]))
            for num in sorted({*highest, *idle}):
                if num in ids and conn.execute(LEFT, (ids[num], ids[num])).fetchone() is None:
                    conn.execute(UNNOTE, (ids[num],))

        self._db.retrying(work)

    def load(
        self, model: str, after: int, limit: int | None = None
    ) -> tuple[int, list[tuple[EntryKey, bytes]]]:
        with self._db.read() as conn:
            if _model(conn) != model:
                return 0, []
            rows = conn.execute(LOAD, (after, limit)).fetchall()  # LIMIT NULL: all
        mark = rows[-1][0] if rows else after
        return int(mark), [((num << SESSION_SHIFT) + seq, bytes(v)) for _, num, seq, v in rows]

    def waiting(self) -> int:
        with self._db.read() as conn:
            row = conn.execute("SELECT count(*) FROM vector_pending").fetchone()
        return int(row[0]) if row else 0

    def backlog(self) -> int:
        with self._db.read() as conn:
            row = conn.execute(BACKLOG).fetchone()
        return int(row[0]) if row else 0

    def renote(self) -> None:
        self._db.execute(RENOTE)
