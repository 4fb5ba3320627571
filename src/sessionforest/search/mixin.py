"""The two search entry points `Forest` offers today: a thin adapter over the funnel.

Each search reads in one transaction (one consistent snapshot) through one
`SQLiteSearch` bound to it, and writes nothing. The facade (issue 9) calls
`search.find.search_chats` / `search.recall.search_session_entries` itself
with an index from `Database.read()`; this mixin goes away then.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

from ..ids import Clock
from ..store.sqlite.search import SQLiteSearch
from .find import search_chats
from .recall import check_limit, search_session_entries
from .results import ChatSearch, EntryHit


class SearchMixin:
    """`search_session_entries` and `search_chats` for `Forest`."""

    _conn: sqlite3.Connection
    _clock: Clock

    if TYPE_CHECKING:

        def _readable(self, session_id: str) -> str | None: ...

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn
        if conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def search_session_entries(
        self, session_id: str, query: str, limit: int = 10
    ) -> list[EntryHit]:
        """Entries of this one session matching `query`, best first.

        Raises UnknownSession or SessionQuarantined like every read; an ended
        or archived session is searched like any other. `limit` must be at
        least 1 (InvalidArgument otherwise).
        """
        check_limit(limit)
        with self._reading() as conn:
            self._readable(session_id)
            return search_session_entries(SQLiteSearch(conn), session_id, query, limit)

    def search_chats(
        self,
        query: str,
        now: datetime | None = None,
        limit: int = 8,
        harness: str | None = None,
    ) -> ChatSearch:
        """Top-level chats matching `query`, best first, and whether the index is sure.

        Time phrases resolve against `now` (default: the store's clock);
        `harness` restricts the chats to one harness, as a harness word does;
        `limit` must be at least 1 (InvalidArgument otherwise).
        """
        check_limit(limit)
        moment = now or self._clock()
        with self._reading() as conn:
            return search_chats(SQLiteSearch(conn), query, moment, limit, harness)
