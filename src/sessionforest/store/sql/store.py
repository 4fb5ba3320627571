"""The part of the `Store` contract (store/base/store.py) both SQL backends run alike.

`SQLStore` holds every read and write whose SQL and logic are the same on
SQLite and PostgreSQL once placeholders are translated; a backend subclasses
it and keeps only what truly differs: its append (SQLite keeps the active path
materialised, PostgreSQL locks the session's row and inserts arrays), head
moves, the active path, lookups where entries are keyed differently (by id on
SQLite, by (session_id, id) on PostgreSQL) and how its driver reports a
refused session row. The checks on what comes out are rules/reading.py's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic

from ...errors import (
    InvalidArgument,
    SessionBound,
    SessionExists,
    SessionQuarantined,
    UnknownSession,
)
from ...model import CheckReport, Entry, Node, RepairReport, SessionInfo, SessionStatus
from ...rules import reading
from ..base import NewSession, parse_session_cursor
from .dialect import C, Database, Dialect, Row
from .integrity import Integrity
from .rows import ENTRY_COLUMNS, INSERT_NEW_SESSION, column_names

# A SessionInfo, each column under its field's name (SessionInfo.from_columns).
SESSION_ROW = """
SELECT s.id AS id, s.title AS title, s.harness AS harness, s.cwd AS cwd,
       s.origin_cwd AS origin_cwd, s.git_branch AS git_branch, s.git_commit AS git_commit,
       s.git_repository AS git_repository, s.origin_project AS origin_project,
       s.status AS status, s.visibility AS visibility,
       s.created_at AS created_at, COALESCE(h.updated_at, s.created_at) AS updated_at,
       h.active_entry_id AS head,
       COALESCE((SELECT MAX(sequence) FROM session_entries WHERE session_id = s.id), 0)
           AS entry_count,
       COALESCE(h.messages, 0) AS messages,
       s.quarantine AS quarantine, s.source_format AS source_format,
       s.source_path AS source_path, s.source_id AS source_id
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id
"""

# A session's entries are numbered 1..n with no gap (`check` reports a gap as
# damage), so its entry count is its newest sequence: one seek of the
# (session_id, sequence) index, kept with every append, instead of counting rows.

# A page of sessions: the page's ids chosen first, then the rows of those only. By
# activity the head rows are sorted (every session has one: migration
# session_listing), keeping the newest `limit` (a top-N sort, no index: appends move
# `updated_at`, and an index of it would cost each append); by creation, the rowid
# (SQLite) or `num` (PostgreSQL). `{after}` is the keyset condition of a cursor:
# the page continues after the row the cursor names at the cost of one page,
# however many rows came before (an offset skips them one by one).
# (CROSS JOIN: SQLite then reads the head rows as the outer loop; PostgreSQL plans
# it as any inner join.)
SESSION_PAGE_IDS = {
    "created": "SELECT s.id FROM sessions s WHERE TRUE{where}{sort} LIMIT ? OFFSET ?",
    "updated": (
        "SELECT h.session_id FROM session_heads h CROSS JOIN sessions s "
        "WHERE s.id = h.session_id{where}{sort} LIMIT ? OFFSET ?"
    ),
}
# A cursor's condition, by order: after a creation key (the named session's own),
# or below an activity key (the (updated_at, session_id) pair the cursor holds).
AFTER = {
    "created": "s.{order} > (SELECT {order} FROM sessions WHERE id = ?)",
    "updated": "(h.updated_at, h.session_id) < (?, ?)",
}
COUNT_SESSIONS = "SELECT COUNT(*) FROM sessions s"
TOP_LEVEL = " WHERE s.visibility = 'top-level'"
PAGE_TOP_LEVEL = " AND s.visibility = 'top-level'"

# One row per session and nothing counted: what a watcher compares between polls.
HEADS = """
SELECT s.id, h.active_entry_id, COALESCE(h.updated_at, s.created_at), s.status, s.title
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id
"""

SESSION_ORDERS = {
    # Creation order, even within one millisecond.
    "created": " ORDER BY s.{order}",
    # Latest activity first (the last append, else creation; a head move is not
    # activity), as the `updated_at` a listing shows; newer sessions first on a tie.
    # (Every session has a head row, whose `updated_at` is its creation time until
    # the first append; ties, in one millisecond, by session id.)
    "updated": " ORDER BY h.updated_at DESC, h.session_id DESC",
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
    "WHERE session_id = ? AND parent_entry_id = ? ORDER BY sequence"
)
TIPS = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries e WHERE session_id = ? "
    "AND NOT EXISTS (SELECT 1 FROM session_entries c "
    "WHERE c.session_id = e.session_id AND c.parent_entry_id = e.id) "
    "ORDER BY sequence"
)
CHECKPOINTS = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = ? AND kind = 'checkpoint' ORDER BY sequence"
)

# --- what id resolution reads (rules/refs.py decides) -----------------------------
# `{binary}` orders ids byte by byte (SQLite's default; PostgreSQL's "C" collation).
SESSIONS_IN_RANGE = (
    "SELECT id, title FROM sessions WHERE id >= ? AND id < ? ORDER BY id{binary} LIMIT ?"
)
COUNT_SESSIONS_IN_RANGE = "SELECT COUNT(*) FROM sessions WHERE id >= ? AND id < ?"
# A digit-only ref: the entry whose id it is, else the entry with that sequence
# number (the key and the (session_id, sequence) index, one row each).
ENTRY_BY_ID_OR_SEQUENCE = """
SELECT id, id = :ref FROM session_entries
WHERE session_id = :sid AND (id = :ref OR sequence = :seq)
"""
# A chat's messages (rows.IS_MESSAGE, every branch): the count its head row keeps.
MESSAGES = "SELECT COALESCE(MAX(messages), 0) FROM session_heads WHERE session_id = ?"
SESSION_IDS = "SELECT id FROM sessions"
ENTRY_IDS = "SELECT id FROM session_entries WHERE session_id = ?"


class Statements:
    """The shared statements in one dialect, plus the backend's own few (`head_state`:
    quarantine and head first; `branches`; optionally `children` and `tips`, whose
    parameters are the session id and, for `children`, the entry id), given in the
    backend's own dialect."""

    def __init__(
        self,
        d: Dialect,
        *,
        head_state: str,
        branches: str,
        binary: str,
        children: str | None = None,
        tips: str | None = None,
    ) -> None:
        self.head_state = head_state
        self.branches = branches
        self.insert_session = d.sql(INSERT_NEW_SESSION)
        self.session_known = d.sql("SELECT 1 FROM sessions WHERE id = ?")
        self.session_row = d.sql(SESSION_ROW)
        self.one_session = d.sql(SESSION_ROW + " WHERE s.id = ?")
        self.heads = d.sql(HEADS)
        self.orders = {k: d.sql(v) for k, v in SESSION_ORDERS.items()}
        self.session_page = {
            (where, k, after): d.sql(
                SESSION_ROW
                + " WHERE s.id IN ("
                + SESSION_PAGE_IDS[k]
                .replace("{where}", where + (f" AND {AFTER[k]}" if after else ""))
                .replace("{sort}", v)
                + ")"
                + v
            )
            for k, v in SESSION_ORDERS.items()
            for where in ("", PAGE_TOP_LEVEL)
            for after in (False, True)
        }
        self.set_status = d.sql("UPDATE sessions SET status = ? WHERE id = ?")
        self.rename = d.sql("UPDATE sessions SET title = ?, renamed = ? WHERE id = ?")
        self.cwd = d.sql("SELECT cwd FROM sessions WHERE id = ?")
        self.set_cwd = d.sql("UPDATE sessions SET cwd = ? WHERE id = ?")
        self.by_sequence = d.sql(BY_SEQUENCE)
        self.after_sequence = d.sql(AFTER_SEQUENCE)
        self.skeleton = d.sql(SKELETON)
        # A backend whose parent index differs gives its own (SQLite: rows.py).
        self.children = children if children is not None else d.sql(CHILDREN)
        self.tips = tips if tips is not None else d.sql(TIPS)
        self.checkpoints = d.sql(CHECKPOINTS)
        self.messages = d.sql(MESSAGES)
        self.sessions_in_range = d.sql(SESSIONS_IN_RANGE.replace("{binary}", binary))
        self.count_sessions_in_range = d.sql(COUNT_SESSIONS_IN_RANGE)
        self.entry_by_id_or_sequence = d.sql(ENTRY_BY_ID_OR_SEQUENCE)
        self.session_ids = d.sql(SESSION_IDS)
        self.entry_ids = d.sql(ENTRY_IDS)


class SQLStore(Generic[C]):
    """The shared half of a SQL `Store`; see the module docstring for the other half.

    `db` is the backend's `Database` (read()/write() yielding a connection, and
    `readonly_why`, `migrated`); `labels` the session-title and entry-label
    queries, each taking the id list `_id_list` makes. A subclass implements
    the hooks below.
    """

    def __init__(
        self,
        db: Database[C],
        location: str,
        q: Statements,
        integrity: Integrity[C],
        labels: tuple[str, str],
    ) -> None:
        self._db = db
        self._q = q
        self._integrity = integrity
        self._session_titles, self._entry_labels = labels
        self.location = location
        self.readonly_why: str | None = db.readonly_why
        self.migrated: list[str] = db.migrated

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def reading(self) -> Iterator[None]:
        with self._db.read():
            yield

    # --- hooks ---------------------------------------------------------------------

    def _insert_session_row(self, conn: C, values: Row, session_id: str) -> None:
        """Insert the session row, mapping the driver's refusals to the store's errors."""
        raise NotImplementedError

    def _bind_lock(self) -> str:
        """What `bind` appends to its read of the row (PostgreSQL: a row lock)."""
        return ""

    def _high(self, high: str | bytes) -> str | bytes:
        """A range's upper bound as the driver compares it."""
        return high

    def _id_list(self, ids: Sequence[str]) -> str | list[str]:
        """`ids` as the one parameter the label queries take (JSON text, or a list)."""
        raise NotImplementedError

    # --- sessions ----------------------------------------------------------------

    def _readable(self, conn: C, session_id: str) -> str | None:
        """The session's head; raises if the session is unknown or quarantined."""
        return self._head_state(conn, session_id)[1]  # type: ignore[no-any-return]

    def _head_state(self, conn: C, session_id: str) -> Row:
        """The backend's head-state row (quarantine and head first); raises like `_readable`."""
        row = conn.execute(self._q.head_state, (session_id,)).fetchone()
        if row is None:
            raise UnknownSession(session_id)
        if row[0] is not None:
            raise SessionQuarantined(session_id, row[0])
        return row  # type: ignore[no-any-return]

    def insert_session(self, row: NewSession) -> None:
        # rows.NEW_SESSION_COLUMNS: the status and the source columns keep their defaults
        values = (row.id, row.title, row.harness, row.cwd, row.created_at, row.visibility)
        with self._db.write() as conn:
            if conn.execute(self._q.session_known, (row.id,)).fetchone():
                raise SessionExists(row.id)
            self._insert_session_row(conn, values, row.id)

    def session(self, session_id: str) -> SessionInfo:
        with self._db.read() as conn:
            cursor = conn.execute(self._q.one_session, (session_id,))
            found = SessionInfo.from_rows(column_names(cursor.description), cursor.fetchall())
        if not found:
            raise UnknownSession(session_id)
        return found[0]

    def sessions(
        self,
        *,
        include_hidden: bool = True,
        order: str = "created",
        limit: int | None = None,
        offset: int = 0,
        after: str | None = None,
    ) -> list[SessionInfo]:
        if order not in self._q.orders:
            raise InvalidArgument("order", f"expected created or updated; got {order!r}")
        where = "" if include_hidden else TOP_LEVEL
        ordered = self._q.orders[order]
        params: tuple[object, ...] = ()
        if limit is None and not offset and after is None:
            sql = self._q.session_row + where + ordered
        else:
            top = "" if include_hidden else PAGE_TOP_LEVEL
            sql = self._q.session_page[(top, order, after is not None)]
            if after is not None:
                params = _cursor_params(order, after)
            # An offset alone: a limit no store reaches (both dialects take a bigint).
            params = (*params, limit if limit is not None else 2**62, offset)
        with self._db.read() as conn:
            cursor = conn.execute(sql, params)
            return SessionInfo.from_rows(column_names(cursor.description), cursor.fetchall())

    def count_sessions(self, *, include_hidden: bool = True) -> int:
        where = "" if include_hidden else TOP_LEVEL
        with self._db.read() as conn:
            return int(conn.execute(COUNT_SESSIONS + where).fetchone()[0])

    def heads(self) -> list[tuple[str, str | None, str, str, str]]:
        with self._db.read() as conn:
            rows = conn.execute(self._q.heads).fetchall()
            return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def set_status(self, session_id: str, status: str) -> None:
        if status not in SessionStatus.__members__.values():
            raise InvalidArgument("status", f"expected active, ended or archived; got {status!r}")
        with self._db.write() as conn:
            done = conn.execute(self._q.set_status, (status, session_id))
            if not done.rowcount:
                raise UnknownSession(session_id)

    def rename(self, session_id: str, title: str) -> None:
        with self._db.write() as conn:
            if not conn.execute(self._q.rename, (title, True, session_id)).rowcount:
                raise UnknownSession(session_id)

    def bind(self, session_id: str, directory: str) -> None:
        with self._db.write() as conn:
            row = conn.execute(self._q.cwd + self._bind_lock(), (session_id,)).fetchone()
            if row is None:
                raise UnknownSession(session_id)
            if row[0] is not None and row[0] != directory:
                raise SessionBound(session_id, row[0], directory)
            conn.execute(self._q.set_cwd, (directory, session_id))

    def bound_directory(self, session_id: str) -> tuple[bool, str | None]:
        with self._db.read() as conn:
            row = conn.execute(self._q.cwd, (session_id,)).fetchone()
        return (False, None) if row is None else (True, row[0])

    def session_exists(self, session_id: str) -> bool:
        with self._db.read() as conn:
            found = conn.execute(self._q.session_known, (session_id,)).fetchone()
        return found is not None

    # --- reading -----------------------------------------------------------------

    def head(self, session_id: str) -> str | None:
        with self._db.read() as conn:
            return self._readable(conn, session_id)

    def entry(self, session_id: str, entry_id: str) -> Entry:
        raise NotImplementedError

    def entries(self, session_id: str) -> list[Entry]:
        return self._rows(self._q.by_sequence, session_id, (session_id,))

    def iter_entries(self, session_id: str, batch: int = 1000) -> Iterator[Entry]:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            cursor = conn.execute(self._q.by_sequence, (session_id,))
            while rows := cursor.fetchmany(batch):
                yield from reading.entries_of(rows)

    def entries_after(self, session_id: str, after: int, limit: int) -> list[Entry]:
        return self._rows(self._q.after_sequence, session_id, (session_id, after, limit))

    def skeleton(self, session_id: str) -> list[Node]:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            rows = conn.execute(self._q.skeleton, (session_id,)).fetchall()
        return reading.nodes_of(session_id, rows)

    def children(self, session_id: str, entry_id: str) -> list[Entry]:
        with self._db.read():
            self.entry(session_id, entry_id)
            return self._rows(self._q.children, session_id, (session_id, entry_id))

    def tips(self, session_id: str) -> list[Entry]:
        return self._rows(self._q.tips, session_id, (session_id,))

    def checkpoints(self, session_id: str) -> list[Entry]:
        return self._rows(self._q.checkpoints, session_id, (session_id,))

    def branches(self, session_id: str) -> int:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            return int(conn.execute(self._q.branches, (session_id,)).fetchone()[0])

    def messages(self, session_id: str) -> int:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            return int(conn.execute(self._q.messages, (session_id,)).fetchone()[0])

    def _rows(self, sql: str, session_id: str, args: Row) -> list[Entry]:
        with self._db.read() as conn:
            self._readable(conn, session_id)
            rows = conn.execute(sql, args).fetchall()
        return reading.entries_of(rows)

    # --- integrity ---------------------------------------------------------------

    def check(self, *, quarantine: bool = True) -> CheckReport:
        if not quarantine:
            with self._db.read() as conn:
                return self._integrity.scan(conn)
        with self._db.write() as conn:
            report = self._integrity.scan(conn)
            self._integrity.apply_quarantine(conn, report)
        return report

    def repair(self, session_id: str, now: str) -> RepairReport:
        with self._db.write() as conn:
            return self._integrity.repair(conn, session_id, now)

    # --- what id resolution reads --------------------------------------------------

    def sessions_in_range(self, low: str, high: str | bytes, limit: int) -> list[tuple[str, str]]:
        with self._db.read() as conn:
            rows = conn.execute(self._q.sessions_in_range, (low, self._high(high), limit))
            return [(r[0], r[1]) for r in rows]

    def count_sessions_in_range(self, low: str, high: str | bytes) -> int:
        with self._db.read() as conn:
            row = conn.execute(self._q.count_sessions_in_range, (low, self._high(high)))
            return int(row.fetchone()[0])

    def entry_by_id_or_sequence(self, session_id: str, ref: str) -> str | None:
        with self._db.read() as conn:
            found = conn.execute(
                self._q.entry_by_id_or_sequence, {"sid": session_id, "ref": ref, "seq": int(ref)}
            ).fetchall()
        # An exact id wins over a sequence number.
        return max(found, key=lambda row: row[1])[0] if found else None

    def near_misses(self, session_id: str | None) -> Iterator[str]:
        with self._db.read() as conn:
            if session_id is None:
                rows = conn.execute(self._q.session_ids).fetchall()
            else:
                rows = conn.execute(self._q.entry_ids, (session_id,)).fetchall()
        for (found,) in rows:
            yield found

    def session_labels(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return self._labels(self._session_titles, ("id", "title"), ids)

    def entry_labels(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return self._labels(self._entry_labels, ("id", "sequence", "kind"), ids)

    def _labels(
        self, sql: str, keys: Sequence[str], ids: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        with self._db.read() as conn:
            rows = conn.execute(sql, (self._id_list(ids),)).fetchall()
        return {row[0]: dict(zip(keys, row, strict=True)) for row in rows}


def _cursor_params(order: str, cursor: str) -> tuple[str, ...]:
    """The parameters of the AFTER condition of `order` for a `session_cursor`."""
    updated_at, session_id = parse_session_cursor(cursor)
    if order == "created":
        return (session_id,)
    return (updated_at, session_id)
