"""Sessions, entries and heads on SQLite: the `Store` contract of store/base.py.

Writes go through one `BEGIN IMMEDIATE` transaction each (insert + head move
are atomic and concurrent writers queue on the lock instead of deadlocking on
an upgrade). Reads that walk a branch use one recursive query, never one query
per parent; the checks on what comes out are rules/reading.py's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import orjson

from ...errors import (
    ForeignEntry,
    ForestError,
    HeadMoved,
    InvalidArgument,
    SessionBound,
    SessionExists,
    SessionQuarantined,
    UnknownEntry,
    UnknownSession,
)
from ...model import CheckReport, Entry, Node, RepairReport, SessionInfo, SessionStatus
from ...rules import append as append_rules
from ...rules import reading
from ..base import (
    UNSET,
    Appended,
    AppendState,
    GroupedAppend,
    NewEntry,
    NewSession,
    Stamping,
    Unset,
)
from . import integrity, paths
from .database import Database
from .repair import repair_session
from .rows import BRANCHES, ENTRY_COLUMNS, INSERT_ENTRY
from .search import catchup

# No tail: the whole path (bounds the walk by the session's entry count only).
WHOLE = 1 << 62

# One round trip gathers everything an append must check: the session (and
# its quarantine), the head, the next sequence, the owner and schema version
# of the entry the append goes below (the given parent, else the head), the
# bound directory, the materialised path's tip and length and the sequence of
# the entry below (whether the append continues the path's last segment). (An
# INSERT ... SELECT doing the checks in place measured slower: SQLite
# materialises a SELECT that reads the table being inserted into.)
APPEND_STATE = """
SELECT s.quarantine, h.active_entry_id,
       (SELECT MAX(sequence) FROM session_entries WHERE session_id = s.id),
       p.session_id, p.semantic_schema_version, s.cwd, h.path_tip, h.path_length, p.sequence
FROM sessions s
LEFT JOIN session_heads h ON h.session_id = s.id
LEFT JOIN session_entries p ON p.id = COALESCE(:parent, h.active_entry_id)
WHERE s.id = :sid
"""

INSERT_SESSION = (
    "INSERT INTO sessions(id, title, harness, cwd, created_at, visibility) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)

# The walk, for a path not materialised (paths.py) or not to be trusted.
# Carries every column through the recursion so each step is one primary-key
# lookup. The depth bound (the session's entry count, or a tail's length less
# one) turns a corrupt cycle into a finite, detectable result. No ORDER BY:
# the recursion queue is FIFO, so rows come head-first and the reader reverses
# them (checked via the depth column) instead of SQLite sorting them.
ACTIVE_PATH = f"""
WITH RECURSIVE path({ENTRY_COLUMNS}, depth) AS (
    SELECT {ENTRY_COLUMNS}, 0 FROM session_entries
    WHERE id = (SELECT active_entry_id FROM session_heads WHERE session_id = :sid)
    UNION ALL
    SELECT e.id, e.session_id, e.parent_entry_id, e.sequence, e.semantic_schema_version,
           e.kind, e.payload, e.context_visibility, e.created_at, e.stamp, path.depth + 1
    FROM session_entries e JOIN path ON e.id = path.parent_entry_id
    WHERE path.depth
          < MIN(:stop, (SELECT MAX(sequence) FROM session_entries WHERE session_id = :sid))
)
SELECT {ENTRY_COLUMNS}, depth FROM path
"""

HEAD_STATE = """
SELECT s.quarantine, h.active_entry_id, h.path_tip, h.path_length
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id WHERE s.id = ?
"""

SESSION_ROW = """
SELECT s.id, s.title, s.harness, s.cwd, s.status, s.visibility, s.created_at,
       COALESCE(h.updated_at, s.created_at), h.active_entry_id,
       (SELECT COUNT(*) FROM session_entries WHERE session_id = s.id), s.quarantine,
       s.source_format, s.source_path, s.source_id, s.origin_cwd
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id
"""

# One row per session and nothing counted: what a watcher compares between polls.
HEADS = """
SELECT s.id, h.active_entry_id, COALESCE(h.updated_at, s.created_at), s.status
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id
"""

SESSION_ORDERS = {
    # rowid order is creation order, even within one millisecond.
    "created": " ORDER BY s.rowid",
    # Latest activity first (the head's last move, else creation), as the
    # `updated_at` a listing shows; newer sessions first on a tie.
    "updated": " ORDER BY COALESCE(h.updated_at, s.created_at) DESC, s.rowid DESC",
}

BY_SEQUENCE = f"SELECT {ENTRY_COLUMNS} FROM session_entries WHERE session_id = ? ORDER BY sequence"
# A page of entries by sequence: the (session_id, sequence) index, no OFFSET scan.
AFTER_SEQUENCE = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = ? AND sequence > ? ORDER BY sequence LIMIT ?"
)
SKELETON = (
    "SELECT id, parent_entry_id, sequence, kind, context_visibility, semantic_schema_version "
    "FROM session_entries WHERE session_id = ? ORDER BY sequence"
)
CHILDREN = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE parent_entry_id = ? AND session_id = ? ORDER BY sequence"
)
TIPS = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries e WHERE session_id = ? "
    "AND NOT EXISTS (SELECT 1 FROM session_entries c WHERE c.parent_entry_id = e.id) "
    "ORDER BY sequence"
)
CHECKPOINTS = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = ? AND kind = 'checkpoint' ORDER BY sequence"
)
LATEST_CHECKPOINT = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = ? AND kind = 'checkpoint' AND json_extract(payload, '$.label') = ? "
    "ORDER BY sequence DESC LIMIT 1"
)


# --- what id resolution reads (rules/refs.py decides) -----------------------------
SESSIONS_IN_RANGE = "SELECT id, title FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT ?"
COUNT_SESSIONS_IN_RANGE = "SELECT COUNT(*) FROM sessions WHERE id >= ? AND id < ?"
# An entry prefix first walks the id index over every session's ids in range,
# at most PREFIX_SCAN of them (a prefix of a few characters is that narrow in
# all but the largest stores); only a wider prefix reads the session's entries
# through the (session_id, sequence) index.
PREFIX_SCAN = 1000
ANY_ENTRIES_IN_RANGE = """
SELECT id, session_id, sequence, kind FROM session_entries
WHERE id >= ? AND id < ? ORDER BY id LIMIT ?
"""
ENTRIES_IN_RANGE = """
SELECT id, sequence, kind FROM session_entries
WHERE session_id = ? AND id >= ? AND id < ? ORDER BY id
"""
# A digit-only ref: the entry whose id it is, else the entry with that sequence
# number (the primary key and the (session_id, sequence) index, one row each).
ENTRY_BY_ID_OR_SEQUENCE = """
SELECT id, id = :ref FROM session_entries
WHERE session_id = :sid AND (id = :ref OR sequence = :seq)
"""
SESSION_TITLES = "SELECT id, title FROM sessions WHERE id IN (SELECT value FROM json_each(?))"
ENTRY_LABELS = (
    "SELECT id, sequence, kind FROM session_entries WHERE id IN (SELECT value FROM json_each(?))"
)


class SQLiteStore:
    """`Store` (store/base.py) over one `Database`."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self.location = str(db.path)
        self.readonly_why = db.readonly_why
        self.migrated = db.migrated
        # Entries this process appended since it last indexed (search/catchup.py): every
        # catchup.EVERY of them, an append indexes what is pending in its own
        # transaction, which bounds what a search must index before it reads.
        self._unindexed = 0
        # The rows of recently loaded active paths (paths.PathCache).
        self._paths = paths.PathCache()

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._db.read():
            yield

    def _readable(self, conn: sqlite3.Connection, session_id: str) -> str | None:
        """The session's head; raises if the session is unknown or quarantined."""
        return self._head_state(conn, session_id)[1]  # type: ignore[no-any-return]

    def _head_state(self, conn: sqlite3.Connection, session_id: str) -> tuple[Any, ...]:
        """(quarantine, head, path tip, path length); raises like `_readable`."""
        row = conn.execute(HEAD_STATE, (session_id,)).fetchone()
        if row is None:
            raise UnknownSession(session_id)
        if row[0] is not None:
            raise SessionQuarantined(session_id, row[0])
        return row  # type: ignore[no-any-return]

    # --- sessions ----------------------------------------------------------------

    def insert_session(self, row: NewSession) -> None:
        with self._db.write() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (row.id,)).fetchone():
                raise SessionExists(row.id)
            values = (row.id, row.title, row.harness, row.cwd, row.created_at, row.visibility)
            try:
                conn.execute(INSERT_SESSION, values)
            except sqlite3.IntegrityError as exc:
                refused = integrity.adoption_refused(exc, row.id)
                if refused is None:
                    raise
                raise refused from exc

    def session(self, session_id: str) -> SessionInfo:
        with self._db.read() as conn:
            row = conn.execute(SESSION_ROW + " WHERE s.id = ?", (session_id,)).fetchone()
        if row is None:
            raise UnknownSession(session_id)
        return SessionInfo(*row)

    def sessions(self, *, include_hidden: bool = True, order: str = "created") -> list[SessionInfo]:
        if order not in SESSION_ORDERS:
            raise InvalidArgument("order", f"expected created or updated; got {order!r}")
        where = "" if include_hidden else " WHERE s.visibility = 'top-level'"
        with self._db.read() as conn:
            rows = conn.execute(SESSION_ROW + where + SESSION_ORDERS[order]).fetchall()
        return [SessionInfo(*row) for row in rows]

    def heads(self) -> list[tuple[str, str | None, str, str]]:
        with self._db.read() as conn:
            return [(r[0], r[1], r[2], r[3]) for r in conn.execute(HEADS).fetchall()]

    def set_status(self, session_id: str, status: str) -> None:
        if status not in SessionStatus.__members__.values():
            raise InvalidArgument("status", f"expected active, ended or archived; got {status!r}")
        with self._db.write() as conn:
            done = conn.execute("UPDATE sessions SET status = ? WHERE id = ?", (status, session_id))
            if not done.rowcount:
                raise UnknownSession(session_id)

    def bind(self, session_id: str, directory: str) -> None:
        with self._db.write() as conn:
            row = conn.execute("SELECT cwd FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise UnknownSession(session_id)
            if row[0] is not None and row[0] != directory:
                raise SessionBound(session_id, row[0], directory)
            conn.execute("UPDATE sessions SET cwd = ? WHERE id = ?", (directory, session_id))

    def bound_directory(self, session_id: str) -> tuple[bool, str | None]:
        with self._db.read() as conn:
            row = conn.execute("SELECT cwd FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return (False, None) if row is None else (True, row[0])

    def session_exists(self, session_id: str) -> bool:
        with self._db.read() as conn:
            found = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return found is not None

    # --- writing -----------------------------------------------------------------

    def append(
        self,
        session_id: str,
        items: Sequence[NewEntry],
        parent: str | None,
        expect_head: str | Unset | None,
        now: str,
        stamping: Stamping,
    ) -> Appended:
        db = self._db
        with db.write():
            cursor = db.cursor
            assert cursor is not None
            done = self._append_in(cursor, session_id, items, parent, expect_head, now, stamping)
            self._index_now_and_then(cursor, len(items))
            return done

    def _index_now_and_then(self, cursor: sqlite3.Cursor, added: int) -> None:
        self._unindexed += added
        if self._unindexed >= catchup.EVERY:
            catchup.catch_up(cursor.connection)
            self._unindexed = 0

    def _append_in(
        self,
        conn: sqlite3.Cursor,
        session_id: str,
        items: Sequence[NewEntry],
        parent: str | None,
        expect_head: str | Unset | None,
        now: str,
        stamping: Stamping,
    ) -> Appended:
        """One append inside the caller's write transaction."""
        row = conn.execute(APPEND_STATE, {"sid": session_id, "parent": parent}).fetchone()
        state = AppendState(*row[:6]) if row is not None else None
        below, sequence = append_rules.checked(state, session_id, parent, expect_head)
        assert row is not None and state is not None  # checked() raised otherwise
        tip, length = row[6], row[7]
        if below is None or tip is None or tip != state.head or below != tip:
            # A branch, a first entry or a path not materialised: reach `below` first.
            length = paths.reach(conn, session_id, below, tip, state.head, length)
        text = stamping.text
        restamp = stamping.restamp
        if restamp is not None and state is not None and state.cwd != stamping.cwd:
            text = restamp(state.cwd)
        first = sequence
        link = below
        for item in items:
            conn.execute(
                INSERT_ENTRY,
                (item.id, session_id, link, sequence, 2, item.kind, item.body,
                 item.visibility, item.created_at, text),
            )  # fmt: skip
            link, sequence = item.id, sequence + 1
        if length is None:
            # The path below could not be built (damage): left stale, reads walk.
            conn.execute(paths.SET_HEAD, (session_id, link, now, None, None))
        else:
            paths.extend(conn, session_id, length, row[8], first)
            conn.execute(paths.SET_HEAD, (session_id, link, now, link, length + len(items)))
        return Appended(below, first, text)

    def append_group(self, group: Sequence[GroupedAppend]) -> list[Appended | ForestError]:
        """Several appends (to any sessions) in ONE transaction, each all or nothing:
        one that fails (HeadMoved, an unknown session, ...) is rolled back to its
        savepoint and answered with its error; the others commit together. A
        driver error (a full disk) rolls back and raises for all of them."""
        results: list[Appended | ForestError] = []
        db = self._db
        with db.write():
            cursor = db.cursor
            assert cursor is not None
            for one in group:
                cursor.execute("SAVEPOINT one_append")
                try:
                    results.append(self._append_in(cursor, *one))
                except ForestError as exc:
                    cursor.execute("ROLLBACK TO one_append")
                    results.append(exc)
                cursor.execute("RELEASE one_append")
            self._index_now_and_then(cursor, len(group))
        return results

    def move_head(
        self, session_id: str, entry_id: str, expect_head: str | Unset | None, now: str
    ) -> None:
        with self._db.write() as conn:
            _, head, tip, length = self._head_state(conn, session_id)
            owner = conn.execute(
                "SELECT session_id FROM session_entries WHERE id = ?", (entry_id,)
            ).fetchone()
            if owner is None:
                raise UnknownEntry(entry_id, session_id)
            if owner[0] != session_id:
                raise ForeignEntry(entry_id, session_id, owner[0])
            if expect_head is not UNSET and head != expect_head:
                raise HeadMoved(session_id, expect_head, head)  # type: ignore[arg-type]
            reached = paths.reach(conn, session_id, entry_id, tip, head, length)
            done = entry_id if reached is not None else None
            conn.execute(paths.SET_HEAD, (session_id, entry_id, now, done, reached))

    # --- reading -----------------------------------------------------------------

    def head(self, session_id: str) -> str | None:
        with self._db.read() as conn:
            return self._readable(conn, session_id)

    def entry(self, session_id: str, entry_id: str) -> Entry:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            row = conn.execute(
                f"SELECT {ENTRY_COLUMNS} FROM session_entries WHERE id = ?", (entry_id,)
            ).fetchone()
        if row is None:
            raise UnknownEntry(entry_id, session_id)
        if row[1] != session_id:
            raise ForeignEntry(entry_id, session_id, row[1])
        return reading.entry_of(row)

    def active_path(self, session_id: str, limit: int | None = None) -> list[Entry]:
        with self._db.read() as conn:
            _, head, tip, length = self._head_state(conn, session_id)
            if head is not None and tip == head and length:
                # Materialised (paths.py): ordered ranges, checked link by link; a
                # whole path through the cache, a tail of a path not cached by itself.
                low = 0 if limit is None else max(0, length - limit)
                if low == 0 or self._paths.holds(session_id, head):
                    found = self._paths.path(conn, session_id, head, length)
                    if found is not None:
                        return reading.entries_of(found[low:])
                else:
                    ranges = paths.spans(conn, session_id, length, low)
                    if ranges is not None:
                        rows = paths.rows(conn, session_id, ranges)
                        if paths.trusted(session_id, head, rows, False, length - low):
                            return reading.entries_of(rows)
            stop = WHOLE if limit is None else limit - 1
            rows = conn.execute(ACTIVE_PATH, {"sid": session_id, "stop": stop}).fetchall()
        whole = limit is None or len(rows) < limit
        return reading.path_of(session_id, head, rows, whole=whole)

    def entries(self, session_id: str) -> list[Entry]:
        return self._rows(BY_SEQUENCE, session_id, (session_id,))

    def iter_entries(self, session_id: str, batch: int = 1000) -> Iterator[Entry]:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            cursor = conn.execute(BY_SEQUENCE, (session_id,))
            while rows := cursor.fetchmany(batch):
                yield from reading.entries_of(rows)

    def entries_after(self, session_id: str, after: int, limit: int) -> list[Entry]:
        return self._rows(AFTER_SEQUENCE, session_id, (session_id, after, limit))

    def skeleton(self, session_id: str) -> list[Node]:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            rows = conn.execute(SKELETON, (session_id,)).fetchall()
        return reading.nodes_of(session_id, rows)

    def children(self, session_id: str, entry_id: str) -> list[Entry]:
        with self._db.read():
            self.entry(session_id, entry_id)
            return self._rows(CHILDREN, session_id, (entry_id, session_id))

    def tips(self, session_id: str) -> list[Entry]:
        return self._rows(TIPS, session_id, (session_id,))

    def checkpoints(self, session_id: str) -> list[Entry]:
        return self._rows(CHECKPOINTS, session_id, (session_id,))

    def latest_checkpoint(self, session_id: str, label: str) -> Entry | None:
        found = self._rows(LATEST_CHECKPOINT, session_id, (session_id, label))
        return found[0] if found else None

    def branches(self, session_id: str) -> int:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            return int(conn.execute(BRANCHES, (session_id,)).fetchone()[0])

    def _rows(self, sql: str, session_id: str, args: tuple[Any, ...]) -> list[Entry]:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            rows = conn.execute(sql, args).fetchall()
        return reading.entries_of(rows)

    # --- integrity ---------------------------------------------------------------

    def check(self, *, quarantine: bool = True) -> CheckReport:
        if not quarantine:
            with self._db.read() as conn:
                return integrity.scan(conn)
        with self._db.write() as conn:
            report = integrity.scan(conn)
            integrity.apply_quarantine(conn, report)
        return report

    def repair(self, session_id: str, now: str) -> RepairReport:
        with self._db.write() as conn:
            return repair_session(conn, session_id, now)

    # --- what id resolution reads --------------------------------------------------

    def sessions_in_range(self, low: str, high: str | bytes, limit: int) -> list[tuple[str, str]]:
        with self._db.read() as conn:
            return conn.execute(SESSIONS_IN_RANGE, (low, high, limit)).fetchall()

    def count_sessions_in_range(self, low: str, high: str | bytes) -> int:
        with self._db.read() as conn:
            return int(conn.execute(COUNT_SESSIONS_IN_RANGE, (low, high)).fetchone()[0])

    def entry_by_id_or_sequence(self, session_id: str, ref: str) -> str | None:
        with self._db.read() as conn:
            found = conn.execute(
                ENTRY_BY_ID_OR_SEQUENCE, {"sid": session_id, "ref": ref, "seq": int(ref)}
            ).fetchall()
        # An exact id wins over a sequence number.
        return max(found, key=lambda row: row[1])[0] if found else None

    def entries_in_range(
        self, session_id: str, low: str, high: str | bytes
    ) -> list[tuple[str, int, str]]:
        with self._db.read() as conn:
            scanned = conn.execute(ANY_ENTRIES_IN_RANGE, (low, high, PREFIX_SCAN)).fetchall()
            if len(scanned) < PREFIX_SCAN:
                return [(i, seq, kind) for i, sid, seq, kind in scanned if sid == session_id]
            return conn.execute(ENTRIES_IN_RANGE, (session_id, low, high)).fetchall()

    def near_misses(self, session_id: str | None) -> Iterator[str]:
        with self._db.read() as conn:
            if session_id is None:
                rows = conn.execute("SELECT id FROM sessions")
            else:
                rows = conn.execute(
                    "SELECT id FROM session_entries WHERE session_id = ?", (session_id,)
                )
            for (found,) in rows:
                yield found

    def session_labels(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return self._labels(SESSION_TITLES, ("id", "title"), ids)

    def entry_labels(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return self._labels(ENTRY_LABELS, ("id", "sequence", "kind"), ids)

    def _labels(
        self, sql: str, keys: Sequence[str], ids: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        with self._db.read() as conn:
            rows = conn.execute(sql, (orjson.dumps(list(ids)).decode(),)).fetchall()
        return {row[0]: dict(zip(keys, row, strict=True)) for row in rows}
