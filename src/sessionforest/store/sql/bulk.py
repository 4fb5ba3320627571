"""Bulk writes both SQL backends run alike: importers' chats and whole-session transfers.

`SQLBulk.bulk_chat(spec, path)` holds one write transaction per chat and yields
the backend's `SQLChatWriter`: rows are validated as they come (rules/imports.py),
buffered and written a batch at a time; an id already stored with identical
content is skipped, one stored with other content fails the chat. Any error
rolls the chat back whole. `restore_session` writes a whole session exactly
(ids, sequences, versions, payload and stamp text kept), streaming its rows
in batches and checking parents in the database after the insert;
`stored_session` and `stored_entries` stream one out. A backend gives its
transactions, how it inserts a batch (and reports a duplicate id), how it
indexes (SQLite catches its index up at the end; PostgreSQL's triggers index
in the insert) and the SQL its keys need.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

from ...errors import (
    ImportRejected,
    SessionExists,
    SessionQuarantined,
    UnknownSession,
    UnsupportedSchemaVersion,
)
from ...ids import title_text
from ...model import (
    CURRENT_SCHEMA_VERSION,
    SUPPORTED_SCHEMA_VERSIONS,
    ChatResult,
    ChatSpec,
    SessionStatus,
    StoredEntry,
    StoredSession,
)
from ...rules import integrity as integrity_rules
from ...rules.imports import ChatWriterBase
from .dialect import C, Dialect, Row
from .rows import ENTRY_COLUMNS, INSERT_SESSION, RECOUNT_SINCE, UPSERT_HEAD

STREAM = 1000  # rows fetched at a time by `stored_entries`
NO_LIMIT = (1 << 63) - 1  # the largest sequence either backend holds

# What a chat import reads first (the session row locked where the backend locks).
CHAT_STATE = """
SELECT s.quarantine, s.source_format, s.source_id, s.title, s.summary, s.git_branch,
       s.source_path, (SELECT MAX(sequence) FROM session_entries WHERE session_id = s.id),
       s.created_at, s.git_commit, s.git_repository, s.origin_project, s.renamed
FROM sessions s WHERE s.id = ?
"""
UPDATE_CHAT = """
UPDATE sessions SET title = ?, summary = ?, git_branch = ?, source_path = ?,
                    git_commit = ?, git_repository = ?, origin_project = ?
WHERE id = ?
"""
STORED_SESSION = """
SELECT s.id, s.title, s.harness, s.cwd, s.created_at, s.status, s.visibility,
       h.active_entry_id, h.updated_at, s.origin_cwd, s.source_format, s.source_path,
       s.source_id, s.summary, s.git_branch, s.git_commit, s.git_repository,
       s.origin_project, s.quarantine
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id WHERE s.id = ?
"""
STORED_ENTRIES = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = ? AND sequence <= ? ORDER BY sequence"
)
IN_SESSION = "SELECT created_at FROM session_entries WHERE session_id = ? AND id = ?"
SEQUENCE_IN_SESSION = "SELECT sequence FROM session_entries WHERE session_id = ? AND id = ?"
QUARANTINE = "SELECT quarantine FROM sessions WHERE id = ?"
SESSION_KNOWN = "SELECT 1 FROM sessions WHERE id = ?"

Locate = Callable[[int], int | None]
# A session to restore: its row, its entries (consumed once), the source named in errors.
Restore = tuple[StoredSession, Iterable[StoredEntry], str]
Transaction = Callable[[], AbstractContextManager[C]]
W = TypeVar("W", bound="SQLChatWriter[Any]")


class Stage:
    """Restored rows checked but not yet written, for a backend that writes many at
    once (PostgreSQL's COPY): the rows, and the (session, sequence) of each staged id,
    so a repeated id is refused before the write as it would be after it."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.ids: dict[str, tuple[str, int]] = {}
        self.size = 0  # payload characters staged

    def clear(self) -> None:
        self.rows.clear()
        self.ids.clear()
        self.size = 0


class BulkSQL:
    """The statements above in one dialect, plus the backend's BAD_PARENT and BRANCHES
    (given in its own dialect: they differ by how entries are keyed and by JSON functions)."""

    def __init__(
        self,
        d: Dialect,
        *,
        bad_parent: str,
        branches: str,
        branches_since: str,
        since_args: Callable[[str, int], tuple[Any, ...]],
        lock: str = "",
    ) -> None:
        self.bad_parent = bad_parent
        self.branches = branches
        # The branch points an import continuing from a saved position touched: its
        # count costs what its new rows cost (`since_args(session, base)` binds it).
        self.branches_since = branches_since
        self.since_args = since_args
        self.chat_state = d.sql(CHAT_STATE) + lock
        self.update_chat = d.sql(UPDATE_CHAT)
        self.stored_session = d.sql(STORED_SESSION)
        self.stored_entries = d.sql(STORED_ENTRIES)
        self.in_session = d.sql(IN_SESSION)
        self.sequence_in_session = d.sql(SEQUENCE_IN_SESSION)
        self.quarantine = d.sql(QUARANTINE)
        self.session_known = d.sql(SESSION_KNOWN)
        self.insert_session = d.sql(INSERT_SESSION)
        self.upsert_head = d.sql(UPSERT_HEAD)
        self.recount_since = d.sql(RECOUNT_SINCE)
        self.confirmed_before = d.sql("SELECT 1 FROM import_confirmed WHERE id = ?")


class SQLChatWriter(ChatWriterBase, Generic[C]):
    """The `ChatWriter` both backends share; a backend reads and writes a batch its way."""

    def __init__(
        self,
        conn: C,
        q: BulkSQL,
        spec: ChatSpec,
        path: Path,
        last: int,
        created_at: str,
        batch: int,
        recent: int,
    ) -> None:
        super().__init__(spec, path, last, created_at, batch, recent)
        self._conn = conn
        self._q = q

    def _stored_sequence(self, entry_id: str) -> int | None:
        row = self._conn.execute(self._q.sequence_in_session, (self._spec.id, entry_id))
        found = row.fetchone()
        return None if found is None else int(found[0])

    # --- hooks ---------------------------------------------------------------------

    def _stored_rows(self, ids: list[str]) -> dict[str, Row]:
        """The rows stored under `ids` in any session (this one's first), by id."""
        raise NotImplementedError

    def _confirm(self, ids: list[str]) -> None:
        """Remember `ids` (stored before and met again) in `import_confirmed`."""
        raise NotImplementedError

    def _insert_rows(self, rows: list[Row]) -> None:
        """Insert new rows (ENTRY_COLUMNS)."""
        raise NotImplementedError

    # --- shared ----------------------------------------------------------------------

    def _confirmed_before(self, entry_id: str) -> bool:
        found = self._conn.execute(self._q.confirmed_before, (entry_id,))
        return found.fetchone() is not None

    def flush(self) -> None:
        if not self._batch:
            return
        rows = list(self._batch.values())
        self._batch.clear()
        fresh, confirmed = self._sorted(rows, self._stored_rows([r.id for r in rows]))
        if confirmed:
            # Stored before and met again: remembered on disk, not in memory.
            self._confirm(confirmed)
        sid = self._spec.id
        self._insert_rows(
            [
                (row.id, sid, row.parent, sequence, CURRENT_SCHEMA_VERSION, row.kind,
                 row.payload, row.visibility, row.created_at, row.stamp)
                for row, sequence in fresh
            ]
        )  # fmt: skip

    def finish(self) -> tuple[int, int]:
        """Flush, check parents and set the head; returns (entries, branches)."""
        self.flush()
        conn, sid = self._conn, self._spec.id
        self._refuse_bad_parent(conn.execute(self._q.bad_parent, (sid, self._base)).fetchone())
        if self.head is not None:
            row = conn.execute(self._q.in_session, (sid, self.head)).fetchone()
            if row is None:
                raise ImportRejected(str(self._path), None, f"head {self.head} was not imported")
            self._set_head(sid, self.head, row[0])
        # The chat list's message count: the rows this import wrote, counted once.
        conn.execute(self._q.recount_since, (sid, self._base, sid))
        entries = self._next - 1
        if self.continuing:
            # Only the new rows' parents: a turn at the end of a long chat costs
            # what the turn does (ChatResult.branches says so).
            args = self._q.since_args(sid, self._base)
            branches = conn.execute(self._q.branches_since, args).fetchone()
        else:
            branches = conn.execute(self._q.branches, (sid,)).fetchone()
        return entries, int(branches[0]) if branches else 0

    def _set_head(self, session_id: str, head: str, updated_at: str) -> None:
        """Move the chat's head to `head` (a backend that keeps derived state of the
        head, SQLite's materialised path, keeps it here)."""
        self._conn.execute(self._q.upsert_head, (session_id, head, updated_at))


class SQLBulk(Generic[C, W]):
    """The shared half of a SQL `BulkStore` (store/base/bulk.py).

    A subclass sets `_q`, `_write` and `_read` (transactions yielding a
    connection) and implements the hooks below.
    """

    _q: BulkSQL
    _write: Transaction[C]
    _read: Transaction[C]
    batch = 1000  # rows a restore inserts at a time

    # --- hooks ---------------------------------------------------------------------

    def _insert_session_row(self, conn: C, row: Row, session_id: str) -> None:
        """Insert a chat's new session row, mapping the driver's refusals."""
        raise NotImplementedError

    def _restore_session_row(
        self, conn: C, row: Row, session_id: str, source: str, where: Locate
    ) -> None:
        """Insert a restored session row, mapping the driver's refusals."""
        raise NotImplementedError

    def _chat_writer(self, conn: C, spec: ChatSpec, source: Path, last: int, at: str) -> W:
        raise NotImplementedError

    def _begin_chat(self, conn: C) -> None:
        """Ready the temporary table of ids confirmed before (rules/imports.py)."""
        raise NotImplementedError

    def _insert(
        self, conn: C, batch: list[StoredEntry], source: str, where: Locate, stage: Stage
    ) -> None:
        """Insert a restore's `batch` (or add it to `stage`), then empty it, refusing an
        id stored (or staged) already."""
        raise NotImplementedError

    def _flush(self, conn: C, stage: Stage) -> None:
        """Write what `stage` holds (a backend that stages nothing has nothing to do)."""

    def _goes_at_once(self, entry: StoredEntry) -> bool:
        """Whether `entry` is inserted without waiting for a full batch."""
        return False

    def _indexed(self, conn: C) -> None:
        """Bring the search index up to what this transaction wrote."""

    # --- importers -----------------------------------------------------------------

    @contextmanager
    def bulk_chat(self, spec: ChatSpec, source: Path) -> Iterator[W]:
        """Write one chat in one transaction; any error leaves the store as it was."""
        with self._write() as conn:
            state = conn.execute(self._q.chat_state, (spec.id,)).fetchone()
            if state is None:
                row = (spec.id, title_text(spec.title), spec.harness, spec.cwd, spec.created_at,
                       str(SessionStatus.ACTIVE), str(spec.visibility), spec.origin_cwd,
                       spec.source_format, spec.source_path, spec.source_id, spec.summary,
                       spec.git_branch, *spec.provenance)  # fmt: skip
                self._insert_session_row(conn, row, spec.id)
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
            self._begin_chat(conn)
            created_at = spec.created_at if state is None else state[8]
            writer = self._chat_writer(conn, spec, source, last, created_at)
            yield writer
            entries, branches = writer.finish()
            self._indexed(conn)  # an import indexes its chat in its own transaction
            # A title as every other arrives: one rule (ids.title_text) for imports and RPC.
            # What the source says of where it ran: stated, it replaces the stored
            # value; unstated (a fork's spec, an older importer), the stored one stays.
            stored = (None, None, None) if state is None else tuple(state[9:12])
            provenance = tuple(
                given if given is not None else kept
                for given, kept in zip(spec.provenance, stored, strict=True)
            )
            # A title the user set (Store.rename) outlives every import of the source.
            title = state[3] if state is not None and state[12] else title_text(writer.title)
            described = (title, writer.summary, writer.git_branch, spec.source_path, *provenance)
            if state is None or described != (*state[3:7], *stored):
                conn.execute(self._q.update_chat, (*described, spec.id))
        writer.result = ChatResult(
            spec.id, state is None, writer.added, writer.unchanged, entries, branches, writer.head
        )

    # --- whole sessions ----------------------------------------------------------------

    def restore_session(
        self,
        session: StoredSession,
        entries: Iterable[StoredEntry],
        *,
        source: str,
        locate: Locate | None = None,
    ) -> int:
        """Write a new session exactly, all or nothing (see BulkStore.restore_session)."""
        where: Locate = locate or (lambda sequence: None)
        with self._write() as conn:
            stage = Stage()
            count = self._restore_rows(conn, session, entries, source, where, stage)
            self._flush(conn, stage)
            self._settle(conn, session, count, source, where)
            self._indexed(conn)  # indexed in the restore's own transaction
            return count

    def restore_sessions(self, sessions: Iterable[Restore]) -> int:
        """Write several new sessions exactly, all or nothing together (see
        BulkStore.restore_sessions); returns the entries written."""
        where: Locate = lambda sequence: None  # noqa: E731
        with self._write() as conn:
            stage = Stage()
            written = [
                (session, self._restore_rows(conn, session, entries, source, where, stage), source)
                for session, entries, source in sessions
            ]
            self._flush(conn, stage)
            for session, count, source in written:
                self._settle(conn, session, count, source, where)
            self._indexed(conn)
            return sum(count for _, count, _ in written)

    def _restore_rows(
        self,
        conn: C,
        session: StoredSession,
        entries: Iterable[StoredEntry],
        source: str,
        where: Locate,
        stage: Stage,
    ) -> int:
        """Write `session`'s row and hand its `entries` to `_insert` (which may stage
        them) inside the caller's transaction; returns how many there were."""
        sid = session.id
        if conn.execute(self._q.session_known, (sid,)).fetchone():
            raise SessionExists(sid)
        s = session
        row = (sid, s.title, s.harness, s.cwd, s.created_at, s.status, s.visibility,
               s.origin_cwd, s.source_format, s.source_path, s.source_id, s.summary,
               s.git_branch, s.git_commit, s.git_repository, s.origin_project)  # fmt: skip
        self._restore_session_row(conn, row, sid, source, where)
        batch: list[StoredEntry] = []
        count = 0
        for entry in entries:
            count += 1
            if (entry.sequence, entry.session_id) != (count, sid) or (
                entry.semantic_schema_version not in SUPPORTED_SCHEMA_VERSIONS
            ):
                raise ImportRejected(source, where(count), misplaced(entry, sid, count), entry.id)
            batch.append(entry)
            if len(batch) >= self.batch or self._goes_at_once(entry):
                self._insert(conn, batch, source, where, stage)
        self._insert(conn, batch, source, where, stage)
        return count

    def _settle(
        self, conn: C, session: StoredSession, count: int, source: str, where: Locate
    ) -> None:
        """Check a restored session's parents and head once its rows are written; set
        the head."""
        sid = session.id
        self._check_parents(conn, sid, source, where)
        head = session.head
        if head is not None:
            if conn.execute(self._q.in_session, (sid, head)).fetchone() is None:
                raise ImportRejected(
                    source, where(0), f"header head {head} is not an entry of this file"
                )
        elif count:
            raise ImportRejected(source, where(0), "header head is null but the file has entries")
        if session.head_moved_at is not None:
            conn.execute(self._q.upsert_head, (sid, head, session.head_moved_at))
        conn.execute(self._q.recount_since, (sid, 0, sid))

    def _check_parents(self, conn: C, sid: str, source: str, where: Locate) -> None:
        bad = conn.execute(self._q.bad_parent, (sid, 0)).fetchone()
        if bad is None:
            return
        eid, parent, owner, earlier, parent_version, version, sequence = bad
        if owner is None:
            reason = f"parent {parent} does not exist in this file"
        elif owner != sid:
            reason = f"parent {parent} belongs to another session ({owner})"
        elif not earlier:
            reason = f"parent {parent} does not precede it (a forward or cyclic reference)"
        else:  # every row of a restore has a readable version: the parent's is newer
            reason = (
                f"parent {parent} has semantic_schema_version {parent_version}, newer than "
                f"this entry's {version}: an entry is never older than its ancestors"
            )
        raise ImportRejected(source, where(sequence), reason, eid)

    def stored_session(self, session_id: str) -> StoredSession:
        """The session row as stored (see BulkStore.stored_session)."""
        with self._read() as conn:
            row = conn.execute(self._q.stored_session, (session_id,)).fetchone()
        if row is None:
            raise UnknownSession(session_id)
        if row[-1] is not None:
            raise SessionQuarantined(session_id, row[-1])
        return StoredSession(*row[:-1])

    def stored_entries(
        self, session_id: str, *, through: int | None = None
    ) -> Iterator[StoredEntry]:
        """The session's rows in sequence order, streamed (see BulkStore.stored_entries);
        the session is checked when the first row is asked for."""
        with self._read() as conn:
            row = conn.execute(self._q.quarantine, (session_id,)).fetchone()
            if row is None:
                raise UnknownSession(session_id)
            if row[0] is not None:
                raise SessionQuarantined(session_id, row[0])
            limit = NO_LIMIT if through is None else through
            cursor = conn.execute(self._q.stored_entries, (session_id, limit))
            make = StoredEntry._make
            while rows := cursor.fetchmany(STREAM):
                for one in rows:
                    if one[4] not in SUPPORTED_SCHEMA_VERSIONS:
                        raise UnsupportedSchemaVersion(one[0], one[4], session_id)
                    yield make(one)


def misplaced(entry: StoredEntry, sid: str, expected: int) -> str:
    """Why a restored row is not where it must be."""
    if entry.session_id != sid:
        return f"entry {entry.id} belongs to session {entry.session_id}, not {sid}"
    if entry.sequence != expected:
        return f"sequence {entry.sequence} where {expected} was expected (gap-free 1..n)"
    return (
        f"unsupported semantic_schema_version {entry.semantic_schema_version} "
        f"(supported: {integrity_rules.READABLE})"
    )


def repeated(source: str, entry: StoredEntry, owner: Row, where: Locate) -> ImportRejected:
    """The error for `entry`, whose id is stored already as (session, sequence) `owner`."""
    line = where(entry.sequence)
    if owner[0] != entry.session_id:
        why = f"id already exists in this store (session {owner[0]})"
        return ImportRejected(source, line, why, entry.id)
    first = where(owner[1])
    earlier = f"line {first}" if first is not None else f"sequence {owner[1]}"
    return ImportRejected(source, line, f"repeats the id of {earlier}", entry.id)
