"""The PostgreSQL backend (`pip install 'sessionforest[postgres]'`): components over one pool.

`open_postgres("postgresql://...")` connects (creating the database when asked
to and allowed), migrates and returns the `PostgresBackend` bundle the facade
talks to, as `open_sqlite` does for a file. A URL's `options=-csearch_path=X`
puts the store in schema X, so one database can hold several stores.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ...deadline import Deadline
from ...errors import ForestError, SearchStopped, StoreMissing, StoreUnreadable
from ..base.backend import HeadRow
from ..base.maintenance import Maintenance
from ..sql.dialect import POSTGRES
from ..sql.handoffs import SQLHandoffs
from ..sql.sources import SQLSources
from . import schema, toolfill
from .bulk import PostgresBulk
from .database import Database, driver_error
from .search import PostgresSearch
from .store import PostgresStore
from .trees import PostgresTrees
from .vectors import PostgresVectors

__all__ = ["PostgresBackend", "open_postgres", "redacted"]

READ_ONLY_ASKED = "it was opened read-only"


# The heads of named sessions, as `Store.heads` gives them.
HEADS_OF = """
SELECT s.id, h.active_entry_id, COALESCE(h.updated_at, s.created_at), s.status, s.title
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id
WHERE s.id = ANY(%s)
"""
# More sessions than this changed between two polls: read every head instead.
MAX_NOTIFIED = 10_000


class PostgresCommits:
    """One polling thread's commit probe (store.base.CommitProbe) over LISTEN/NOTIFY:
    each delivered notification of this store's schema moves the reading and names
    the session it changed."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn
        self._prefix = f"{conn.execute('SELECT current_schema()').fetchone()[0]}/"  # type: ignore[index]
        conn.execute("LISTEN forest_sessions")
        self._count = 0
        self._ids: set[str] = set()
        self._overflow = False

    def __call__(self) -> int:
        # Delivered notifications only: timeout=0 never waits.
        for note in self._conn.notifies(timeout=0):
            if note.payload.startswith(self._prefix):
                self._count += 1
                if len(self._ids) < MAX_NOTIFIED:
                    self._ids.add(note.payload[len(self._prefix) :])
                else:
                    self._overflow = True
        return self._count

    def changed(self) -> list[HeadRow] | None:
        ids, overflow = sorted(self._ids), self._overflow
        self._ids, self._overflow = set(), False
        if overflow:
            return None
        if not ids:
            return []
        rows = self._conn.execute(HEADS_OF, (ids,)).fetchall()
        return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def close(self) -> None:
        self._conn.close()


@dataclass(frozen=True, slots=True)
class PostgresBackend:
    """One PostgreSQL store and the components over it."""

    db: Database
    store: PostgresStore
    trees: PostgresTrees
    bulk: PostgresBulk

    maintenance: Maintenance
    sources: SQLSources
    handoffs: SQLHandoffs
    name = "postgresql"
    path: Path | None = None
    vectors: PostgresVectors | None = None

    @property
    def location(self) -> str:
        return self.db.where

    def close(self) -> None:
        self.maintenance.close()
        self.db.close()

    def catch_up(self) -> bool:
        """Fill what waits for the index, returning whether anything did: an append's
        own transaction indexes it (its triggers), so only entries stored before
        the tool field (0010_search_tool_text) ever wait, in chunks (toolfill.py).
        A store opened read-only searches them as they are."""
        db = self.db
        if db.readonly_why is not None or db.held() is not None:
            return False
        with db.read() as conn:
            if not toolfill.pending(conn):
                return False
        while db.retrying(toolfill.fill_some):
            pass
        return True

    def commit_probe(self) -> PostgresCommits:
        """A connection of the probe's own LISTENing on the store's change channel
        (migration session_changes): a poll reads what was delivered, no query."""
        try:
            return PostgresCommits(psycopg.connect(self.db.conninfo, autocommit=True))
        except psycopg.Error as exc:
            raise driver_error(self.db.where, exc) from exc

    def backlog(self) -> int:
        """Entries waiting for the full-text index: those stored before the tool
        field, until `catch_up` fills it (an upper bound: every kind counts)."""
        with self.db.read() as conn:
            return toolfill.waiting(conn)

    @contextmanager
    def search(self, deadline: Deadline | None = None) -> Iterator[PostgresSearch]:
        """A `SearchIndex` over one read snapshot (reads of `store` on this thread
        inside the block see the same snapshot). With a `deadline`, statements are
        bounded by the time left (statement_timeout) and a cancel sends the server a
        cancel request for the running one (SearchStopped either way)."""
        with self.db.read() as conn:
            if deadline is None:
                yield PostgresSearch(conn)
                return
            left = deadline.remaining()
            if left is not None:
                ms = str(math.ceil(left * 1000) + 1)  # past the deadline, never before it
                conn.execute("SELECT set_config('statement_timeout', %s, true)", (ms,))
            with deadline.interrupting(conn.cancel_safe):
                try:
                    yield PostgresSearch(conn)
                except (psycopg.errors.QueryCanceled, ForestError) as exc:
                    if deadline.reason is not None:
                        raise SearchStopped(deadline.reason) from exc
                    raise


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return url.split("@")[-1]
    user = str(params.get("user") or "")
    host = params.get("host") or "localhost"
    port = params.get("port") or "5432"
    name = params.get("dbname") or user
    return f"postgresql://{user + '@' if user else ''}{host}:{port}/{name}"


def _create_database(url: str, where: str) -> None:
    params: dict[str, Any] = conninfo_to_dict(url)
    name = params.get("dbname")
    if not name:
        raise StoreUnreadable(where, "the URL names no database")
    params["dbname"] = "postgres"
    params.pop("options", None)
    try:
        with psycopg.connect(make_conninfo(**params), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(str(name))))
    except psycopg.errors.DuplicateDatabase:
        return  # another opener made it meanwhile
    except psycopg.Error as exc:
        raise StoreUnreadable(where, f"cannot create database {name}: {exc}") from exc


def _no_database(exc: psycopg.Error) -> bool:
    # A refused connection carries no SQLSTATE in psycopg; the server's message says it.
    return exc.sqlstate == "3D000" or ("database" in str(exc) and "does not exist" in str(exc))


def open_postgres(
    url: str,
    *,
    readonly: bool = False,
    create: bool = True,
    durability: str = "normal",
    busy_timeout_ms: int = 30_000,
    background_index: bool = True,
) -> PostgresBackend:
    """Open (creating and migrating when allowed) the store at `url`.

    Durability: a commit returns once PostgreSQL has flushed its WAL
    (synchronous_commit on, the server's default), which survives a crash of
    any process and of the machine, so "normal" and "full" are the same here.
    An append's own transaction indexes it (the statement-level trigger,
    rows.py); `background_index` says whether the maintenance thread embeds
    the semantic leg's vectors behind the writes.
    """
    where = redacted(url)
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        if not _no_database(exc):
            raise StoreUnreadable(where, str(exc).strip()) from exc
        if readonly or not create:
            raise StoreMissing(where) from exc
        _create_database(url, where)
        try:
            conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as again:
            raise StoreUnreadable(where, str(again).strip()) from again
    except psycopg.Error as exc:
        raise StoreUnreadable(where, str(exc).strip()) from exc
    try:
        conn.execute(f"SET lock_timeout = {int(busy_timeout_ms)}")
        migrated = schema.migrate(conn, where, readonly=readonly)
    except psycopg.Error as exc:
        raise driver_error(where, exc) from exc
    finally:
        conn.close()
    db = Database(url, where, READ_ONLY_ASKED if readonly else None, migrated)
    return PostgresBackend(
        db,
        PostgresStore(db),
        PostgresTrees(db),
        PostgresBulk(db),
        Maintenance(where, enabled=background_index and not readonly),
        SQLSources(db, POSTGRES),
        SQLHandoffs(db, POSTGRES),
        vectors=PostgresVectors(db),
    )
