"""Bulk writes for importers and whole-session transfers: the PostgreSQL `BulkStore`.

The logic is store/sql/bulk.py's (`SQLBulk`); this module gives it
PostgreSQL's transactions (one per chat or restore, the session's row locked
for a chat), its batch insert (one statement of arrays, the searchable text
computed in Python, a duplicate id looked up first since no key spans
sessions) and its refusals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

from ...errors import ImportRejected, SessionExists
from ...model import CURRENT_SCHEMA_VERSION, ChatSpec, StoredEntry
from ..sql.bulk import BulkSQL, Locate, SQLBulk, SQLChatWriter, repeated
from ..sql.dialect import POSTGRES
from .database import Database
from .rows import BAD_PARENT, BRANCHES, OWNER, insert_entries, searchable_json
from .store import adoption_refused

BATCH = 1000
RECENT = 8192

# Ids of a batch stored anywhere (the only cross-session read of an import).
STORED_ROWS = (
    "SELECT id, parent_entry_id, kind, payload, context_visibility, created_at, session_id, "
    "sequence FROM session_entries WHERE id = ANY(%s)"
)
CLASH = "SELECT id, session_id, sequence FROM session_entries WHERE id = ANY(%s) LIMIT 1"
STATEMENTS = BulkSQL(POSTGRES, bad_parent=BAD_PARENT, branches=BRANCHES, lock=" FOR UPDATE OF s")


class PostgresBulk(SQLBulk["PostgresChatWriter"]):
    """The PostgreSQL `BulkStore` (see store/base/bulk.py)."""

    batch = BATCH

    def __init__(self, db: Database) -> None:
        self._db = db
        self._write = db.write
        self._read = db.read
        self._q = STATEMENTS

    def _insert_session_row(
        self, conn: psycopg.Connection[Any], row: tuple[Any, ...], session_id: str
    ) -> None:
        try:
            with conn.transaction():
                conn.execute(self._q.insert_session, row)
        except psycopg.errors.RaiseException as exc:
            raise adoption_refused(exc, session_id) from exc

    def _restore_session_row(
        self,
        conn: psycopg.Connection[Any],
        row: tuple[Any, ...],
        session_id: str,
        source: str,
        where: Locate,
    ) -> None:
        try:
            with conn.transaction():
                conn.execute(self._q.insert_session, row)
        except psycopg.errors.UniqueViolation as exc:
            raise SessionExists(session_id) from exc
        except psycopg.errors.RaiseException as exc:
            raise ImportRejected(
                source, where(0), f"session {session_id}: {exc}; run `forest repair {session_id}`"
            ) from exc

    def _begin_chat(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS import_confirmed (id TEXT PRIMARY KEY) "
            "ON COMMIT DELETE ROWS"
        )
        conn.execute("DELETE FROM import_confirmed")

    def _chat_writer(
        self, conn: psycopg.Connection[Any], spec: ChatSpec, source: Path, last: int, at: str
    ) -> PostgresChatWriter:
        return PostgresChatWriter(conn, self._q, spec, source, last, at, BATCH, RECENT)

    def _insert(
        self, conn: psycopg.Connection[Any], batch: list[StoredEntry], source: str, where: Locate
    ) -> None:
        """Insert `batch` (then empty it), refusing an id stored already: in another
        session (no key spans sessions: checked here) or twice in this one."""
        if not batch:
            return
        clash = conn.execute(CLASH, ([e.id for e in batch],)).fetchone()
        seen: dict[str, int] = {}
        for entry in batch:
            if clash is not None and entry.id == clash[0]:
                raise repeated(source, entry, clash[1:], where)
            if entry.id in seen:
                raise repeated(source, entry, (entry.session_id, seen[entry.id]), where)
            seen[entry.id] = entry.sequence
        insert_entries(conn, [(*e, *searchable_json(e.kind, e.payload)) for e in batch])
        batch.clear()


class PostgresChatWriter(SQLChatWriter):
    """The `ChatWriter` of `PostgresBulk.bulk_chat` (the checks are rules/imports.py's)."""

    def _confirmed_before(self, entry_id: str) -> bool:
        found = self._conn.execute("SELECT 1 FROM import_confirmed WHERE id = %s", (entry_id,))
        return found.fetchone() is not None

    def flush(self) -> None:
        if not self._batch:
            return
        rows = list(self._batch.values())
        self._batch.clear()
        found = self._conn.execute(STORED_ROWS, ([r.id for r in rows],)).fetchall()
        # An id in this session wins over the same id in another one.
        stored = {r[0]: r for r in sorted(found, key=lambda r: r[6] == self._spec.id)}
        fresh, confirmed = self._sorted(rows, stored)
        if confirmed:
            with self._conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO import_confirmed VALUES (%s) ON CONFLICT DO NOTHING",
                    [(i,) for i in confirmed],
                )
        sid = self._spec.id
        insert_entries(
            self._conn,
            [
                (row.id, sid, row.parent, sequence, CURRENT_SCHEMA_VERSION, row.kind, row.payload,
                 row.visibility, row.created_at, None, *searchable_json(row.kind, row.payload))
                for row, sequence in fresh
            ],
        )  # fmt: skip


__all__ = ["OWNER", "PostgresBulk", "PostgresChatWriter"]
