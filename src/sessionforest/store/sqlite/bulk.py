"""Bulk writes for importers and whole-session transfers: the SQLite `BulkStore`.

The logic is store/sql/bulk.py's (`SQLBulk`); this module gives it SQLite's
transactions (one BEGIN IMMEDIATE per chat or restore), its batch insert
(executemany, a unique-id failure traced to the row that caused it), the
catch-up of the search index at the end of a chat or restore
(derived.py), and large payloads written at once instead of kept
waiting in memory.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ...errors import ImportRejected
from ...model import ChatSpec, StoredEntry
from ...rules.imports import QueuedRow
from ..sql.bulk import BulkSQL, Locate, SQLBulk, SQLChatWriter, Stage, repeated
from ..sql.dialect import SQLITE
from . import integrity
from .connection import driver_error
from .rows import BAD_PARENT, BRANCHES, insert_entries
from .search import large

BATCH = 1000
RECENT = 8192  # ids remembered in memory for parent checks; older ones are asked of SQLite

Transaction = Callable[[], AbstractContextManager[sqlite3.Connection]]

OWNER = "SELECT session_id, sequence FROM session_entries WHERE id = ?"
STATEMENTS = BulkSQL(SQLITE, bad_parent=BAD_PARENT, branches=BRANCHES)


class SQLiteBulk(SQLBulk[sqlite3.Connection, "SQLiteChatWriter"]):
    """The SQLite `BulkStore`: importers' per-chat writes and exact session transfers.

    `write()` gives the writer connection inside one BEGIN IMMEDIATE
    transaction (rolled back, driver errors converted, on any error); `read()`
    a connection to read from. `path` names the store in converted errors.
    """

    batch = 2000

    def __init__(
        self,
        path: Path,
        write: Transaction,
        read: Transaction,
        index: Callable[[sqlite3.Connection], None],
    ) -> None:
        self._path = path
        self._index = index  # derived.Derived.index_in
        self._write = write
        self._plain_read = read
        self._q = STATEMENTS

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read connection; driver errors leave as the store's own errors."""
        try:
            with self._plain_read() as conn:
                yield conn
        except sqlite3.Error as exc:
            raise driver_error(self._path, exc) from exc

    def _insert_session_row(
        self, conn: sqlite3.Connection, row: tuple[Any, ...], session_id: str
    ) -> None:
        integrity.insert_session(conn, self._q.insert_session, row, session_id)

    def _restore_session_row(
        self,
        conn: sqlite3.Connection,
        row: tuple[Any, ...],
        session_id: str,
        source: str,
        where: Locate,
    ) -> None:
        try:
            conn.execute(self._q.insert_session, row)
        except sqlite3.IntegrityError as exc:
            # Refused by the sessions_no_adoption trigger: a deleted row's entries remain.
            raise ImportRejected(
                source, where(0), f"session {session_id}: {exc}; run `forest repair {session_id}`"
            ) from exc

    def _begin_chat(self, conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS import_confirmed (id TEXT PRIMARY KEY)")
        conn.execute("DELETE FROM temp.import_confirmed")

    def _chat_writer(
        self, conn: sqlite3.Connection, spec: ChatSpec, source: Path, last: int, at: str
    ) -> SQLiteChatWriter:
        return SQLiteChatWriter(conn, self._q, spec, source, last, at, BATCH, RECENT)

    def _goes_at_once(self, entry: StoredEntry) -> bool:
        return large.is_large(entry.payload)  # a large row goes at once

    def _indexed(self, conn: sqlite3.Connection) -> None:
        self._index(conn)

    def _insert(
        self,
        conn: sqlite3.Connection,
        batch: list[StoredEntry],
        source: str,
        where: Locate,
        stage: Stage,
    ) -> None:
        if not batch:
            return
        try:
            insert_entries(conn, batch)
        except sqlite3.IntegrityError as exc:
            raise _duplicate(conn, batch, source, where) from exc


def _duplicate(
    conn: sqlite3.Connection, batch: list[StoredEntry], source: str, where: Locate
) -> ImportRejected:
    """The error for the row of `batch` whose insert failed on a unique id.

    The rows before it went in (each at its own sequence) and it did not: it
    is the first whose id is stored elsewhere, by another session or at an
    earlier sequence of this one.
    """
    for entry in batch:
        owner = conn.execute(OWNER, (entry.id,)).fetchone()
        if owner is None or tuple(owner) == (entry.session_id, entry.sequence):
            continue
        return repeated(source, entry, owner, where)
    raise AssertionError("unique constraint failed but no duplicate id was found")


class SQLiteChatWriter(SQLChatWriter[sqlite3.Connection]):
    """The `ChatWriter` of `SQLiteBulk.bulk_chat` (the checks are rules/imports.py's)."""

    def _flush_now(self, row: QueuedRow) -> bool:
        # A large row goes at once: its payload is not kept waiting in memory. Its
        # text is indexed with the others by the catch-up at the end of the chat.
        return large.is_large(row.payload)

    def _stored_rows(self, ids: list[str]) -> dict[str, tuple[Any, ...]]:
        marks = ",".join("?" * len(ids))
        found = self._conn.execute(
            "SELECT id, parent_entry_id, kind, payload, context_visibility, created_at, "
            f"session_id, sequence FROM session_entries WHERE id IN ({marks})",
            ids,
        )
        return {r[0]: r for r in found}

    def _confirm(self, ids: list[str]) -> None:
        self._conn.executemany(
            "INSERT OR IGNORE INTO temp.import_confirmed VALUES (?)", [(i,) for i in ids]
        )

    def _insert_rows(self, rows: list[tuple[Any, ...]]) -> None:
        insert_entries(self._conn, rows)
