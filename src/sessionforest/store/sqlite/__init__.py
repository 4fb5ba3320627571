"""The embedded SQLite backend (the default): components over one `Database`.

`open_sqlite` opens (creating and migrating when allowed) one store file and
returns the `SQLiteBackend` bundle the facade talks to: `store` (sessions,
entries, heads, integrity), `trees` (workspaces and agents), and the bulk and
search components the importers and the search funnel use.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ...deadline import PROGRESS_STEPS, Deadline
from ...errors import ForestError, SearchStopped
from .bulk import SQLiteBulk
from .connection import DURABILITY, default_path, open_store, transaction
from .database import Database
from .search import SQLiteSearch, catchup
from .store import SQLiteStore
from .trees import SQLiteTrees
from .vectors import SQLiteVectors

__all__ = ["DURABILITY", "SQLiteBackend", "default_path", "open_sqlite"]


@dataclass(frozen=True, slots=True)
class SQLiteBackend:
    """One SQLite store file and the components over it."""

    path: Path
    db: Database
    store: SQLiteStore
    trees: SQLiteTrees
    bulk: SQLiteBulk
    vectors: SQLiteVectors

    name = "sqlite"

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        # A writer leaves nothing pending behind it where it can help it: a reader
        # that opens the file immutable (no other connection) cannot index.
        try:
            self.store.stop_indexing()
            if self.db.writer is not None:
                self.catch_up()
        except (ForestError, sqlite3.Error):
            pass  # still pending: the next search indexes it
        finally:
            self.db.close()

    @contextmanager
    def search(self, deadline: Deadline | None = None) -> Iterator[SQLiteSearch]:
        """A `SearchIndex` over one read snapshot (reads on this thread inside the
        block, the store's included, see the same snapshot). Entries appended since
        the last search are indexed first, in one write transaction (catchup.py), so
        the snapshot holds every append acknowledged before the search began. With a
        `deadline`, the connection's progress handler stops the running statement
        once it passes or is cancelled (SearchStopped)."""
        self.catch_up()
        with self.db.read() as conn:
            if deadline is None:
                yield SQLiteSearch(conn)
                return
            conn.set_progress_handler(lambda: deadline.reason is not None, PROGRESS_STEPS)
            try:
                yield SQLiteSearch(conn)
            except (sqlite3.OperationalError, ForestError) as exc:
                if deadline.reason is not None:
                    raise SearchStopped(deadline.reason) from exc
                raise
            finally:
                conn.set_progress_handler(None, 0)

    def catch_up(self) -> bool:
        """Index whatever appends left pending (see search/catchup.py); returns whether
        any entry was waiting. A store opened read-only on request indexes
        through a short-lived writer connection when its file may be written; one
        that cannot write (a read-only file, or read immutable because no other
        connection had it open) searches what its writers indexed: every writer
        catches up as it closes, so only one killed mid-session leaves entries
        that wait for the next writable search."""
        db = self.db
        if db.held() is not None:
            return False  # inside a transaction of this thread: it reads what it has
        with db.read() as conn:
            if not catchup.pending(conn):
                return False
        if db.writer is not None:
            self.store.index_some()
            return True
        writer = db.index_writer()
        if writer is None:
            return False
        try:
            with transaction(writer, db.path, None):
                catchup.catch_up(writer)
                return True
        finally:
            writer.close()


def open_sqlite(
    path: str | os.PathLike[str] | None,
    *,
    readonly: bool = False,
    create: bool = True,
    durability: str = "normal",
    busy_timeout_ms: int = 30_000,
    background_index: bool = True,
) -> SQLiteBackend:
    """Open the store file at `path` (None: `FOREST_DB` or the user data directory).
    `background_index`: index appended entries on a thread once appends pause
    (search/idle.py); False leaves them to searches, closes and the bound."""
    target, opened = open_store(
        path,
        readonly=readonly,
        create=create,
        durability=durability,
        busy_timeout_ms=busy_timeout_ms,
    )
    db = Database(target, opened)
    store = SQLiteStore(db, background=background_index and db.writer is not None)
    bulk = SQLiteBulk(db.path, write=db.write, read=db.read)
    return SQLiteBackend(target, db, store, SQLiteTrees(db), bulk, SQLiteVectors(db))
