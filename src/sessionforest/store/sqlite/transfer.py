"""Whole sessions in and out exactly: `restore` writes one, `stored_*` stream one out.

Native JSONL import and export, and a copy between stores, are built on these:
rows keep their ids, sequences, schema versions, payload and stamp text. A
restore streams its rows in batches (memory stays flat) and checks parents
in the database after the insert instead of keeping every id in a set.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator

from ...errors import (
    ImportRejected,
    SessionExists,
    SessionQuarantined,
    UnknownSession,
    UnsupportedSchemaVersion,
)
from ...model import SUPPORTED_SCHEMA_VERSIONS, StoredEntry, StoredSession
from .integrity import READABLE
from .rows import BAD_PARENT, ENTRY_COLUMNS, INSERT_SESSION, UPSERT_HEAD, insert_entries
from .search import catchup, large

BATCH = 2000
STREAM = 1000  # rows fetched at a time by `stored_entries`

STORED_SESSION = """
SELECT s.id, s.title, s.harness, s.cwd, s.created_at, s.status, s.visibility,
       h.active_entry_id, h.updated_at, s.origin_cwd, s.source_format, s.source_path,
       s.source_id, s.summary, s.git_branch, s.quarantine
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id WHERE s.id = ?
"""

STORED_ENTRIES = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = ? AND sequence <= ? ORDER BY sequence"
)

OWNER = "SELECT session_id, sequence FROM session_entries WHERE id = ?"

Locate = Callable[[int], int | None]


def stored_session(conn: sqlite3.Connection, session_id: str) -> StoredSession:
    row = conn.execute(STORED_SESSION, (session_id,)).fetchone()
    if row is None:
        raise UnknownSession(session_id)
    if row[-1] is not None:
        raise SessionQuarantined(session_id, row[-1])
    return StoredSession(*row[:-1])


def stored_entries(
    conn: sqlite3.Connection, session_id: str, through: int
) -> Iterator[StoredEntry]:
    cursor = conn.execute(STORED_ENTRIES, (session_id, through))
    make = StoredEntry._make
    while rows := cursor.fetchmany(STREAM):
        for row in rows:
            if row[4] not in SUPPORTED_SCHEMA_VERSIONS:
                raise UnsupportedSchemaVersion(row[0], row[4], session_id)
            yield make(row)


def restore(
    conn: sqlite3.Connection,
    session: StoredSession,
    entries: Iterable[StoredEntry],
    source: str,
    locate: Locate | None,
) -> int:
    """Write `session` and its `entries` inside the caller's transaction (see
    BulkStore.restore_session); returns how many entries were written."""
    where: Locate = locate or (lambda sequence: None)
    sid = session.id
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone():
        raise SessionExists(sid)
    row = (sid, session.title, session.harness, session.cwd, session.created_at,
           session.status, session.visibility, session.origin_cwd, session.source_format,
           session.source_path, session.source_id, session.summary, session.git_branch)  # fmt: skip
    try:
        conn.execute(INSERT_SESSION, row)
    except sqlite3.IntegrityError as exc:
        # Refused by the sessions_no_adoption trigger: a deleted row's entries remain.
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
        if len(batch) >= BATCH or large.is_large(entry.payload):
            _insert(conn, batch, source, where)  # a large row goes at once
    _insert(conn, batch, source, where)
    _check_parents(conn, sid, source, where)
    head = session.head
    if head is not None:
        owner = conn.execute(OWNER, (head,)).fetchone()
        if owner is None or owner[0] != sid:
            raise ImportRejected(
                source, where(0), f"header head {head} is not an entry of this file"
            )
    elif count:
        raise ImportRejected(source, where(0), "header head is null but the file has entries")
    if session.head_moved_at is not None:
        conn.execute(UPSERT_HEAD, (sid, head, session.head_moved_at))
    catchup.catch_up(conn)  # indexed in the restore's own transaction
    return count


def _insert(
    conn: sqlite3.Connection,
    batch: list[StoredEntry],
    source: str,
    where: Locate,
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
        line = where(entry.sequence)
        if owner[0] != entry.session_id:
            why = f"id already exists in this store (session {owner[0]})"
            return ImportRejected(source, line, why, entry.id)
        first = where(owner[1])
        earlier = f"line {first}" if first is not None else f"sequence {owner[1]}"
        return ImportRejected(source, line, f"repeats the id of {earlier}", entry.id)
    raise AssertionError("unique constraint failed but no duplicate id was found")


def _check_parents(conn: sqlite3.Connection, sid: str, source: str, where: Locate) -> None:
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
    else:  # every row of a restore has a readable version: the parent's is newer
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
        f"(supported: {READABLE})"
    )
