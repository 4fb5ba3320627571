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
from .search import SQLiteSearch
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
        block, the store's included, see the same snapshot)."""
        with self.db.read() as conn:
            yield SQLiteSearch(conn)


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
