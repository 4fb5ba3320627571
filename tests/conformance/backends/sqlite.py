"""The SQLite backend's harness: a store is a file; the harness reaches it with its own connection.

This is the only test module that knows how the SQLite backend holds its
connections (for the statement trace: the `Database.trace` hook where there is
one, else every connection reachable from the facade) and where its bulk
writer keeps its batch sizes; when those move, only this file changes.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import queue
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import closing, contextmanager
from typing import Any

import pytest

from sessionforest import Forest

from . import Backend, Capabilities, register
from .harness import KEYS, Dump, Harness, Refused

# The harness's own connections must not show in a statement trace, which
# wraps sqlite3.connect while it runs.
_connect = sqlite3.connect

# Rows of these tables sort by these columns; every other table by all of its columns.
ORDER = {
    "sessions": ("id",),
    "session_entries": ("session_id", "sequence", "id"),
    "session_heads": ("session_id",),
    "workspaces": ("id",),
    "agents": ("id",),
}

# Real tables only: FTS5 virtual tables and fts5vocab are views of their shadow tables.
OWNED_TABLES = (
    "SELECT name FROM sqlite_master WHERE type = 'table' "
    "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name"
)
SESSION_GUARD = (
    "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'sessions_no_delete'"
)


def _sort_key(row: Mapping[str, Any], columns: Iterable[str]) -> tuple[Any, ...]:
    # Type name first: SQLite columns may mix types, which Python will not compare.
    return tuple((type(row[c]).__name__, 0 if row[c] is None else row[c]) for c in columns)


def _reachable(root: object, wanted: Callable[[object], bool], depth: int = 6) -> list[Any]:
    """Every object `wanted` accepts that is reachable from `root` through sessionforest objects.

    Walks attributes, containers and queues (a reader pool) rather than
    naming the facade's private fields, so the harness survives their moving.
    """
    found: list[Any] = []
    seen: set[int] = set()
    todo: list[tuple[object, int]] = [(root, 0)]
    while todo:
        obj, level = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if wanted(obj):
            found.append(obj)
            continue
        if level >= depth:
            continue
        children: Iterable[object]
        if isinstance(obj, dict):
            children = list(obj.values())
        elif isinstance(obj, list | tuple | set | frozenset | collections.deque):
            children = list(obj)
        elif isinstance(obj, queue.Queue):
            children = list(obj.queue)
        elif type(obj).__module__.startswith("sessionforest"):
            children = [getattr(obj, name) for name in _attributes(obj) if hasattr(obj, name)]
        else:
            continue
        todo.extend((child, level + 1) for child in children)
    return found


def _connections(forest: Forest) -> list[sqlite3.Connection]:
    return _reachable(forest, lambda obj: isinstance(obj, sqlite3.Connection))


def _tracers(forest: Forest) -> list[Any]:
    """Objects owning the store's connections that trace them all, new ones included."""

    def traces(obj: object) -> bool:
        return type(obj).__name__ == "Database" and callable(getattr(obj, "trace", None))

    return _reachable(forest, traces)


def _attributes(obj: object) -> list[str]:
    names = list(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return names


# A store every migration has run on, made by `Forest.open` itself once per process
# (and per migration list: a test may patch in a subset); `fresh` copies it. Migrating
# is ~30 commits, each fsynced (the file is in WAL only once every migration ran):
# most of a short test's time. The migrations themselves still run wherever a test
# opens a path of its own (tests/store/sqlite/test_migrations.py, the CLI's --db).
_templates: dict[tuple[int, tuple[str, ...]], str] = {}


def _migrated_template() -> str:
    from sessionforest.store.sqlite import migrations

    key = (os.getpid(), migrations.released_names())
    if key not in _templates:
        folder = tempfile.mkdtemp(prefix="forest-template-")
        atexit.register(_remove, folder, key[0])
        path = os.path.join(folder, "template.db")
        Forest.open(path).close()  # closing checkpoints the WAL into the file
        if any(os.path.exists(path + s) for s in ("-wal", "-shm")):
            raise RuntimeError(f"{path}: the template store left a WAL behind")
        _templates[key] = path
    return _templates[key]


def _remove(folder: str, owner: int) -> None:
    if os.getpid() == owner:  # not a forked child's exit
        shutil.rmtree(folder, ignore_errors=True)


class SQLiteHarness(Harness):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._made = 0

    def new_location(self) -> str:
        self._made += 1
        return str(self.workdir / f"store-{self._made}.db")

    def fresh(self, **options: Any) -> Forest:
        """A new, empty store: a copy of the migrated template (read-only or
        create=False options open a location with no file, as they ask)."""
        location = self.new_location()
        if not options.get("readonly") and options.get("create", True):
            shutil.copyfile(_migrated_template(), location)
        return self.open(location, **options)

    @contextmanager
    def _conn(self, forest: Forest) -> Iterator[sqlite3.Connection]:
        with closing(_connect(self.location(forest), isolation_level=None)) as conn:
            yield conn

    def dump(self, forest: Forest, *tables: str) -> Dump:
        # A writer indexes its appends and packs its paths on a thread once they
        # pause (derived.py): settle both first, so two dumps differ by what the test
        # did, not by when the thread ran.
        backend: Any = forest._backend  # type: ignore[attr-defined]
        if not forest.readonly and not backend.db._closed:
            backend.store.index_some()
        with self._conn(forest) as conn:
            names = list(tables) or [r[0] for r in conn.execute(OWNED_TABLES)]
            out: Dump = {}
            for table in names:
                cursor = conn.execute(f'SELECT * FROM "{table}"')
                columns = [d[0] for d in cursor.description]
                rows = [dict(zip(columns, r, strict=True)) for r in cursor]
                order = ORDER.get(table, columns)
                out[table] = sorted(rows, key=lambda r, o=order: _sort_key(r, o))  # type: ignore[misc]
            return out

    @contextmanager
    def statements(self, forest: Forest) -> Iterator[list[str]]:
        seen: list[str] = []
        test_thread = threading.get_ident()

        def note(statement: str) -> None:
            # Only what the test's own calls run, not the background indexer's chunks.
            if threading.get_ident() == test_thread:
                seen.append(statement)

        tracers = _tracers(forest)
        if tracers:  # the backend traces its own connections, pooled ones included
            for tracer in tracers:
                tracer.trace(note)
            try:
                yield seen
            finally:
                for tracer in tracers:
                    tracer.trace(None)
            return
        traced = _connections(forest)
        for conn in traced:
            conn.set_trace_callback(seen.append)

        # Without a tracer, a connection opened while the block runs is traced here.
        def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
            conn = _connect(*args, **kwargs)
            conn.set_trace_callback(seen.append)
            traced.append(conn)
            return conn

        sqlite3.connect = connect  # type: ignore[assignment]
        try:
            yield seen
        finally:
            sqlite3.connect = _connect
            for conn in traced:
                with contextlib.suppress(sqlite3.ProgrammingError):  # closed meanwhile
                    conn.set_trace_callback(None)

    def changes(self, forest: Forest) -> int:
        return sum(conn.total_changes for conn in _connections(forest))

    def _write(self, forest: Forest, sql: str, params: Iterable[Any]) -> None:
        with self._conn(forest) as conn:
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(sql, params)  # type: ignore[arg-type]
                conn.execute("COMMIT")
            except sqlite3.IntegrityError as exc:
                conn.execute("ROLLBACK")
                raise Refused(str(exc)) from exc

    def insert_rows(self, forest: Forest, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        batch = list(rows)
        if not batch:
            return
        columns = list(batch[0])
        sql = (
            f"INSERT INTO {table}({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
        )
        self._write(forest, sql, ([row[c] for c in columns] for row in batch))

    def update_row(self, forest: Forest, table: str, key: str, **values: Any) -> None:
        assignments = ", ".join(f"{column} = ?" for column in values)
        sql = f"UPDATE {table} SET {assignments} WHERE {KEYS[table]} = ?"
        self._write(forest, sql, [[*values.values(), key]])

    def delete_row(self, forest: Forest, table: str, key: str) -> None:
        self._write(forest, f"DELETE FROM {table} WHERE {KEYS[table]} = ?", [[key]])

    def delete_session_row(self, forest: Forest, session_id: str) -> None:
        # Drop the trigger, delete, put the trigger back: one transaction.
        with self._conn(forest) as conn:
            conn.execute("BEGIN IMMEDIATE")
            (guard,) = conn.execute(SESSION_GUARD).fetchone()
            conn.execute("DROP TRIGGER sessions_no_delete")
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            conn.execute(guard)
            conn.execute("COMMIT")

    @property
    def bulk_batch(self) -> int:
        from sessionforest.store.sqlite import bulk

        return bulk.BATCH

    def tune_bulk(
        self,
        monkeypatch: pytest.MonkeyPatch,
        *,
        batch: int | None = None,
        recent: int | None = None,
    ) -> None:
        from sessionforest.store.sqlite import bulk

        if batch is not None:
            monkeypatch.setattr(bulk, "BATCH", batch)
        if recent is not None:
            monkeypatch.setattr(bulk, "RECENT", recent)


SQLITE = register(
    Backend(
        name="sqlite",
        harness=SQLiteHarness,
        capabilities=Capabilities(processes=True, database_guards=True, statement_trace=True),
    )
)
