"""The facade's two searches over a backend (interim: the funnel still reads SQLite).

Each search reads in one transaction (one consistent snapshot) and writes
nothing; results are plain values (see results.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

from .mixin import SearchMixin
from .results import ChatSearch, EntryHit

if TYPE_CHECKING:
    from ..store.sqlite import SQLiteBackend


class _Reader(SearchMixin):
    def __init__(self, backend: SQLiteBackend, now: datetime | None = None) -> None:
        self._backend = backend
        self._clock = lambda: now  # type: ignore[assignment,return-value]

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._backend.db.read() as conn:
            yield conn

    def _readable(self, session_id: str) -> str | None:
        return self._backend.store.head(session_id)


def search_session_entries(
    backend: SQLiteBackend, session_id: str, query: str, limit: int
) -> list[EntryHit]:
    return _Reader(backend).search_session_entries(session_id, query, limit)


def search_chats(
    backend: SQLiteBackend, query: str, now: datetime, limit: int, harness: str | None
) -> ChatSearch:
    return _Reader(backend, now).search_chats(query, now, limit, harness)
