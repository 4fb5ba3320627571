"""Bulk writes for importers and whole-session transfers: the PostgreSQL `BulkStore`.

`bulk_chat` holds one transaction (and the session's row lock) per chat; the
checks are rules/imports.py's, rows go in one statement per batch. Restoring
and streaming whole sessions keep ids, sequences, versions and stamps exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

from ...errors import (
    ImportRejected,
    SessionExists,
    SessionQuarantined,
    UnknownSession,
    UnsupportedSchemaVersion,
)
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
from .database import Database
from .rows import (
    BAD_PARENT,
    BRANCHES,
    ENTRY_COLUMNS,
    INSERT_SESSION,
    OWNER,
    UPSERT_HEAD,
    insert_entries,
    searchable_json,
)
from .store import adoption_refused

BATCH = 1000
RECENT = 8192
STREAM = 1000  # rows fetched at a time by `stored_entries`

SESSION_STATE = """
SELECT s.quarantine, s.source_format, s.source_id, s.title, s.summary, s.git_branch,
       s.source_path, (SELECT MAX(sequence) FROM session_entries WHERE session_id = s.id),
       s.created_at
FROM sessions s WHERE s.id = %s FOR UPDATE OF s
"""
STORED_SESSION = """
SELECT s.id, s.title, s.harness, s.cwd, s.created_at, s.status, s.visibility,
       h.active_entry_id, h.updated_at, s.origin_cwd, s.source_format, s.source_path,
       s.source_id, s.summary, s.git_branch, s.quarantine
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id WHERE s.id = %s
"""
STORED_ENTRIES = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = %s AND sequence <= %s ORDER BY sequence"
)
# Ids of a batch stored anywhere (the only cross-session read of an import).
STORED_ROWS = (
    "SELECT id, parent_entry_id, kind, payload, context_visibility, created_at, session_id, "
    "sequence FROM session_entries WHERE id = ANY(%s)"
)

NO_LIMIT = (1 << 63) - 1


class PostgresBulk:
    """The PostgreSQL `BulkStore` (see store/base/bulk.py)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @contextmanager
    def bulk_chat(self, spec: ChatSpec, source: Path) -> Iterator[PostgresChatWriter]:
        with self._db.write() as conn:
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
            conn.execute(
                "CREATE TEMP TABLE IF NOT EXISTS import_confirmed (id TEXT PRIMARY KEY) "
                "ON COMMIT DELETE ROWS"
            )
            conn.execute("DELETE FROM import_confirmed")
            created_at = spec.created_at if state is None else state[8]
            writer = PostgresChatWriter(conn, spec, source, last, created_at)
            yield writer
            entries, branches = writer.finish()
            if state is None or (
                writer.title,
                writer.summary,
                writer.git_branch,
                spec.source_path,
            ) != tuple(state[3:7]):
                conn.execute(
                    "UPDATE sessions SET title = %s, summary = %s, git_branch = %s, "
                    "source_path = %s WHERE id = %s",
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
        with self._db.write() as conn:
            return _restore(conn, session, entries, source, locate)

    def stored_session(self, session_id: str) -> StoredSession:
        with self._db.read() as conn:
            row = conn.execute(STORED_SESSION, (session_id,)).fetchone()
        if row is None:
            raise UnknownSession(session_id)
        if row[-1] is not None:
            raise SessionQuarantined(session_id, row[-1])
        return StoredSession(*row[:-1])

    def stored_entries(
        self, session_id: str, *, through: int | None = None
    ) -> Iterator[StoredEntry]:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT quarantine FROM sessions WHERE id = %s", (session_id,)
            ).fetchone()
            if row is None:
                raise UnknownSession(session_id)
            if row[0] is not None:
                raise SessionQuarantined(session_id, row[0])
            limit = NO_LIMIT if through is None else through
            with conn.cursor() as cur:
                cur.execute(STORED_ENTRIES, (session_id, limit))
                make = StoredEntry._make
                while rows := cur.fetchmany(STREAM):
                    for one in rows:
                        if one[4] not in SUPPORTED_SCHEMA_VERSIONS:
                            raise UnsupportedSchemaVersion(one[0], one[4], session_id)
                        yield make(one)


def _insert_session(conn: psycopg.Connection[Any], spec: ChatSpec) -> None:
    row = (spec.id, spec.title, spec.harness, spec.cwd, spec.created_at, str(SessionStatus.ACTIVE),
           str(spec.visibility), spec.origin_cwd, spec.source_format, spec.source_path,
           spec.source_id, spec.summary, spec.git_branch)  # fmt: skip
    try:
        with conn.transaction():
            conn.execute(INSERT_SESSION, row)
    except psycopg.errors.RaiseException as exc:
        raise adoption_refused(exc, spec.id) from exc


class PostgresChatWriter(ChatWriterBase):
    """The `ChatWriter` of `PostgresBulk.bulk_chat` (the checks are rules/imports.py's)."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        spec: ChatSpec,
        path: Path,
        last: int,
        created_at: str,
    ) -> None:
        super().__init__(spec, path, last, created_at, BATCH, RECENT)
        self._conn = conn

    def _stored_sequence(self, entry_id: str) -> int | None:
        row = self._conn.execute(
            "SELECT sequence FROM session_entries WHERE session_id = %s AND id = %s",
            (self._spec.id, entry_id),
        ).fetchone()
        return None if row is None else int(row[0])

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

    def finish(self) -> tuple[int, int]:
        self.flush()
        conn, sid = self._conn, self._spec.id
        self._refuse_bad_parent(conn.execute(BAD_PARENT, (sid, self._base)).fetchone())
        if self.head is not None:
            row = conn.execute(
                "SELECT created_at FROM session_entries WHERE session_id = %s AND id = %s",
                (sid, self.head),
            ).fetchone()
            if row is None:
                raise ImportRejected(str(self._path), None, f"head {self.head} was not imported")
            conn.execute(UPSERT_HEAD, (sid, self.head, row[0]))
        entries = self._next - 1
        branches = conn.execute(BRANCHES, (sid,)).fetchone()
        return entries, int(branches[0]) if branches else 0


Locate = Callable[[int], int | None]


def _restore(
    conn: psycopg.Connection[Any],
    session: StoredSession,
    entries: Iterable[StoredEntry],
    source: str,
    locate: Locate | None,
) -> int:
    """Write `session` and its `entries` in the caller's transaction (see
    BulkStore.restore_session); returns how many entries were written."""
    where: Locate = locate or (lambda sequence: None)
    sid = session.id
    if conn.execute("SELECT 1 FROM sessions WHERE id = %s", (sid,)).fetchone():
        raise SessionExists(sid)
    row = (sid, session.title, session.harness, session.cwd, session.created_at,
           session.status, session.visibility, session.origin_cwd, session.source_format,
           session.source_path, session.source_id, session.summary, session.git_branch)  # fmt: skip
    try:
        with conn.transaction():
            conn.execute(INSERT_SESSION, row)
    except psycopg.errors.UniqueViolation as exc:
        raise SessionExists(sid) from exc
    except psycopg.errors.RaiseException as exc:
        raise ImportRejected(
            source, where(0), f"session {sid}: {exc}; run `forest repair {sid}`"
        ) from exc
    batch: list[StoredEntry] = []
    count = 0
    for entry in entries:
        count += 1
        if (entry.sequence, entry.session_id) != (count, sid) or (
            entry.semantic_schema_version not in SUPPORTED_SCHEMA_VERSIONS
        ):
            raise ImportRejected(source, where(count), _misplaced(entry, sid, count), entry.id)
        batch.append(entry)
        if len(batch) >= BATCH:
            _insert(conn, batch, source, where)
    _insert(conn, batch, source, where)
    _check_parents(conn, sid, source, where)
    head = session.head
    if head is not None:
        owner = conn.execute(
            "SELECT 1 FROM session_entries WHERE session_id = %s AND id = %s", (sid, head)
        ).fetchone()
        if owner is None:
            raise ImportRejected(
                source, where(0), f"header head {head} is not an entry of this file"
            )
    elif count:
        raise ImportRejected(source, where(0), "header head is null but the file has entries")
    if session.head_moved_at is not None:
        conn.execute(UPSERT_HEAD, (sid, head, session.head_moved_at))
    return count


def _insert(
    conn: psycopg.Connection[Any], batch: list[StoredEntry], source: str, where: Locate
) -> None:
    """Insert `batch` (then empty it), refusing an id stored already: in another
    session (no key spans sessions: checked here) or twice in this one."""
    if not batch:
        return
    ids = [e.id for e in batch]
    clash = conn.execute(
        "SELECT id, session_id, sequence FROM session_entries WHERE id = ANY(%s) LIMIT 1", (ids,)
    ).fetchone()
    seen: dict[str, int] = {}
    for entry in batch:
        if clash is not None and entry.id == clash[0]:
            line = where(entry.sequence)
            if clash[1] != entry.session_id:
                why = f"id already exists in this store (session {clash[1]})"
                raise ImportRejected(source, line, why, entry.id)
            first = where(clash[2])
            earlier = f"line {first}" if first is not None else f"sequence {clash[2]}"
            raise ImportRejected(source, line, f"repeats the id of {earlier}", entry.id)
        if entry.id in seen:
            first = where(seen[entry.id])
            earlier = f"line {first}" if first is not None else f"sequence {seen[entry.id]}"
            raise ImportRejected(
                source, where(entry.sequence), f"repeats the id of {earlier}", entry.id
            )
        seen[entry.id] = entry.sequence
    insert_entries(conn, [(*e, *searchable_json(e.kind, e.payload)) for e in batch])
    batch.clear()


def _check_parents(conn: psycopg.Connection[Any], sid: str, source: str, where: Locate) -> None:
    bad = conn.execute(BAD_PARENT, (sid, 0)).fetchone()
    if bad is None:
        return
    eid, parent, owner, earlier, parent_version, version, sequence = bad
    if owner is None:
        reason = f"parent {parent} does not exist in this file"
    elif owner != sid:
        reason = f"parent {parent} belongs to another session ({owner})"
    elif not earlier:
        reason = f"parent {parent} does not precede it (a forward or cyclic reference)"
    else:
        reason = (
            f"parent {parent} has semantic_schema_version {parent_version}, newer than "
            f"this entry's {version}: an entry is never older than its ancestors"
        )
    raise ImportRejected(source, where(sequence), reason, eid)


def _misplaced(entry: StoredEntry, sid: str, expected: int) -> str:
    if entry.session_id != sid:
        return f"entry {entry.id} belongs to session {entry.session_id}, not {sid}"
    if entry.sequence != expected:
        return f"sequence {entry.sequence} where {expected} was expected (gap-free 1..n)"
    return (
        f"unsupported semantic_schema_version {entry.semantic_schema_version} "
        f"(supported: {integrity_rules.READABLE})"
    )


__all__ = ["OWNER", "PostgresBulk", "PostgresChatWriter"]
