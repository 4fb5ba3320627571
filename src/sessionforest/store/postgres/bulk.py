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
from ...model import ChatSpec, StoredEntry
from ..sql.bulk import BulkSQL, Locate, SQLBulk, SQLChatWriter, Stage, repeated
from ..sql.dialect import POSTGRES, Row
from .database import Database
from .rows import BAD_PARENT, BRANCHES, OWNER, copy_entries, insert_entries, searchable_json
from .store import insert_session

BATCH = 1000
RECENT = 8192
# A restore's rows are staged and written by COPY at most this many (or this many
# payload characters) at a time: few statements, memory still bounded.
COPY_ROWS = 20_000
COPY_CHARS = 64 << 20

# Ids of a batch stored anywhere (the only cross-session read of an import).
STORED_ROWS = """
SELECT x.id, x.parent_entry_id, x.kind, x.payload, x.context_visibility, x.created_at,
       x.session_id, x.sequence
FROM unnest(%s::text[]) AS w(id)
CROSS JOIN LATERAL (SELECT * FROM session_entries e WHERE e.id = w.id) x
"""
# One index probe per id: `id = ANY(...)` over a table that grew by a bulk load not
# yet analysed is planned as a sequential scan (each probe of a restore then read
# the whole table).
CLASH = """
SELECT x.id, x.session_id, x.sequence FROM unnest(%s::text[]) AS w(id)
CROSS JOIN LATERAL (SELECT id, session_id, sequence FROM session_entries e
                    WHERE e.id = w.id LIMIT 1) x
LIMIT 1
"""
STATEMENTS = BulkSQL(POSTGRES, bad_parent=BAD_PARENT, branches=BRANCHES, lock=" FOR UPDATE OF s")


class PostgresBulk(SQLBulk[psycopg.Connection[Row], "PostgresChatWriter"]):
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
        insert_session(conn, self._q.insert_session, row, session_id)

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
        self,
        conn: psycopg.Connection[Any],
        batch: list[StoredEntry],
        source: str,
        where: Locate,
        stage: Stage,
    ) -> None:
        """Stage `batch` (then empty it) for one COPY, refusing an id stored or staged
        already: in another session (no key spans sessions: checked here) or twice in
        this one."""
        if not batch:
            return
        clash = conn.execute(CLASH, ([e.id for e in batch],)).fetchone()
        staged = stage.ids
        for entry in batch:
            if clash is not None and entry.id == clash[0]:
                raise repeated(source, entry, clash[1:], where)
            owner = staged.get(entry.id)
            if owner is not None:
                raise repeated(source, entry, owner, where)
            staged[entry.id] = (entry.session_id, entry.sequence)
            stage.rows.append((*entry, *searchable_json(entry.kind, entry.payload)))
            stage.size += len(entry.payload)
        batch.clear()
        if len(stage.rows) >= COPY_ROWS or stage.size >= COPY_CHARS:
            self._flush(conn, stage)

    def _flush(self, conn: psycopg.Connection[Any], stage: Stage) -> None:
        """Write the staged rows with one COPY: the per-row text trigger and the
        statement-level statistics and digest trigger run as for an INSERT."""
        copy_entries(conn, stage.rows)
        stage.clear()


class PostgresChatWriter(SQLChatWriter[psycopg.Connection[Row]]):
    """The `ChatWriter` of `PostgresBulk.bulk_chat` (the checks are rules/imports.py's)."""

    def _stored_rows(self, ids: list[str]) -> dict[str, tuple[Any, ...]]:
        found = self._conn.execute(STORED_ROWS, (ids,)).fetchall()
        # An id in this session wins over the same id in another one.
        return {r[0]: r for r in sorted(found, key=lambda r: r[6] == self._spec.id)}

    def _confirm(self, ids: list[str]) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO import_confirmed VALUES (%s) ON CONFLICT DO NOTHING",
                [(i,) for i in ids],
            )

    def _insert_rows(self, rows: list[tuple[Any, ...]]) -> None:
        insert_entries(self._conn, [(*r, *searchable_json(r[5], r[6])) for r in rows])


__all__ = ["OWNER", "PostgresBulk", "PostgresChatWriter"]
