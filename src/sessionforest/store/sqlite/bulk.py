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
from typing import Any, NamedTuple

from ...errors import (
    EntryConflict,
    ImportRejected,
    InvalidArgument,
    SessionQuarantined,
    UnknownSession,
)
from ...jsontext import payload_text
from ...kinds import validate_payload
from ...model import (
    CURRENT_SCHEMA_VERSION,
    SUPPORTED_SCHEMA_VERSIONS,
    ChatResult,
    ChatSpec,
    SessionStatus,
    StoredEntry,
    StoredSession,
    Visibility,
)
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


class SQLiteChatWriter:
    """The `ChatWriter` of `SQLiteBulk.bulk_chat`: writes one chat inside its transaction."""

    def __init__(
        self, conn: sqlite3.Connection, spec: ChatSpec, path: Path, last: int, created_at: str
    ) -> None:
        self._conn = conn
        self._spec = spec
        self._path = path
        self._base = last  # sequences at or below it were stored before this import
        self._next = last + 1
        self._batch: dict[str, _Row] = {}  # id -> row, insertion order
        # Ids this import added, with their lines: two bounded generations.
        self._young: dict[str, int | None] = {}
        self._old: dict[str, int | None] = {}
        self.added = 0
        self.unchanged = 0
        self.head: str | None = None
        self.title = spec.title
        self.summary = spec.summary
        self.git_branch = spec.git_branch
        # The chat's time: stored by its first import, so a source that states
        # no times gives its entries the same one on every re-import.
        self.created_at = created_at
        self.result: ChatResult | None = None  # set once the chat is committed

    @property
    def session_id(self) -> str:
        return self._spec.id

    def add(
        self,
        entry_id: str,
        parent: str | None,
        kind: str,
        payload: dict[str, Any],
        created_at: str,
        visibility: str | None = None,
        line: int | None = None,
        source: str | None = None,
    ) -> None:
        """Queue one entry; raises InvalidPayload (nothing queued) if it breaks its contract.

        `source` names the record in the source's own terms ("uuid 5f3e...",
        "node abc"): errors about the entry name it instead of `entry_id`.
        """
        spec = validate_payload(kind, payload)
        vis = str(spec.default_visibility if visibility is None else visibility)
        if vis not in Visibility.__members__.values():
            raise InvalidArgument("context_visibility", f"expected context or hidden; got {vis!r}")
        body = payload_text(kind, payload)
        row = _Row(entry_id, parent, kind, body, vis, created_at, line, source)
        queued = self._batch.get(entry_id)
        if queued is not None:
            self._same(queued, row, queued.line)  # the file repeats a line: identical is harmless
            return
        self._batch[entry_id] = row
        self._remember(entry_id, line)
        if len(self._batch) >= BATCH or large.is_large(body):
            self.flush()  # a large row goes at once: its payload is not kept waiting

    def seen(self, entry_id: str) -> bool:
        """Whether this import already added `entry_id` (queued, written, or found stored).

        Not "is it stored": a source line naming a parent that only comes
        later in the file must get the same answer on every re-import.
        """
        if entry_id in self._young or entry_id in self._old:
            return True
        row = self._conn.execute(
            "SELECT sequence FROM session_entries WHERE id = ? AND session_id = ?",
            (entry_id, self._spec.id),
        ).fetchone()
        if row is None:
            return False
        if row[0] > self._base:
            return True  # written by this import
        found = self._conn.execute("SELECT 1 FROM temp.import_confirmed WHERE id = ?", (entry_id,))
        return found.fetchone() is not None

    def _remember(self, entry_id: str, line: int | None) -> None:
        # Two generations: memory stays bounded, and an id that falls out of
        # both was flushed long ago, so `seen` finds it in SQLite. The first
        # line that gave an id is the one a conflict names.
        if entry_id in self._old:
            return
        self._young.setdefault(entry_id, line)
        if len(self._young) >= RECENT:
            self._old, self._young = self._young, {}

    def _same(self, stored: _Row, row: _Row, earlier: int | None, before: bool = False) -> None:
        """Refuse `row` if it says something else than `stored` for the same record.

        `before`: `stored` came from an earlier import; else from an earlier
        line of this one (at line `earlier`, when still known).
        """
        found = _difference(stored, row)
        if found is None:
            return
        name, values = found
        subject = row.source or (f"entry {row.id}" if row.line is None else "the record")
        if before:
            shown = f" ({values.replace(' / ', ' then, ')} now)" if values else ""
            reason = (
                f"{subject} was imported before with a different {name}{shown}: the source "
                "changed what it said, and a re-import never changes stored entries"
            )
        else:
            at = f"line {earlier}" if earlier is not None else "an earlier line"
            shown = f" ({values.replace(' / ', ' there, ')} here)" if values else ""
            reason = f"{subject} is also on {at}, with a different {name}{shown}"
        raise EntryConflict(str(self._path), row.line, reason, row.id, row.source)

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
        sid = self._spec.id
        fresh: list[tuple[Any, ...]] = []
        confirmed = []
        for row in rows:
            old = stored.get(row.id)
            if old is None:
                version = CURRENT_SCHEMA_VERSION
                fresh.append((row.id, sid, row.parent, self._next, version, row.kind,
                              row.payload, row.visibility, row.created_at, None))  # fmt: skip
                self._next += 1
            elif old[6] != sid:
                subject = row.source or "a record"
                raise ImportRejected(
                    str(self._path),
                    row.line,
                    f"{subject} maps to entry id {row.id}, which belongs to session {old[6]}",
                    row.id,
                )
            else:
                written = old[7] > self._base  # by this import, from an earlier line
                earlier = self._young.get(row.id, self._old.get(row.id)) if written else None
                stored_row = _Row(old[0], old[1], old[2], old[3], old[4], old[5], None, None)
                self._same(stored_row, row, earlier, before=not written)
                confirmed.append((row.id,))
        if confirmed:
            # Stored before and met again: remembered on disk, not in memory.
            self._conn.executemany(
                "INSERT OR IGNORE INTO temp.import_confirmed VALUES (?)", confirmed
            )
            self.unchanged += len(confirmed)
        self._insert(fresh)

    def _insert(self, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            self.added += len(rows)
            insert_entries(self._conn, rows)

    def finish(self) -> tuple[int, int]:
        """Flush, check parents and set the head; returns (entries, branches)."""
        self.flush()
        conn, sid = self._conn, self._spec.id
        bad = conn.execute(BAD_PARENT, (sid, self._base)).fetchone()
        if bad is not None and bad[2] == sid and bad[4] not in SUPPORTED_SCHEMA_VERSIONS:
            raise ImportRejected(
                str(self._path),
                None,
                f"entry {bad[0]} would go below stored entry {bad[1]}, whose semantic schema "
                f"version {bad[4]} this sessionforest cannot read",
                bad[0],
            )
        if bad is not None:
            raise ImportRejected(
                str(self._path),
                None,
                f"entry {bad[0]} names parent {bad[1]}, not an earlier "
                "entry of this chat (an importer bug: please report it)",
                bad[0],
            )
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


class _Row(NamedTuple):
    """One queued entry: its columns, the source line and record."""

    id: str
    parent: str | None
    kind: str
    payload: str
    visibility: str
    created_at: str
    line: int | None
    source: str | None


# What a conflict is about, in the words a user reads it in; the values of
# the last three are shown too (parents are internal ids, content is long).
_FIELDS = ("parent", "content", "kind", "visibility", "time")
_SHOWN = ("kind", "visibility", "time")


def _difference(stored: _Row, row: _Row) -> tuple[str, str] | None:
    """(field, "old / new" or "") where `row` differs from `stored`; None: the same entry."""
    olds = (stored.parent, stored.payload, stored.kind, stored.visibility, stored.created_at)
    news = (row.parent, row.payload, row.kind, row.visibility, row.created_at)
    for name, old, new in zip(_FIELDS, olds, news, strict=True):
        if old != new:
            return name, f"{old} / {new}" if name in _SHOWN else ""
    return None
