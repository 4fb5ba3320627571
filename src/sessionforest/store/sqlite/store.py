"""Sessions, entries and heads on SQLite: the `Store` contract of store/base.py.

What both backends do alike is store/sql/store.py's `SQLStore`; this module
keeps what SQLite does its own way. Writes go through one `BEGIN IMMEDIATE`
transaction each (insert + head move are atomic and concurrent writers queue
on the lock instead of deadlocking on an upgrade); an append keeps the active
path materialised (paths.py). Reads that walk a branch use one recursive
query, never one query per parent; the checks on what comes out are
rules/reading.py's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import orjson

from ...errors import ForeignEntry, ForestError, HeadMoved, UnknownEntry
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
from ..base.maintenance import Maintenance
from ..sql.dialect import SQLITE
from ..sql.rows import messages_in
from ..sql.store import SQLStore, Statements
from . import integrity, paths
from .database import Database
from .derived import Derived
from .rows import APPEND_ENTRY, BRANCHES, CHILDREN, ENTRY_COLUMNS, TIPS

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

# The same walk from any entry of the session (a branch read without moving the head).
PATH_TO = ACTIVE_PATH.replace(
    "WHERE id = (SELECT active_entry_id FROM session_heads WHERE session_id = :sid)",
    "WHERE id = :start AND session_id = :sid",
)

HEAD_STATE = """
SELECT s.quarantine, h.active_entry_id, h.path_tip, h.path_length
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id WHERE s.id = ?
"""

LATEST_CHECKPOINT = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = ? AND kind = 'checkpoint' AND json_extract(payload, '$.label') = ? "
    "ORDER BY sequence DESC LIMIT 1"
)


# --- what id resolution reads (rules/refs.py decides) -----------------------------
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
SESSION_TITLES = "SELECT id, title FROM sessions WHERE id IN (SELECT value FROM json_each(?))"
ENTRY_LABELS = (
    "SELECT id, sequence, kind FROM session_entries WHERE id IN (SELECT value FROM json_each(?))"
)

STATEMENTS = Statements(
    SQLITE, head_state=HEAD_STATE, branches=BRANCHES, binary="", children=CHILDREN, tips=TIPS
)


class SQLiteStore(SQLStore[sqlite3.Connection]):
    """`Store` (store/base.py) over one `Database`; the shared half is `SQLStore`'s."""

    _db: Database

    def __init__(self, db: Database, maintenance: Maintenance | None = None) -> None:
        labels = (SESSION_TITLES, ENTRY_LABELS)
        super().__init__(db, str(db.path), STATEMENTS, integrity.INTEGRITY, labels)
        # The index, the materialised paths and the caches (derived.py): `maintenance`
        # is the backend's thread that indexes once appends pause (None: only
        # searches, closes and the bound index).
        self.derived = Derived(db, maintenance)

    def _insert_session_row(
        self, conn: sqlite3.Connection, values: tuple[Any, ...], session_id: str
    ) -> None:
        integrity.insert_session(conn, self._q.insert_session, values, session_id)

    def _id_list(self, ids: Sequence[str]) -> str:
        return orjson.dumps(list(ids)).decode()

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
        db, derived = self._db, self.derived
        with db.write():
            cursor = db.cursor
            assert cursor is not None
            at = derived.begin(cursor)
            done, after = self._append_in(
                cursor, session_id, items, parent, expect_head, now, stamping,
                derived.state_of(session_id, parent),
            )  # fmt: skip
            derived.remember(session_id, after)
            derived.appended(cursor, len(items), at)
        derived.noted()
        return done

    def index_some(self, limit: int | None = None) -> bool:
        """Index pending entries (all, or about `limit`) in one write transaction;
        returns whether any are left (derived.py)."""
        return self.derived.index_some(limit)

    def _append_in(
        self,
        conn: sqlite3.Cursor,
        session_id: str,
        items: Sequence[NewEntry],
        parent: str | None,
        expect_head: str | Unset | None,
        now: str,
        stamping: Stamping,
        row: tuple[Any, ...] | None = None,
    ) -> tuple[Appended, tuple[Any, ...]]:
        """One append inside the caller's write transaction (`row`: APPEND_STATE's row,
        when the caller knows it); returns it and that row as the append leaves it."""
        if row is None:
            row = conn.execute(APPEND_STATE, {"sid": session_id, "parent": parent}).fetchone()
        state = AppendState(*row[:6]) if row is not None else None
        below, sequence = append_rules.checked(state, session_id, parent, expect_head)
        assert row is not None and state is not None  # checked() raised otherwise
        derived = self.derived
        length = derived.path_to(conn, session_id, below, row)
        text = stamping.text
        restamp = stamping.restamp
        if restamp is not None and state is not None and state.cwd != stamping.cwd:
            text = restamp(state.cwd)
        first = sequence
        link = below
        above = row[8]  # the sequence of the entry below (None: a root)
        for item in items:
            conn.execute(
                APPEND_ENTRY,
                (item.id, session_id, link, sequence, 2, item.kind, item.body,
                 item.visibility, item.created_at, text, above),
            )  # fmt: skip
            link, above, sequence = item.id, sequence, sequence + 1
        last = sequence - 1
        assert link is not None  # at least one item (rules/append.py)
        length = derived.path_after(
            conn, session_id, length, row[8], first, len(items), link, now, messages_in(items)
        )
        tip = link if length is not None else None
        after = (None, link, last, session_id, 2, state.cwd, tip, length, last)
        return Appended(below, first, text), after

    def append_group(self, group: Sequence[GroupedAppend]) -> list[Appended | ForestError]:
        """Several appends (to any sessions) in ONE transaction, each all or nothing:
        one that fails (HeadMoved, an unknown session, ...) is rolled back to its
        savepoint and answered with its error; the others commit together. A
        driver error (a full disk) rolls back and raises for all of them."""
        results: list[Appended | ForestError] = []
        db, derived = self._db, self.derived
        with db.write():
            cursor = db.cursor
            assert cursor is not None
            at = derived.begin(cursor)
            for one in group:
                cursor.execute("SAVEPOINT one_append")
                try:
                    done, after = self._append_in(
                        cursor, *one, derived.state_of(one.session_id, one.parent)
                    )
                    derived.remember(one.session_id, after)
                    results.append(done)
                except ForestError as exc:
                    # Rolled back to before it: the session's remembered row still holds.
                    cursor.execute("ROLLBACK TO one_append")
                    results.append(exc)
                cursor.execute("RELEASE one_append")
            derived.appended(cursor, len(group), at)
        derived.noted()
        return results

    def move_head(
        self, session_id: str, entry_id: str, expect_head: str | Unset | None, now: str
    ) -> None:
        with self._db.write() as conn:
            state = self._head_state(conn, session_id)
            head = state[1]
            owner = conn.execute(
                "SELECT session_id FROM session_entries WHERE id = ?", (entry_id,)
            ).fetchone()
            if owner is None:
                raise UnknownEntry(entry_id, session_id)
            if owner[0] != session_id:
                raise ForeignEntry(entry_id, session_id, owner[0])
            if expect_head is not UNSET and head != expect_head:
                raise HeadMoved(session_id, expect_head, head)  # type: ignore[arg-type]
            self.derived.moved(conn, session_id, entry_id, state, now)

    # --- reading -----------------------------------------------------------------

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
        # Brief (database.Database._lend): an agent process's history load is
        # often its only read.
        with self._db.read(brief=True) as conn:
            _, head, tip, length = self._head_state(conn, session_id)
            if head is not None and tip == head and length:
                # Materialised (paths.py): sealed chunks and ordered ranges, checked
                # link by link; a whole path through the cache, a tail of a path not
                # cached by itself (rows only).
                low = 0 if limit is None else max(0, length - limit)
                cache = self.derived.paths
                if low == 0 or cache.holds(session_id, head):
                    found = cache.entries(conn, session_id, head, length, low)
                    if found is not None:
                        return found
                else:
                    ranges = paths.spans(conn, session_id, length, low)
                    if ranges is not None:
                        tail = paths.rows(conn, session_id, ranges, head, length - low,
                                          anchored=False)  # fmt: skip
                        if tail is not None:
                            return reading.entries_of(tail)
            stop = WHOLE if limit is None else limit - 1
            rows = conn.execute(ACTIVE_PATH, {"sid": session_id, "stop": stop}).fetchall()
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
        found = self._rows(LATEST_CHECKPOINT, session_id, (session_id, label))
        return found[0] if found else None

    # --- what id resolution reads --------------------------------------------------

    def entries_in_range(
        self, session_id: str, low: str, high: str | bytes
    ) -> list[tuple[str, int, str]]:
        with self._db.read() as conn:
            scanned = conn.execute(ANY_ENTRIES_IN_RANGE, (low, high, PREFIX_SCAN)).fetchall()
            if len(scanned) < PREFIX_SCAN:
                return [(i, seq, kind) for i, sid, seq, kind in scanned if sid == session_id]
            return conn.execute(ENTRIES_IN_RANGE, (session_id, low, high)).fetchall()
