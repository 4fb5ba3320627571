"""Bulk writes for importers and whole-session transfers: the SQLite `BulkStore`.

`SQLiteBulk.bulk_chat(spec, path)` opens one BEGIN IMMEDIATE transaction and
yields a `SQLiteChatWriter`: rows are validated as they come, buffered and
written with executemany; an id already stored with identical content is
skipped, one stored with other content fails the chat. Any error rolls the
chat back whole. Restoring and streaming whole sessions live in transfer.py.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ...errors import (
    ImportRejected,
    SessionQuarantined,
    UnknownSession,
)
from ...model import (
    CURRENT_SCHEMA_VERSION,
    ChatResult,
    ChatSpec,
    SessionStatus,
    StoredEntry,
    StoredSession,
)
from ...rules.imports import ChatWriterBase, QueuedRow
from . import integrity, transfer
from .connection import driver_error
from .rows import BAD_PARENT, BRANCHES, INSERT_SESSION, UPSERT_HEAD, insert_entries
from .search import catchup, large

BATCH = 1000
RECENT = 8192  # ids remembered in memory for parent checks; older ones are asked of SQLite

Transaction = Callable[[], AbstractContextManager[sqlite3.Connection]]

SESSION_STATE = """
SELECT s.quarantine, s.source_format, s.source_id, s.title, s.summary, s.git_branch,
       s.source_path, (SELECT MAX(sequence) FROM session_entries WHERE session_id = s.id),
       s.created_at
FROM sessions s WHERE s.id = ?
"""


NO_LIMIT = (1 << 63) - 1  # the largest sequence SQLite can hold


class SQLiteBulk:
    """The SQLite `BulkStore`: importers' per-chat writes and exact session transfers.

    `write()` gives the writer connection inside one BEGIN IMMEDIATE
    transaction (rolled back, driver errors converted, on any error); `read()`
    a connection to read from. `path` names the store in converted errors.
    """

    def __init__(self, path: Path, write: Transaction, read: Transaction) -> None:
        self._path = path
        self._write = write
        self._read = read

    @contextmanager
    def bulk_chat(self, spec: ChatSpec, source: Path) -> Iterator[SQLiteChatWriter]:
        """Write one chat in one transaction; any error leaves the store as it was."""
        with self._write() as conn:
            state = conn.execute(SESSION_STATE, (spec.id,)).fetchone()
            if state is None:
                _insert_session(conn, spec)
                last = 0
            else:
                quarantine, fmt, source_id = state[0], state[1], state[2]
                if quarantine is not None:
                    raise SessionQuarantined(spec.id, quarantine)
                if (fmt, source_id) != (spec.source_format, spec.source_id):
                    raise ImportRejected(
                        str(source),
                        None,
                        f"session {spec.id} exists and was not imported "
                        f"from {spec.source_format} {spec.source_id}",
                    )
                last = state[7] or 0
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS import_confirmed (id TEXT PRIMARY KEY)")
            conn.execute("DELETE FROM temp.import_confirmed")
            created_at = spec.created_at if state is None else state[8]
            writer = SQLiteChatWriter(conn, spec, source, last, created_at)
            yield writer
            entries, branches = writer.finish()
            catchup.catch_up(conn)  # an import indexes its chat in its own transaction
            if state is None or (
                writer.title,
                writer.summary,
                writer.git_branch,
                spec.source_path,
            ) != tuple(state[3:7]):
                conn.execute(
                    "UPDATE sessions SET title = ?, summary = ?, git_branch = ?, "
                    "source_path = ? WHERE id = ?",
                    (writer.title, writer.summary, writer.git_branch, spec.source_path, spec.id),
                )
        writer.result = ChatResult(
            spec.id, state is None, writer.added, writer.unchanged, entries, branches, writer.head
        )

    def restore_session(
        self,
        session: StoredSession,
        entries: Iterable[StoredEntry],
        *,
        source: str,
        locate: Callable[[int], int | None] | None = None,
    ) -> int:
        """Write a new session exactly, all or nothing (see BulkStore.restore_session)."""
        with self._write() as conn:
            return transfer.restore(conn, session, entries, source, locate)

    def stored_session(self, session_id: str) -> StoredSession:
        """The session row as stored (see BulkStore.stored_session)."""
        with self._reading() as conn:
            return transfer.stored_session(conn, session_id)

    def stored_entries(
        self, session_id: str, *, through: int | None = None
    ) -> Iterator[StoredEntry]:
        """The session's rows in sequence order, streamed (see BulkStore.stored_entries);
        the session is checked when the first row is asked for."""
        with self._reading() as conn:
            _readable(conn, session_id)
            yield from transfer.stored_entries(
                conn, session_id, NO_LIMIT if through is None else through
            )

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """A read connection; driver errors leave as the store's own errors."""
        try:
            with self._read() as conn:
                yield conn
        except sqlite3.Error as exc:
            raise driver_error(self._path, exc) from exc


def _readable(conn: sqlite3.Connection, session_id: str) -> None:
    row = conn.execute("SELECT quarantine FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        raise UnknownSession(session_id)
    if row[0] is not None:
        raise SessionQuarantined(session_id, row[0])


def _insert_session(conn: sqlite3.Connection, spec: ChatSpec) -> None:
    row = (spec.id, spec.title, spec.harness, spec.cwd, spec.created_at, str(SessionStatus.ACTIVE),
           str(spec.visibility), spec.origin_cwd, spec.source_format, spec.source_path,
           spec.source_id, spec.summary, spec.git_branch)  # fmt: skip
    try:
        conn.execute(INSERT_SESSION, row)
    except sqlite3.IntegrityError as exc:
        refused = integrity.adoption_refused(exc, spec.id)
        if refused is None:
            raise
        raise refused from exc


class SQLiteChatWriter(ChatWriterBase):
    """The `ChatWriter` of `SQLiteBulk.bulk_chat`: writes one chat inside its transaction
    (the checks are rules/imports.py's)."""

    def __init__(
        self, conn: sqlite3.Connection, spec: ChatSpec, path: Path, last: int, created_at: str
    ) -> None:
        super().__init__(spec, path, last, created_at, BATCH, RECENT)
        self._conn = conn

    def _flush_now(self, row: QueuedRow) -> bool:
        # A large row goes at once: its payload is not kept waiting in memory. Its
        # text is indexed with the others by the catch-up at the end of the chat.
        return large.is_large(row.payload)

    def _stored_sequence(self, entry_id: str) -> int | None:
        row = self._conn.execute(
            "SELECT sequence FROM session_entries WHERE id = ? AND session_id = ?",
            (entry_id, self._spec.id),
        ).fetchone()
        return None if row is None else int(row[0])

    def _confirmed_before(self, entry_id: str) -> bool:
        found = self._conn.execute("SELECT 1 FROM temp.import_confirmed WHERE id = ?", (entry_id,))
        return found.fetchone() is not None

    def flush(self) -> None:
        if not self._batch:
            return
        rows = list(self._batch.values())
        self._batch.clear()
        marks = ",".join("?" * len(rows))
        stored = {
            r[0]: r
            for r in self._conn.execute(
                "SELECT id, parent_entry_id, kind, payload, context_visibility, created_at, "
                f"session_id, sequence FROM session_entries WHERE id IN ({marks})",
                [r.id for r in rows],
            )
        }
        fresh, confirmed = self._sorted(rows, stored)
        if confirmed:
            # Stored before and met again: remembered on disk, not in memory.
            self._conn.executemany(
                "INSERT OR IGNORE INTO temp.import_confirmed VALUES (?)", [(i,) for i in confirmed]
            )
        sid = self._spec.id
        batch: list[tuple[Any, ...]] = []
        for row, sequence in fresh:
            batch.append((row.id, sid, row.parent, sequence, CURRENT_SCHEMA_VERSION, row.kind,
                          row.payload, row.visibility, row.created_at, None))  # fmt: skip
        insert_entries(self._conn, batch)

    def finish(self) -> tuple[int, int]:
        """Flush, check parents and set the head; returns (entries, branches)."""
        self.flush()
        conn, sid = self._conn, self._spec.id
        self._refuse_bad_parent(conn.execute(BAD_PARENT, (sid, self._base)).fetchone())
        if self.head is not None:
            row = conn.execute(
                "SELECT created_at FROM session_entries WHERE id = ? AND session_id = ?",
                (self.head, sid),
            ).fetchone()
            if row is None:
                raise ImportRejected(str(self._path), None, f"head {self.head} was not imported")
            conn.execute(UPSERT_HEAD, (sid, self.head, row[0]))
        entries = self._next - 1
        branches = conn.execute(BRANCHES, (sid,)).fetchone()[0]
        return entries, int(branches)
