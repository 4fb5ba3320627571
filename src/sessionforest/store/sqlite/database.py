"""One store file and its connections: one writer behind a lock, pooled readers.

The threading contract (datasette's shape): a `Database` may be shared by any
number of threads. `write()` runs one BEGIN IMMEDIATE transaction on the single
writer connection, so writers of one process queue on a lock and writers of
other processes on SQLite's; `read()` runs a read transaction on a pooled
reader connection, so reads never wait for a writer beyond WAL's rules and see
one consistent snapshot for as long as the block lasts. A thread inside
`write()` or `read()` that reads again gets the connection it already holds
(one snapshot; and its own uncommitted writes). Connections are never used by
two threads at once; a read-only store has readers only. The process's first
brief read (`read(brief=True)`) runs on the writer when no write holds it: a
process that reads once never opens a reader, which parses the whole schema.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ...errors import StoreReadOnly
from .connection import Opened, driver_error, rollback

# Readers kept open when idle; more are opened under load and closed after.
IDLE_READERS = 4


class Database:
    """The connections of one SQLite store; see the module docstring for the contract."""

    def __init__(self, path: Path, opened: Opened) -> None:
        self.path = path
        self.readonly_why = opened.readonly  # why writes are refused; None: they are not
        self.migrated = opened.migrated
        self._opened = opened
        self._connect = opened.connect
        self._writer = opened.conn if opened.readonly is None else None
        self.write_lock = threading.Lock()
        # The writer's one reused cursor: the hot path (append) creates no cursor per statement.
        self.cursor = self._writer.cursor() if self._writer is not None else None
        self._idle: list[sqlite3.Connection] = [] if self._writer is not None else [opened.conn]
        self._pool_lock = threading.Lock()
        self._local = threading.local()
        self._closed = False
        self._lent = False  # whether the first brief read has been given (`_lend`)
        self._trace: Callable[[str], object] | None = None
        # Write transactions begun on the writer, and the number of the last one that
        # committed: what a cache of committed state compares to know that nothing
        # but its own committed writes ran here (store.py's append states).
        self.writes = 0
        self.committed = 0

    @property
    def writer(self) -> sqlite3.Connection | None:
        """The writer connection (None: read-only), for backend tooling and test harnesses."""
        return self._writer

    def trace(self, callback: Callable[[str], object] | None) -> None:
        """Report every statement any connection of this store runs (None: stop)."""
        self._trace = callback
        with self._pool_lock:
            conns = [*self._idle, *([self._writer] if self._writer is not None else [])]
        for conn in conns:
            conn.set_trace_callback(callback)

    # --- transactions ------------------------------------------------------------

    def held(self) -> sqlite3.Connection | None:
        """The connection this thread is inside a transaction on, if any."""
        return getattr(self._local, "conn", None)

    def write(self) -> _Write:
        """One BEGIN IMMEDIATE ... COMMIT on the writer; rolls back and converts driver errors.

        `with db.write() as conn:` (conn: the writer connection; `db.cursor` is
        the writer's reused cursor, for the append hot path).
        """
        if self._writer is None:
            raise StoreReadOnly(str(self.path), self.readonly_why or "it was opened read-only")
        return _Write(self)

    @contextmanager
    def read(self, *, brief: bool = False) -> Iterator[sqlite3.Connection]:
        """A read transaction (one snapshot) on a pooled reader, or the one this thread holds.

        `brief`: the block reads a bounded amount and returns (no generator suspends
        inside it); the first such read of the process may run on the writer (`_lend`).
        """
        held = self.held()
        if held is not None:
            yield held
            return
        lent = self._lend() if brief else None
        conn = lent if lent is not None else self._take()
        try:
            conn.execute("BEGIN")
        except sqlite3.Error as exc:
            self._back(conn, lent)
            raise driver_error(self.path, exc, readonly=self.readonly_why) from exc
        self._local.conn = conn
        try:
            yield conn
        except sqlite3.Error as exc:
            raise driver_error(self.path, exc, readonly=self.readonly_why) from exc
        finally:
            self._local.conn = None
            rollback(conn)  # a read transaction has nothing to keep
            self._back(conn, lent)

    def _lend(self) -> sqlite3.Connection | None:
        """The writer, its lock taken, for the process's first brief read; None: a reader.

        A new connection parses the whole schema before its first statement (with
        connecting, about 8.7 M instructions: docs/benchmarks.md, section 13), so an
        agent process that opens the store, loads its history once and appends would
        pay for a reader it uses once. Only the first brief read is lent, and only if
        no write holds the lock at that moment (it does not wait): a write of another
        thread then waits behind that one bounded read, once per process; every later
        read takes a pooled reader, as before."""
        if self._lent or self._writer is None:
            return None
        with self._pool_lock:
            if self._lent or self._closed:
                return None
            self._lent = True
        if not self.write_lock.acquire(blocking=False):
            return None
        return self._writer

    def _back(self, conn: sqlite3.Connection, lent: sqlite3.Connection | None) -> None:
        if lent is not None:
            self.write_lock.release()
        else:
            self._give(conn)

    def _take(self) -> sqlite3.Connection:
        with self._pool_lock:
            if self._idle:
                return self._idle.pop()
        try:
            conn = self._connect()
        except sqlite3.Error as exc:
            raise driver_error(self.path, exc, readonly=self.readonly_why) from exc
        if self._trace is not None:
            conn.set_trace_callback(self._trace)
        return conn

    def _give(self, conn: sqlite3.Connection) -> None:
        with self._pool_lock:
            if not self._closed and len(self._idle) < IDLE_READERS:
                self._idle.append(conn)
                return
        conn.close()

    # --- life ----------------------------------------------------------------------

    def connect(self) -> sqlite3.Connection:
        """One more connection to the file, opened as the readers are; the caller owns
        and closes it (a poller's own, outside the pool)."""
        return self._connect()

    def index_writer(self) -> sqlite3.Connection | None:
        """A writer connection for a store opened read-only on request, if its file may
        be written (see connection.Opened.index_writer); the caller closes it."""
        connect = self._opened.index_writer
        return connect() if connect is not None else None

    def close(self) -> None:
        with self._pool_lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            if conn is not self._opened.conn:
                conn.close()
        self._opened.close()


class _Write:
    """The write transaction `Database.write()` returns (a class, not a generator-based
    context manager: it runs once per append, and each avoided frame shows)."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def __enter__(self) -> sqlite3.Connection:
        db = self._db
        if db.held() is not None:
            raise RuntimeError("a write cannot start inside another transaction of this thread")
        db.write_lock.acquire()
        db.writes += 1
        cursor = db.cursor
        assert cursor is not None  # write() refuses a read-only store
        try:
            cursor.execute("BEGIN IMMEDIATE")
        except BaseException as exc:
            db.write_lock.release()
            if isinstance(exc, sqlite3.Error):
                raise driver_error(db.path, exc, readonly=db.readonly_why) from exc
            raise
        db._local.conn = cursor.connection
        return cursor.connection

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        db = self._db
        cursor = db.cursor
        assert cursor is not None
        try:
            if exc is None:
                try:
                    cursor.execute("COMMIT")
                    db.committed = db.writes
                    return
                except sqlite3.Error as failed:
                    rollback(cursor.connection)
                    raise driver_error(db.path, failed, readonly=db.readonly_why) from failed
            rollback(cursor.connection)
            if isinstance(exc, sqlite3.Error):
                raise driver_error(db.path, exc, readonly=db.readonly_why) from exc
        finally:
            db._local.conn = None
            db.write_lock.release()
