"""`SQLiteVectors`: the semantic leg's entry vectors in plain tables (VectorStore).

Tables from the `entry_vectors` migration (sql/0021_entry_vectors.sql). An
append writes nothing here: when the full-text catch-up indexes a chat's
entries it moves the chat's activity span, and a trigger notes the chat in
`vector_pending`. `pending` reads the noted chats' index rows above their
`vector_progress` mark (a rowid range scan of the FTS table, which keeps the
indexed text), `put` stores the vectors and moves the marks in one write
transaction, and un-notes a chat only when no index row is left above its
mark (so an entry indexed between the two is never lost).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Final

from ..base import ChatKey, EntryKey
from ..base.vectors import Pending
from .database import Database
from .search.schema import SEQUENCE_MASK, SESSION_SHIFT

NOTED = (
    "SELECT p.num, coalesce(g.upto, -1) FROM vector_pending p "
    "LEFT JOIN vector_progress g ON g.num = p.num ORDER BY p.num LIMIT ?"
)
# Vectors are of what was said: a tool-only row (NULL text beside a tool field,
# store/sqlite/search/catchup.py) has none.
SAID = "(text IS NOT NULL OR tool IS NULL)"
ROWS = (
    "SELECT rowid, coalesce(text, '') FROM session_entry_fts "
    f"WHERE rowid BETWEEN ? AND ? AND {SAID} ORDER BY rowid LIMIT ?"
)
# Under another model every chat is pending (the first put re-notes them all).
EVERY = "SELECT num, -1 FROM search_sessions ORDER BY num LIMIT ?"
MODEL = "SELECT model FROM vector_model"
SET_MODEL = "INSERT OR REPLACE INTO vector_model(one, model) VALUES (1, ?)"
INSERT = "INSERT OR IGNORE INTO entry_vectors(entry, vector) VALUES (?, ?)"
PROGRESS = (
    "INSERT INTO vector_progress(num, upto) VALUES (?, ?) "
    "ON CONFLICT(num) DO UPDATE SET upto = max(upto, excluded.upto)"
)
LEFT = f"SELECT 1 FROM session_entry_fts WHERE rowid BETWEEN ? AND ? AND {SAID} LIMIT 1"
UPTO = "SELECT upto FROM vector_progress WHERE num = ?"
# Index rows of the noted chats above their marks (one rowid range of the FTS
# table per chat).
BACKLOG = f"""
SELECT count(*) FROM vector_pending p LEFT JOIN vector_progress g ON g.num = p.num
JOIN session_entry_fts f ON f.rowid
  BETWEEN max(coalesce(g.upto + 1, 0), p.num << {SESSION_SHIFT})
  AND (p.num << {SESSION_SHIFT}) + {SEQUENCE_MASK} AND (f.text IS NOT NULL OR f.tool IS NULL)
"""
UNNOTE = "DELETE FROM vector_pending WHERE num = ?"
# LIMIT -1 is SQLite's "no limit".
LOAD = "SELECT id, entry, vector FROM entry_vectors WHERE id > ? ORDER BY id LIMIT ?"
RENOTE = "INSERT OR IGNORE INTO vector_pending(num) SELECT num FROM search_sessions"
CHATS_AT_ONCE: Final = 256  # noted chats read per `pending` call


def _first(num: int) -> int:
    return num << SESSION_SHIFT


def _last(num: int) -> int:
    return (num << SESSION_SHIFT) + SEQUENCE_MASK


class SQLiteVectors:
    """The VectorStore of one SQLite store."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def _model(self, conn: sqlite3.Connection) -> str | None:
        row = conn.execute(MODEL).fetchone()
        return None if row is None else str(row[0])

    def pending(self, model: str, limit: int) -> Pending:
        rows: list[tuple[EntryKey, str]] = []
        idle: list[ChatKey] = []
        with self._db.read() as conn:
            stale = self._model(conn) not in (None, model)
            chats = conn.execute(EVERY if stale else NOTED, (CHATS_AT_ONCE,)).fetchall()
            for num, upto in chats:
                if len(rows) >= limit:
                    break
                start = max(upto + 1, _first(num))
                found = conn.execute(ROWS, (start, _last(num), limit - len(rows))).fetchall()
                if not found:
                    idle.append(num)
                rows.extend((int(key), str(text)) for key, text in found)
        return Pending(rows, idle)

    def put(
        self,
        model: str,
        vectors: Sequence[tuple[EntryKey, bytes]],
        done: Sequence[EntryKey],
        idle: Sequence[ChatKey] = (),
    ) -> None:
        with self._db.write() as conn:
            if self._model(conn) != model:
                if self._model(conn) is not None:
                    conn.execute("DELETE FROM entry_vectors")
                    conn.execute("DELETE FROM vector_progress")
                    conn.execute(RENOTE)
                conn.execute(SET_MODEL, (model,))
            conn.executemany(INSERT, vectors)
            highest: dict[int, int] = {}
            for key in done:
                num = key >> SESSION_SHIFT
                highest[num] = max(highest.get(num, -1), key)
            conn.executemany(PROGRESS, highest.items())
            for num in {key >> SESSION_SHIFT for key in done} | set(idle):
                self._maybe_unnote(conn, num)

    @staticmethod
    def _maybe_unnote(conn: sqlite3.Connection, num: int) -> None:
        row = conn.execute(UPTO, (num,)).fetchone()
        start = _first(num) if row is None else max(int(row[0]) + 1, _first(num))
        if conn.execute(LEFT, (start, _last(num))).fetchone() is None:
            conn.execute(UNNOTE, (num,))

    def load(
        self, model: str, after: int, limit: int | None = None
    ) -> tuple[int, list[tuple[EntryKey, bytes]]]:
        with self._db.read() as conn:
            if self._model(conn) != model:
                return 0, []
            rows = conn.execute(LOAD, (after, -1 if limit is None else limit)).fetchall()
        mark = rows[-1][0] if rows else after
        return int(mark), [(int(entry), bytes(vector)) for _, entry, vector in rows]

    def waiting(self) -> int:
        with self._db.read() as conn:
            return int(conn.execute("SELECT count(*) FROM vector_pending").fetchone()[0])

    def backlog(self) -> int:
        with self._db.read() as conn:
            return int(conn.execute(BACKLOG).fetchone()[0])

    def renote(self) -> None:
        with self._db.write() as conn:
            conn.execute(RENOTE)
