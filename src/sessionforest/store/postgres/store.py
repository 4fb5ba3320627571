"""Sessions, entries and heads on PostgreSQL: the `Store` contract of store/base.py.

An append locks its session's row (`FOR UPDATE`, in its own statement), then
reads the head and the highest sequence in a fresh snapshot: writers of one
session queue on that lock from any process or host, so sequences are
gap-free and unique (the (session_id, sequence) key would refuse a duplicate
anyway). Reads that walk a branch are one recursive query; rules/ decides.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import orjson
import psycopg

from ...errors import (
    ForeignEntry,
    ForestError,
    HeadMoved,
    InvalidArgument,
    SessionBound,
    SessionDamaged,
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
from . import integrity
from .database import Database
from .rows import (
    BRANCHES,
    E_COLUMNS,
    ENTRY_COLUMNS,
    INSERT_ENTRIES,
    LOCK_SESSION,
    OWNER,
    UPSERT_HEAD,
    searchable,
)
from .schema import ADOPTION_REFUSED

# Read after the session's lock, in a fresh snapshot: everything an append checks.
APPEND_STATE = """
SELECT s.quarantine, h.active_entry_id,
       (SELECT MAX(sequence) FROM session_entries WHERE session_id = s.id),
       p.session_id, p.semantic_schema_version, s.cwd,
       COALESCE(%(parent)s, h.active_entry_id)
FROM sessions s
LEFT JOIN session_heads h ON h.session_id = s.id
LEFT JOIN session_entries p
       ON p.session_id = s.id AND p.id = COALESCE(%(parent)s, h.active_entry_id)
WHERE s.id = %(sid)s
"""

INSERT_SESSION = (
    "INSERT INTO sessions(id, title, harness, cwd, created_at, visibility) "
    "VALUES (%s, %s, %s, %s, %s, %s)"
)

# Every column carried through the recursion; bounded by the session's entry
# count, so a corrupt cycle ends (as SQLite's ACTIVE_PATH).
ACTIVE_PATH = f"""
WITH RECURSIVE path(id, session_id, parent_entry_id, sequence, semantic_schema_version, kind,
                    payload, context_visibility, created_at, stamp, depth) AS (
    SELECT {ENTRY_COLUMNS}, 0 FROM session_entries
    WHERE session_id = %(sid)s
      AND id = (SELECT active_entry_id FROM session_heads WHERE session_id = %(sid)s)
    UNION ALL
    SELECT {E_COLUMNS}, path.depth + 1
    FROM session_entries e JOIN path ON e.session_id = %(sid)s AND e.id = path.parent_entry_id
    WHERE path.depth < LEAST(
        %(stop)s, (SELECT MAX(sequence) FROM session_entries WHERE session_id = %(sid)s))
)
SELECT {ENTRY_COLUMNS}, depth FROM path
"""
WHOLE = 1 << 62  # no stop: the whole path

# A head that is not in the session: pointed elsewhere (damage) or nowhere.
HEAD_ROW = f"SELECT {ENTRY_COLUMNS} FROM session_entries WHERE id = %s LIMIT 1"

HEAD_STATE = """
SELECT s.quarantine, h.active_entry_id
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id WHERE s.id = %s
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
    "created": " ORDER BY s.num",
    "updated": " ORDER BY COALESCE(h.updated_at, s.created_at) DESC, s.num DESC",
}

BY_SEQUENCE = f"SELECT {ENTRY_COLUMNS} FROM session_entries WHERE session_id = %s ORDER BY sequence"
AFTER_SEQUENCE = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = %s AND sequence > %s ORDER BY sequence LIMIT %s"
)
SKELETON = (
    "SELECT id, parent_entry_id, sequence, kind, context_visibility, semantic_schema_version "
    "FROM session_entries WHERE session_id = %s ORDER BY sequence"
)
CHILDREN = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = %s AND parent_entry_id = %s ORDER BY sequence"
)
TIPS = (
    f"SELECT {E_COLUMNS} FROM session_entries e WHERE session_id = %s "
    "AND NOT EXISTS (SELECT 1 FROM session_entries c "
    "WHERE c.session_id = e.session_id AND c.parent_entry_id = e.id) "
    "ORDER BY sequence"
)
CHECKPOINTS = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = %s AND kind = 'checkpoint' ORDER BY sequence"
)
# Newest first; the label is compared in Python (a payload may hold what jsonb refuses).
CHECKPOINTS_NEWEST = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = %s AND kind = 'checkpoint' ORDER BY sequence DESC"
)
ENTRY_ROW = f"SELECT {ENTRY_COLUMNS} FROM session_entries WHERE session_id = %s AND id = %s"

SESSIONS_IN_RANGE = (
    'SELECT id, title FROM sessions WHERE id >= %s AND id < %s ORDER BY id COLLATE "C" LIMIT %s'
)
COUNT_SESSIONS_IN_RANGE = "SELECT COUNT(*) FROM sessions WHERE id >= %s AND id < %s"
ENTRIES_IN_RANGE = """
SELECT id, sequence, kind FROM session_entries
WHERE session_id = %s AND id >= %s AND id < %s ORDER BY id COLLATE "C"
"""
ENTRY_BY_ID_OR_SEQUENCE = """
SELECT id, id = %(ref)s FROM session_entries
WHERE session_id = %(sid)s AND (id = %(ref)s OR sequence = %(seq)s)
"""
SESSION_TITLES = "SELECT id, title FROM sessions WHERE id = ANY(%s)"
ENTRY_LABELS = "SELECT id, sequence, kind FROM session_entries WHERE id = ANY(%s)"


def _high(high: str | bytes) -> str:
    """A range's upper bound as text (refs give bytes b"\\xff"-style sentinels)."""
    if isinstance(high, bytes):
        return high.decode("utf-8", "replace").replace("\ufffd", "\U0010ffff")
    return high


class PostgresStore:
    """`Store` (store/base.py) over one PostgreSQL `Database`."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self.location = db.where
        self.readonly_why = db.readonly_why
        self.migrated = db.migrated

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._db.read():
            yield

    def _readable(self, conn: psycopg.Connection[Any], session_id: str) -> str | None:
        row = conn.execute(HEAD_STATE, (session_id,)).fetchone()
        if row is None:
            raise UnknownSession(session_id)
        if row[0] is not None:
            raise SessionQuarantined(session_id, row[0])
        return row[1]  # type: ignore[no-any-return]

    # --- sessions ----------------------------------------------------------------

    def insert_session(self, row: NewSession) -> None:
        values = (row.id, row.title, row.harness, row.cwd, row.created_at, row.visibility)
        with self._db.write() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = %s", (row.id,)).fetchone():
                raise SessionExists(row.id)
            try:
                with conn.transaction():
                    conn.execute(INSERT_SESSION, values)
            except psycopg.errors.UniqueViolation as exc:
                raise SessionExists(row.id) from exc
            except psycopg.errors.RaiseException as exc:
                raise adoption_refused(exc, row.id) from exc

    def session(self, session_id: str) -> SessionInfo:
        with self._db.read() as conn:
            row = conn.execute(SESSION_ROW + " WHERE s.id = %s", (session_id,)).fetchone()
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
            done = conn.execute(
                "UPDATE sessions SET status = %s WHERE id = %s", (status, session_id)
            )
            if not done.rowcount:
                raise UnknownSession(session_id)

    def bind(self, session_id: str, directory: str) -> None:
        with self._db.write() as conn:
            row = conn.execute(
                "SELECT cwd FROM sessions WHERE id = %s FOR UPDATE", (session_id,)
            ).fetchone()
            if row is None:
                raise UnknownSession(session_id)
            if row[0] is not None and row[0] != directory:
                raise SessionBound(session_id, row[0], directory)
            conn.execute("UPDATE sessions SET cwd = %s WHERE id = %s", (directory, session_id))

    def bound_directory(self, session_id: str) -> tuple[bool, str | None]:
        with self._db.read() as conn:
            row = conn.execute("SELECT cwd FROM sessions WHERE id = %s", (session_id,)).fetchone()
        return (False, None) if row is None else (True, row[0])

    def session_exists(self, session_id: str) -> bool:
        with self._db.read() as conn:
            found = conn.execute("SELECT 1 FROM sessions WHERE id = %s", (session_id,)).fetchone()
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
        def work(conn: psycopg.Connection[Any]) -> Appended:
            return _append_in(conn, session_id, items, parent, expect_head, now, stamping)

        return self._db.retrying(work)  # type: ignore[no-any-return]

    def append_group(self, group: Sequence[GroupedAppend]) -> list[Appended | ForestError]:
        """Several appends in ONE transaction, each all or nothing (a savepoint each)."""

        def work(conn: psycopg.Connection[Any]) -> list[Appended | ForestError]:
            results: list[Appended | ForestError] = []
            for one in group:
                try:
                    with conn.transaction():
                        results.append(_append_in(conn, *one))
                except ForestError as exc:
                    results.append(exc)
            return results

        return self._db.retrying(work)  # type: ignore[no-any-return]

    def move_head(
        self, session_id: str, entry_id: str, expect_head: str | Unset | None, now: str
    ) -> None:
        with self._db.write() as conn:
            conn.execute(LOCK_SESSION, (session_id,))
            head = self._readable(conn, session_id)
            owner = _owner(conn, session_id, entry_id)
            if owner is None:
                raise UnknownEntry(entry_id, session_id)
            if owner != session_id:
                raise ForeignEntry(entry_id, session_id, owner)
            if expect_head is not UNSET and head != expect_head:
                raise HeadMoved(session_id, expect_head, head)  # type: ignore[arg-type]
            conn.execute(UPSERT_HEAD, (session_id, entry_id, now))

    # --- reading -----------------------------------------------------------------

    def head(self, session_id: str) -> str | None:
        with self._db.read() as conn:
            return self._readable(conn, session_id)

    def entry(self, session_id: str, entry_id: str) -> Entry:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            row = conn.execute(ENTRY_ROW, (session_id, entry_id)).fetchone()
            if row is None:
                owner = conn.execute(OWNER, (entry_id,)).fetchone()
                if owner is None:
                    raise UnknownEntry(entry_id, session_id)
                raise ForeignEntry(entry_id, session_id, owner[0])
        return reading.entry_of(row)

    def active_path(self, session_id: str, limit: int | None = None) -> list[Entry]:
        # The walk from the head, stopped after `limit` entries for a tail (an
        # index probe per step, so a tail costs O(limit) whatever the history).
        stop = WHOLE if limit is None else limit - 1
        with self._db.read() as conn:
            head = self._readable(conn, session_id)
            rows = conn.execute(ACTIVE_PATH, {"sid": session_id, "stop": stop}).fetchall()
            if head is not None and not rows:
                found = conn.execute(HEAD_ROW, (head,)).fetchone()
                if found is not None:  # another session's entry: path_of names it
                    rows = [(*found, 0)]
        whole = limit is None or len(rows) < limit
        return reading.path_of(session_id, head, rows, whole=whole)

    def entries(self, session_id: str) -> list[Entry]:
        return self._rows(BY_SEQUENCE, session_id, (session_id,))

    def iter_entries(self, session_id: str, batch: int = 1000) -> Iterator[Entry]:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            cursor = conn.cursor()
            cursor.execute(BY_SEQUENCE, (session_id,))
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
            return self._rows(CHILDREN, session_id, (session_id, entry_id))

    def tips(self, session_id: str) -> list[Entry]:
        return self._rows(TIPS, session_id, (session_id,))

    def checkpoints(self, session_id: str) -> list[Entry]:
        return self._rows(CHECKPOINTS, session_id, (session_id,))

    def latest_checkpoint(self, session_id: str, label: str) -> Entry | None:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            with conn.cursor() as cur:
                cur.execute(CHECKPOINTS_NEWEST, (session_id,))
                for row in cur:
                    try:
                        found = orjson.loads(row[6])
                    except orjson.JSONDecodeError:
                        continue
                    if isinstance(found, dict) and found.get("label") == label:
                        return reading.entry_of(row)
        return None

    def branches(self, session_id: str) -> int:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            return int(conn.execute(BRANCHES, (session_id,)).fetchone()[0])  # type: ignore[index]

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
            return integrity.repair_session(conn, session_id, now)

    # --- what id resolution reads --------------------------------------------------

    def sessions_in_range(self, low: str, high: str | bytes, limit: int) -> list[tuple[str, str]]:
        with self._db.read() as conn:
            return [tuple(r) for r in conn.execute(SESSIONS_IN_RANGE, (low, _high(high), limit))]

    def count_sessions_in_range(self, low: str, high: str | bytes) -> int:
        with self._db.read() as conn:
            row = conn.execute(COUNT_SESSIONS_IN_RANGE, (low, _high(high))).fetchone()
        return int(row[0])  # type: ignore[index]

    def entry_by_id_or_sequence(self, session_id: str, ref: str) -> str | None:
        with self._db.read() as conn:
            found = conn.execute(
                ENTRY_BY_ID_OR_SEQUENCE, {"sid": session_id, "ref": ref, "seq": int(ref)}
            ).fetchall()
        return max(found, key=lambda row: row[1])[0] if found else None

    def entries_in_range(
        self, session_id: str, low: str, high: str | bytes
    ) -> list[tuple[str, int, str]]:
        with self._db.read() as conn:
            rows = conn.execute(ENTRIES_IN_RANGE, (session_id, low, _high(high))).fetchall()
        return [tuple(r) for r in rows]

    def near_misses(self, session_id: str | None) -> Iterator[str]:
        with self._db.read() as conn:
            if session_id is None:
                rows = conn.execute("SELECT id FROM sessions").fetchall()
            else:
                rows = conn.execute(
                    "SELECT id FROM session_entries WHERE session_id = %s", (session_id,)
                ).fetchall()
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
            rows = conn.execute(sql, (list(ids),)).fetchall()
        return {row[0]: dict(zip(keys, row, strict=True)) for row in rows}


def _owner(conn: psycopg.Connection[Any], session_id: str, entry_id: str) -> str | None:
    """The session holding `entry_id` (this one's first, by its key), or None."""
    if conn.execute(
        "SELECT 1 FROM session_entries WHERE session_id = %s AND id = %s", (session_id, entry_id)
    ).fetchone():
        return session_id
    row = conn.execute(OWNER, (entry_id,)).fetchone()
    return row[0] if row is not None else None


def _append_in(
    conn: psycopg.Connection[Any],
    session_id: str,
    items: Sequence[NewEntry],
    parent: str | None,
    expect_head: str | Unset | None,
    now: str,
    stamping: Stamping,
) -> Appended:
    """One append inside the caller's write transaction."""
    conn.execute(LOCK_SESSION, (session_id,))
    row = conn.execute(APPEND_STATE, {"sid": session_id, "parent": parent}).fetchone()
    state = None
    if row is not None:
        below_id = row[6]
        owner, version = row[3], row[4]
        if below_id is not None and owner is None:
            found = conn.execute(OWNER, (below_id,)).fetchone()  # a foreign or missing entry
            if found is not None:
                owner, version = found[0], found[2]
        state = AppendState(row[0], row[1], row[2], owner, version, row[5])
    below, sequence = append_rules.checked(state, session_id, parent, expect_head)
    text = stamping.text
    restamp = stamping.restamp
    if restamp is not None and state is not None and state.cwd != stamping.cwd:
        text = restamp(state.cwd)
    first = sequence
    link = below
    rows = []
    for item in items:
        words, spaceless = searchable(item.kind, item.payload)
        rows.append((item.id, session_id, link, sequence, 2, item.kind, item.body,
                     item.visibility, item.created_at, text, words, spaceless))  # fmt: skip
        link, sequence = item.id, sequence + 1
    columns = [list(c) for c in zip(*rows, strict=True)]
    # The entries and the head move in one statement (one round trip, one trigger run).
    conn.execute(
        f"WITH added AS ({INSERT_ENTRIES} RETURNING 1) {UPSERT_HEAD}",
        [*columns, session_id, link, now],
    )
    return Appended(below, first, text)


def adoption_refused(exc: psycopg.Error, session_id: str) -> ForestError:
    if ADOPTION_REFUSED not in str(exc):
        raise exc
    return SessionDamaged(
        session_id,
        "entries (or a head) of an earlier session with this id remain after its row was "
        f"deleted; a new session would adopt them. `forest repair {session_id}` recreates "
        "the row instead",
    )
