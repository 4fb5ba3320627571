"""Followed sources (store/base/sources.py) on either SQL backend: one table, one row a file."""

from __future__ import annotations

from typing import Any

from ..base.sources import FollowedSource
from .dialect import Dialect

COLUMNS = "path, format, position, source_offset, chat, updated_at, error"
ONE = f"SELECT {COLUMNS} FROM followed_sources WHERE path = ?"
ALL = f"SELECT {COLUMNS} FROM followed_sources ORDER BY path"
KEEP = f"""
INSERT INTO followed_sources({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (path) DO UPDATE SET format = excluded.format, position = excluded.position,
    source_offset = excluded.source_offset, chat = excluded.chat,
    updated_at = excluded.updated_at, error = excluded.error
"""
FORGET = "DELETE FROM followed_sources WHERE path = ?"


class SQLSources:
    """`SourceStore` over a backend's `Database` (read() and write() transactions)."""

    def __init__(self, db: Any, dialect: Dialect) -> None:
        self._db = db
        self._one = dialect.sql(ONE)
        self._all = dialect.sql(ALL)
        self._keep = dialect.sql(KEEP)
        self._forget = dialect.sql(FORGET)

    def followed(self, path: str) -> FollowedSource | None:
        with self._db.read() as conn:
            row = conn.execute(self._one, (path,)).fetchone()
        return None if row is None else FollowedSource(*row)

    def all_followed(self) -> list[FollowedSource]:
        with self._db.read() as conn:
            return [FollowedSource(*row) for row in conn.execute(self._all).fetchall()]

    def keep_followed(self, source: FollowedSource) -> None:
        s = source
        with self._db.write() as conn:
            conn.execute(
                self._keep, (s.path, s.format, s.position, s.offset, s.chat, s.updated_at, s.error)
            )

    def forget_followed(self, path: str) -> None:
        with self._db.write() as conn:
            conn.execute(self._forget, (path,))
