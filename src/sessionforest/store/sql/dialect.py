"""The few ways the two SQL dialects spell the same statement.

Shared SQL is written once in SQLite's form: `?` for a positional parameter,
`:name` for a named one, `{order}` for the column that gives creation order.
`Dialect.sql` turns it into the backend's form once, at import time, so a
statement costs nothing more at run time than one written by hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

import msgspec

# `:name` but not a `::type` cast.
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")

# A result row. Its cells are what the driver makes of each column (str, int,
# float, bytes or None here): the statement, not the type, says which.
Row = tuple[Any, ...]
# Bound parameters: by position (`?`) or by name (`:name`).
Params = Sequence[Any] | Mapping[str, Any]


class Cursor(Protocol):
    """What both drivers' cursors give the shared SQL (sqlite3's and psycopg's)."""

    @property
    def rowcount(self) -> int: ...

    @property
    def description(self) -> Sequence[Any] | None: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int = ...) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Conn(Protocol):
    """A connection of either driver inside a transaction: `execute(sql, params)`
    returning a cursor. The two drivers' classes share this shape but no base class."""

    def execute(self, sql: str, params: Params = ..., /) -> Cursor: ...


# A backend's connection class (sqlite3.Connection, psycopg.Connection): the shared
# classes are generic in it, so a backend's hooks take its own driver's connection.
C = TypeVar("C", bound=Conn)
C_co = TypeVar("C_co", bound=Conn, covariant=True)


class Database(Protocol[C_co]):
    """A backend's connections as the shared SQL takes them (store/sqlite/database.py,
    store/postgres/database.py): a read transaction, a write transaction."""

    readonly_why: str | None
    migrated: list[str]

    def read(self) -> AbstractContextManager[C_co]: ...

    def write(self) -> AbstractContextManager[C_co]: ...

    def close(self) -> None: ...


class Dialect(msgspec.Struct, frozen=True):
    name: str
    pyformat: bool  # psycopg's %s / %(name)s, else SQLite's ? / :name
    order: str  # the column whose order is creation order (SQLite's rowid)

    def sql(self, text: str) -> str:
        """`text` (shared form) in this dialect."""
        text = text.replace("{order}", self.order)
        if not self.pyformat:
            return text
        text = text.replace("%", "%%").replace("?", "%s")
        return _NAMED.sub(r"%(\1)s", text)


SQLITE = Dialect("sqlite", pyformat=False, order="rowid")
POSTGRES = Dialect("postgres", pyformat=True, order="num")
