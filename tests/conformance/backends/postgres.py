"""The PostgreSQL backend's harness: each store is a schema of one test database.

The run creates one uniquely named database on the service this machine runs
(127.0.0.1:5432, trust auth, user postgres; FOREST_TEST_PG overrides the
server URL) and drops it at the end; every fresh store is a new schema in it,
reached through the URL's `options=-csearch_path=...`. The harness reaches
the tables with its own connection. When no server answers, the backend's
tests are skipped with that reason, and FOREST_REQUIRE_POSTGRES=1 (set by
.ci/run) turns that skip into a failure (tests/conftest.py).
"""

from __future__ import annotations

import atexit
import itertools
import os
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import pytest

from sessionforest import Forest

from . import Backend, Capabilities, register
from .harness import KEYS, Dump, Harness, Refused

try:
    import psycopg
    from psycopg import sql
except ImportError:  # pragma: no cover - the [postgres] extra is in [dev]
    psycopg = None  # type: ignore[assignment]

SERVER = os.environ.get("FOREST_TEST_PG", "postgresql://postgres@127.0.0.1:5432")
ORDER = {
    "sessions": ("id",),
    "session_entries": ("session_id", "sequence", "id"),
    "session_heads": ("session_id",),
    "workspaces": ("id",),
    "agents": ("id",),
}
# Columns the index derives from others: not rows' content.
DERIVED = {"words"}

_state: dict[str, Any] = {}
_lock = threading.Lock()
_counter = itertools.count(1)


def _unavailable() -> str | None:
    if psycopg is None:
        return "psycopg is not installed (pip install 'sessionforest[postgres]')"
    if "why" not in _state:
        try:
            with psycopg.connect(SERVER + "/postgres", connect_timeout=3):
                _state["why"] = None
        except psycopg.Error as exc:
            _state["why"] = f"no PostgreSQL server answers at {SERVER}: {exc}"
    return _state["why"]  # type: ignore[no-any-return]


def test_database() -> str:
    """The run's database (created on first use, dropped when the run ends)."""
    with _lock:
        if "db" not in _state:
            name = f"forest_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
            with psycopg.connect(SERVER + "/postgres", autocommit=True) as conn:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                # This database only: commits do not wait for the WAL flush. A crash of
                # the server is not what these tests stage (kill -9 hits a writer), and
                # it halves their time on a machine with slow fsync.
                conn.execute(
                    sql.SQL("ALTER DATABASE {} SET synchronous_commit = off").format(
                        sql.Identifier(name)
                    )
                )
            _state["db"] = name
            owner = os.getpid()
            atexit.register(_drop, name, owner)
        return str(_state["db"])


def _drop(name: str, owner: int) -> None:
    if os.getpid() != owner:  # a forked child must not drop the run's database
        return
    with psycopg.connect(SERVER + "/postgres", autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def new_schema_url() -> str:
    """A URL of a fresh, empty schema in the run's database."""
    db = test_database()
    schema = f"store_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(f"{SERVER}/{db}", autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    return f"{SERVER}/{db}?options=" + quote(f"-csearch_path={schema},public")


class PostgresHarness(Harness):
    def new_location(self) -> str:
        return new_schema_url()

    @contextmanager
    def _conn(self, forest: Forest) -> Iterator[Any]:
        with psycopg.connect(self.location(forest), autocommit=True) as conn:
            yield conn

    def dump(self, forest: Forest, *tables: str) -> Dump:
        with self._conn(forest) as conn:
            names = list(tables) or [
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables "
                    "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' "
                    "ORDER BY table_name"
                )
            ]
            out: Dump = {}
            for table in names:
                cursor = conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(table)))
                columns = [d[0] for d in cursor.description or ()]
                rows = [
                    {c: v for c, v in zip(columns, r, strict=True) if c not in DERIVED}
                    for r in cursor
                ]
                order = ORDER.get(table, [c for c in columns if c not in DERIVED])
                out[table] = sorted(rows, key=lambda r, o=order: _key(r, o))  # type: ignore[misc]
            return out

    @contextmanager
    def statements(self, forest: Forest) -> Iterator[list[str]]:
        seen: list[str] = []
        db = forest._backend.db  # type: ignore[attr-defined]
        db.trace(seen.append)
        try:
            yield seen
        finally:
            db.trace(None)

    def changes(self, forest: Forest) -> int:
        return int(forest._backend.db.changes)  # type: ignore[attr-defined]

    def _write(self, forest: Forest, statement: Any, params: Iterable[Any]) -> None:
        with self._conn(forest) as conn:
            try:
                with conn.transaction(), conn.cursor() as cur:
                    cur.executemany(statement, list(params))
            except (psycopg.errors.IntegrityError, psycopg.errors.RaiseException) as exc:
                raise Refused(str(exc)) from exc

    def insert_rows(self, forest: Forest, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        batch = list(rows)
        if not batch:
            return
        columns = list(batch[0])
        statement = sql.SQL("INSERT INTO {}({}) VALUES ({})").format(
            sql.Identifier(table),
            sql.SQL(", ").join(map(sql.Identifier, columns)),
            sql.SQL(", ").join(sql.Placeholder() * len(columns)),
        )
        self._write(forest, statement, ([row[c] for c in columns] for row in batch))

    def update_row(self, forest: Forest, table: str, key: str, **values: Any) -> None:
        statement = sql.SQL("UPDATE {} SET {} WHERE {} = %s").format(
            sql.Identifier(table),
            sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(c)) for c in values),
            sql.Identifier(KEYS[table]),
        )
        self._write(forest, statement, [[*values.values(), key]])

    def delete_row(self, forest: Forest, table: str, key: str) -> None:
        statement = sql.SQL("DELETE FROM {} WHERE {} = %s").format(
            sql.Identifier(table), sql.Identifier(KEYS[table])
        )
        self._write(forest, statement, [[key]])

    def delete_session_row(self, forest: Forest, session_id: str) -> None:
        # Past the guard for this one statement; the trigger stays in place.
        with self._conn(forest) as conn, conn.transaction():
            conn.execute("ALTER TABLE sessions DISABLE TRIGGER sessions_kept")
            conn.execute("DELETE FROM sessions WHERE id = %s", (session_id,))
            conn.execute("ALTER TABLE sessions ENABLE TRIGGER sessions_kept")

    @property
    def bulk_batch(self) -> int:
        from sessionforest.store.postgres import bulk

        return bulk.BATCH

    def tune_bulk(
        self,
        monkeypatch: pytest.MonkeyPatch,
        *,
        batch: int | None = None,
        recent: int | None = None,
    ) -> None:
        from sessionforest.store.postgres import bulk

        if batch is not None:
            monkeypatch.setattr(bulk, "BATCH", batch)
        if recent is not None:
            monkeypatch.setattr(bulk, "RECENT", recent)


def _key(row: Mapping[str, Any], columns: Iterable[str]) -> tuple[Any, ...]:
    return tuple((type(row[c]).__name__, 0 if row[c] is None else row[c]) for c in columns)


POSTGRES = register(
    Backend(
        name="postgres",
        harness=PostgresHarness,
        capabilities=Capabilities(processes=True, database_guards=True, statement_trace=True),
        unavailable=_unavailable,
    )
)
