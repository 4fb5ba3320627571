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
from pathlib import Path
from typing import TYPE_CHECKING

from ...deadline import PROGRESS_STEPS, Deadline
from ...errors import ForestError, SearchStopped
from ..base.backend import HeadRow
from ..base.maintenance import Maintenance
from ..sql.dialect import SQLITE
from ..sql.sources import SQLSources
from .connection import DURABILITY, default_path, open_store
from .database import Database
from .derived import DATA_VERSION
from .store import SQLiteStore
from .trees import SQLiteTrees

if TYPE_CHECKING:
    from ..sql.handoffs import SQLHandoffs
    from .bulk import SQLiteBulk
    from .search import SQLiteSearch
    from .vectors import SQLiteVectors

__all__ = ["DURABILITY", "SQLiteBackend", "default_path", "open_sqlite"]


# Where a poll stands: the newest rev of session_changes and the newest entry's rowid.
MARKS = (
    "SELECT (SELECT COALESCE(MAX(rev), 0) FROM session_changes), "
    "(SELECT COALESCE(MAX(rowid), 0) FROM session_entries)"
)
# The sessions changed between two marks: a change recorded in session_changes (created,
# head moved, status or title set; migration session_changes) or a new entry (an append
# or an import, found by rowid: entries are never deleted, one writer inserts at a time).
CHANGED_BETWEEN = """
SELECT s.id, h.active_entry_id, COALESCE(h.updated_at, s.created_at), s.status, s.title
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id
WHERE s.id IN (
    SELECT session_id FROM session_changes WHERE rev > :rev AND rev <= :rev_to
    UNION SELECT session_id FROM session_entries WHERE rowid > :row AND rowid <= :row_to
)
"""


class SQLiteCommits:
    """One polling thread's commit probe (store.base.CommitProbe): `PRAGMA
    data_version` says whether anyone committed; the entries past the last rowid
    read and the session_changes past the last rev say which sessions changed."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        try:
            self._marks: tuple[int, int] | None = self._read_marks()
        except sqlite3.Error:  # a store from before session_changes, opened read-only
            self._marks = None

    def _read_marks(self) -> tuple[int, int]:
        rev, row = self._conn.execute(MARKS).fetchone()
        return int(rev), int(row)

    def __call__(self) -> int:
        return int(self._conn.execute(DATA_VERSION).fetchone()[0])

    def changed(self) -> list[HeadRow] | None:
        if self._marks is None:
            return None
        conn = self._conn
        try:
            # One snapshot: the new marks and the rows between them agree.
            began = not conn.in_transaction
            if began:
                conn.execute("BEGIN")
            try:
                (rev, row), (rev_to, row_to) = self._marks, self._read_marks()
                found = conn.execute(
                    CHANGED_BETWEEN, {"rev": rev, "rev_to": rev_to, "row": row, "row_to": row_to}
                ).fetchall()
            finally:
                if began:
                    conn.execute("COMMIT")
        except sqlite3.Error:
            return None
        self._marks = (rev_to, row_to)
        return [(r[0], r[1], r[2], r[3], r[4]) for r in found]

    def close(self) -> None:
        self._conn.close()


class SQLiteBackend:
    """One SQLite store file and the components over it.

    The bulk writer (imports, exports, copies) and the vector store are made on
    first use: a command that only reads a listing never loads their modules.
    """

    name = "sqlite"

    def __init__(
        self,
        path: Path,
        db: Database,
        store: SQLiteStore,
        trees: SQLiteTrees,
        maintenance: Maintenance,
        sources: SQLSources,
    ) -> None:
        self.path = path
        self.db = db
        self.store = store
        self.trees = trees
        self.maintenance = maintenance
        self.sources = sources
        self._bulk: SQLiteBulk | None = None
        self._vectors: SQLiteVectors | None = None
        self._handoffs: SQLHandoffs | None = None

    @property
    def bulk(self) -> SQLiteBulk:
        if self._bulk is None:
            from .bulk import SQLiteBulk

            derived = self.store.derived
            db = self.db
            self._bulk = SQLiteBulk(db.path, db.write, db.read, derived.index_in,
                                    derived.imported_head)  # fmt: skip
        return self._bulk

    @property
    def handoffs(self) -> SQLHandoffs:
        if self._handoffs is None:
            from ..sql.handoffs import SQLHandoffs

            self._handoffs = SQLHandoffs(self.db, SQLITE)
        return self._handoffs

    @property
    def vectors(self) -> SQLiteVectors:
        if self._vectors is None:
            from .vectors import SQLiteVectors

            self._vectors = SQLiteVectors(self.db)
        return self._vectors

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        # A writer leaves nothing pending behind it where it can help it: a reader
        # that opens the file immutable (no other connection) cannot index. One that
        # wrote nothing (no write transaction, no migration) left nothing pending and
        # skips the check, which opens a reader connection when none is pooled
        # (SQLite parses the whole schema for it): an agent's open, read and close.
        try:
            self.maintenance.close()
            db = self.db
            if db.writes or db.migrated:
                self.store.derived.leave()
        except (ForestError, sqlite3.Error):
            pass  # still pending: the next search indexes it
        finally:
            self.db.close()

    @contextmanager
    def search(self, deadline: Deadline | None = None) -> Iterator[SQLiteSearch]:
        """A `SearchIndex` over one read snapshot (reads on this thread inside the
        block, the store's included, see the same snapshot). It reads the index as
        it is: `catch_up` first to find every append acknowledged before. With a
        `deadline`, the connection's progress handler stops the running statement
        once it passes or is cancelled (SearchStopped)."""
        from .search import SQLiteSearch

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
        """Index whatever appends left pending, from any process, in one write
        transaction (derived.py); returns whether any entry was waiting."""
        return self.store.derived.catch_up()

    def commit_probe(self) -> SQLiteCommits:
        """`PRAGMA data_version` on a connection of the probe's own: it moves when any
        other connection (this process's writer included) commits, and costs no lock."""
        return SQLiteCommits(self.db.connect())

    def backlog(self) -> int:
        """How many entries wait for the full-text index."""
        return self.store.derived.pending()


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
    `background_index`: index appended entries (and, with the semantic leg,
    embed them) on the maintenance thread once appends pause (derived.py);
    False leaves them to searches, closes, the bound and `forest index`."""
    target, opened = open_store(
        path,
        readonly=readonly,
        create=create,
        durability=durability,
        busy_timeout_ms=busy_timeout_ms,
    )
    db = Database(target, opened)
    maintenance = Maintenance(str(target), enabled=background_index and db.writer is not None)
    store = SQLiteStore(db, maintenance)
    trees = SQLiteTrees(db)
    sources = SQLSources(db, SQLITE)
    return SQLiteBackend(target, db, store, trees, maintenance, sources)
