"""The embedded SQLite backend (the default): components over one `Database`.

`open_sqlite` opens (creating and migrating when allowed) one store file and
returns the `SQLiteBackend` bundle the facade talks to: `store` (sessions,
entries, heads, integrity), `trees` (workspaces and agents), and the bulk and
search components the importers and the search funnel use.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .bulk import SQLiteBulk
from .connection import DURABILITY, default_path, open_store
from .database import Database
from .search import SQLiteSearch, catchup
from .store import SQLiteStore
from .trees import SQLiteTrees

__all__ = ["DURABILITY", "SQLiteBackend", "default_path", "open_sqlite"]


@dataclass(frozen=True, slots=True)
class SQLiteBackend:
    """One SQLite store file and the components over it."""

    path: Path
    db: Database
    store: SQLiteStore
    trees: SQLiteTrees
    bulk: SQLiteBulk

    name = "sqlite"

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def search(self) -> Iterator[SQLiteSearch]:
        """A `SearchIndex` over one read snapshot (reads on this thread inside the
        block, the store's included, see the same snapshot). Entries appended since
        the last search are indexed first, in one write transaction (catchup.py), so
        the snapshot holds every append acknowledged before the search began."""
        self.catch_up()
        with self.db.read() as conn:
            yield SQLiteSearch(conn)

    def catch_up(self) -> int:
        """Index whatever appends left pending (see search/catchup.py); returns how many
        sessions had entries waiting. A read-only store cannot write the index: it
        searches what its last writer indexed."""
        db = self.db
        if db.held() is None and db.writer is not None:
            with db.read() as conn:
                if not catchup.pending(conn):
                    return 0
            with db.write() as conn:
                return catchup.catch_up(conn)
        return 0


def open_sqlite(
    path: str | os.PathLike[str] | None,
    *,
    readonly: bool = False,
    create: bool = True,
    durability: str = "normal",
    busy_timeout_ms: int = 30_000,
) -> SQLiteBackend:
    """Open the store file at `path` (None: `FOREST_DB` or the user data directory)."""
    target, opened = open_store(
        path,
        readonly=readonly,
        create=create,
        durability=durability,
        busy_timeout_ms=busy_timeout_ms,
    )
    db = Database(target, opened)
    store = SQLiteStore(db)
    bulk = SQLiteBulk(db.path, write=db.write, read=db.read)
    return SQLiteBackend(target, db, store, SQLiteTrees(db), bulk)
