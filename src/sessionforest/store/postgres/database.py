"""One PostgreSQL store and its connections: a psycopg pool, per-thread transactions.

The threading contract is SQLite's (store/sqlite/database.py): a `Database` may
be shared by threads; `write()` runs one READ COMMITTED transaction on a pooled
connection (writers of one session queue on its row lock, `FOR UPDATE`, in this
process and every other one), `read()` one REPEATABLE READ, READ ONLY
transaction, so a block of reads sees one snapshot. A thread already inside a
transaction gets the connection it holds. Driver errors leave as ForestErrors.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, LiteralString

import psycopg
from psycopg import errors as pgerrors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import (
    ForestError,
    StoreBusy,
    StoreFull,
    StoreIOError,
    StoreReadOnly,
    StoreUnreadable,
)

# Connections kept open when idle, and the most this process opens at once.
MIN_CONNECTIONS = 1
MAX_CONNECTIONS = 8
# Two writers locking two sessions in opposite orders (an append group), or
# two transactions bumping the same search statistics rows: PostgreSQL aborts
# one; it is retried this many times, from the start of its transaction.
RETRIES = 5

Tracer = Callable[[str], object]


class TracingCursor(psycopg.Cursor[Any]):
    """A cursor that reports each statement to its Database's tracer and counts
    the rows it changed (`Database.changes`), at one attribute test per statement."""

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        db: Database | None = getattr(self.connection, "forest_db", None)
        out = super().execute(query, params, **kwargs)
        if db is not None:
            if db.tracer is not None:
                db.tracer(_text(query))
            status = self.statusmessage or ""
            if status.startswith(("INSERT", "UPDATE", "DELETE")):
                db.changes += max(self.rowcount, 0)
        return out

    def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> None:
        db: Database | None = getattr(self.connection, "forest_db", None)
        super().executemany(query, params_seq, **kwargs)
        if db is not None:
            if db.tracer is not None:
                db.tracer(_text(query))
            db.changes += max(self.rowcount, 0)


def _text(query: Any) -> str:
    return query if isinstance(query, str) else str(query)


def driver_error(where: str, exc: psycopg.Error) -> ForestError:
    """The store's own error for a driver error (the SQLSTATE named)."""
    code = exc.sqlstate
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, pgerrors.DiskFull | pgerrors.OutOfMemory):
        return StoreFull(where, text, code)
    if isinstance(exc, pgerrors.ReadOnlySqlTransaction):
        return StoreReadOnly(where, text, code)
    if isinstance(exc, pgerrors.LockNotAvailable | pgerrors.QueryCanceled):
        return StoreBusy(where, text)
    if isinstance(exc, psycopg.OperationalError) and code is None:
        return StoreUnreadable(where, text)
    return StoreIOError(where, text, code)


def retryable(exc: BaseException) -> bool:
    return isinstance(exc, pgerrors.DeadlockDetected | pgerrors.SerializationFailure)


class Database:
    """The pooled connections of one PostgreSQL store (see the module docstring)."""

    def __init__(
        self, conninfo: str, where: str, readonly_why: str | None, migrated: list[str]
    ) -> None:
        self.where = where
        # Kept for a connection outside the pool (the commit probe's LISTEN); never shown.
        self.conninfo = conninfo
        self.readonly_why = readonly_why
        self.migrated = migrated
        self.tracer: Tracer | None = None
        self.changes = 0
        self._local = threading.local()
        kwargs: dict[str, Any] = {"autocommit": True, "cursor_factory": TracingCursor}
        if readonly_why:
            # Added to the URL's own options (a search_path, say), not instead of them.
            given = conninfo_to_dict(conninfo).get("options") or ""
            kwargs["options"] = f"{given} -c default_transaction_read_only=on".strip()
        self._pool = ConnectionPool(
            conninfo,
            min_size=MIN_CONNECTIONS,
            max_size=MAX_CONNECTIONS,
            kwargs=kwargs,
            configure=self._configure,
            open=False,
            name=where,
        )
        try:
            self._pool.open(wait=True, timeout=30)
        except (PoolTimeout, psycopg.Error) as exc:
            self._pool.close()
            raise StoreUnreadable(where, f"no connection: {exc}") from exc

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.forest_db = self  # type: ignore[attr-defined]

    def trace(self, callback: Tracer | None) -> None:
        """Report every statement any connection of this store runs (None: stop)."""
        self.tracer = callback

    def held(self) -> psycopg.Connection[Any] | None:
        return getattr(self._local, "conn", None)

    @contextmanager
    def write(self) -> Iterator[psycopg.Connection[Any]]:
        """One transaction (READ COMMITTED) on a pooled connection; rolls back and
        converts driver errors. Callers that may meet a deadlock use `retrying`."""
        if self.readonly_why is not None:
            raise StoreReadOnly(self.where, self.readonly_why)
        if self.held() is not None:
            raise RuntimeError("a write cannot start inside another transaction of this thread")
        with self._transaction("BEGIN") as conn:
            yield conn

    def retrying(self, work: Callable[[psycopg.Connection[Any]], Any]) -> Any:
        """`work(conn)` inside `write()`, run again (from the start) when PostgreSQL
        aborted it for a deadlock or a serialization failure."""
        for attempt in range(RETRIES + 1):
            try:
                with self.write() as conn:
                    return work(conn)
            except StoreIOError as exc:
                if attempt == RETRIES or not retryable(exc.__cause__ or exc):
                    raise
        raise AssertionError("unreachable")

    @contextmanager
    def read(self) -> Iterator[psycopg.Connection[Any]]:
        """One REPEATABLE READ, READ ONLY snapshot, or the transaction this thread holds."""
        held = self.held()
        if held is not None:
            yield held
            return
        with self._transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") as conn:
            yield conn

    @contextmanager
    def _transaction(self, begin: LiteralString) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection(timeout=60) as conn:
                conn.execute(begin)
                self._local.conn = conn
                try:
                    yield conn
                except BaseException:
                    self._local.conn = None
                    if not conn.closed:
                        conn.execute("ROLLBACK")
                    raise
                self._local.conn = None
                conn.execute("COMMIT")
        except psycopg.Error as exc:
            self._local.conn = None
            raise driver_error(self.where, exc) from exc
        except PoolTimeout as exc:
            raise StoreBusy(self.where, f"no free connection: {exc}") from exc

    def execute(self, sql: str, params: Any = None) -> None:
        """One statement in its own write transaction."""
        with self.write() as conn:
            conn.execute(sql, params)

    def close(self) -> None:
        self._pool.close()
