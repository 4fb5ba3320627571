"""Sessions, entries and heads on PostgreSQL: the `Store` contract of store/base.py.

What both backends do alike is store/sql/store.py's `SQLStore`; this module
keeps what PostgreSQL does its own way. An append locks its session's row
(`FOR UPDATE`, in its own statement), then reads the head and the highest
sequence in a fresh snapshot: writers of one session queue on that lock from
any process or host, so sequences are gap-free and unique (the (session_id,
sequence) key would refuse a duplicate anyway). Reads that walk a branch are
one recursive query; rules/ decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import psycopg

from ...errors import (
    ForeignEntry,
    ForestError,
    HeadMoved,
    SessionExists,
    UnknownEntry,
)
from ...model import Entry
from ...rules import append as append_rules
from ...rules import reading
from ..base import (
    UNSET,
    Appended,
    AppendState,
    GroupedAppend,
    NewEntry,
    Stamping,
    Unset,
)
from ..sql.dialect import POSTGRES, Row
from ..sql.integrity import adoption_refused as refused_adoption
from ..sql.rows import messages_in
from ..sql.store import SQLStore, Statements
from . import integrity
from .database import Database
from .rows import (
    APPEND_HEAD,
    BRANCHES,
    E_COLUMNS,
    ENTRY_COLUMNS,
    INSERT_ENTRIES,
    LOCK_SESSION,
    MOVE_HEAD,
    OWNER,
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
# The same walk from any entry of the session (a branch read without moving the head).
PATH_TO = ACTIVE_PATH.replace(
    "AND id = (SELECT active_entry_id FROM session_heads WHERE session_id = %(sid)s)",
    "AND id = %(start)s",
)
WHOLE = 1 << 62  # no stop: the whole path

# A head that is not in the session: pointed elsewhere (damage) or nowhere.
HEAD_ROW = f"SELECT {ENTRY_COLUMNS} FROM session_entries WHERE id = %s LIMIT 1"

HEAD_STATE = """
SELECT s.quarantine, h.active_entry_id
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id WHERE s.id = %s
"""

# Newest first; the label is compared in Python (a payload may hold what jsonb refuses).
CHECKPOINTS_NEWEST = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = %s AND kind = 'checkpoint' ORDER BY sequence DESC"
)
ENTRY_ROW = f"SELECT {ENTRY_COLUMNS} FROM session_entries WHERE session_id = %s AND id = %s"

ENTRIES_IN_RANGE = """
SELECT id, sequence, kind FROM session_entries
WHERE session_id = %s AND id >= %s AND id < %s ORDER BY id COLLATE "C"
"""
STATEMENTS = Statements(POSTGRES, head_state=HEAD_STATE, branches=BRANCHES, binary=' COLLATE "C"')
SESSION_TITLES = "SELECT id, title FROM sessions WHERE id = ANY(%s)"
ENTRY_LABELS = "SELECT id, sequence, kind FROM session_entries WHERE id = ANY(%s)"


class PostgresStore(SQLStore[psycopg.Connection[Row]]):
    """`Store` (store/base.py) over one PostgreSQL `Database`; the shared half is `SQLStore`'s."""

    _db: Database

    def __init__(self, db: Database) -> None:
        labels = (SESSION_TITLES, ENTRY_LABELS)
        super().__init__(db, db.where, STATEMENTS, integrity.INTEGRITY, labels)

    def _insert_session_row(
        self, conn: psycopg.Connection[Any], values: tuple[Any, ...], session_id: str
    ) -> None:
        insert_session(conn, self._q.insert_session, values, session_id)

    def _bind_lock(self) -> str:
        return " FOR UPDATE"

    def _high(self, high: str | bytes) -> str:
        """A range's upper bound as text (refs give bytes b"\\xff"-style sentinels)."""
        if isinstance(high, bytes):
            return high.decode("utf-8", "replace").replace("\ufffd", "\U0010ffff")
        return high

    def _id_list(self, ids: Sequence[str]) -> list[str]:
        return list(ids)

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
            conn.execute(MOVE_HEAD, (session_id, entry_id, now))

    # --- reading -----------------------------------------------------------------

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

    def path_to(self, session_id: str, entry_id: str, limit: int | None = None) -> list[Entry]:
        stop = WHOLE if limit is None else limit - 1
        with self._db.read() as conn:
            self._readable(conn, session_id)
            rows = conn.execute(
                PATH_TO, {"sid": session_id, "start": entry_id, "stop": stop}
            ).fetchall()
        if not rows:
            self.entry(session_id, entry_id)  # raises UnknownEntry or ForeignEntry
        whole = limit is None or len(rows) < limit
        return reading.path_of(session_id, entry_id, rows, whole=whole)

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

    # --- what id resolution reads --------------------------------------------------

    def entries_in_range(
        self, session_id: str, low: str, high: str | bytes
    ) -> list[tuple[str, int, str]]:
        with self._db.read() as conn:
            rows = conn.execute(ENTRIES_IN_RANGE, (session_id, low, self._high(high))).fetchall()
        return [tuple(r) for r in rows]


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
        words, tool, spaceless = searchable(item.kind, item.payload)
        rows.append((item.id, session_id, link, sequence, 2, item.kind, item.body,
                     item.visibility, item.created_at, text, words, tool, spaceless))  # fmt: skip
        link, sequence = item.id, sequence + 1
    columns = [list(c) for c in zip(*rows, strict=True)]
    # The entries and the head move in one statement (one round trip, one trigger run).
    conn.execute(
        f"WITH added AS ({INSERT_ENTRIES} RETURNING 1) {APPEND_HEAD}",
        [*columns, session_id, link, now, messages_in(items)],
    )
    return Appended(below, first, text)


def adoption_refused(exc: psycopg.Error, session_id: str) -> ForestError:
    if ADOPTION_REFUSED not in str(exc):
        raise exc
    return refused_adoption(session_id)


def insert_session(
    conn: psycopg.Connection[Any], sql: str, values: tuple[Any, ...], session_id: str
) -> None:
    """Insert a session row (in a savepoint); a duplicate leaves as SessionExists, a
    refusal by sessions_no_adoption as SessionDamaged."""
    try:
        with conn.transaction():
            conn.execute(sql, values)
    except psycopg.errors.UniqueViolation as exc:
        raise SessionExists(session_id) from exc
    except psycopg.errors.RaiseException as exc:
        raise adoption_refused(exc, session_id) from exc
