"""The few ways the two SQL dialects spell the same statement.

Shared SQL is written once in SQLite's form: `?` for a positional parameter,
`:name` for a named one, `{order}` for the column that gives creation order.
`Dialect.sql` turns it into the backend's form once, at import time, so a
statement costs nothing more at run time than one written by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# `:name` but not a `::type` cast.
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


# A connection (or cursor) of either driver inside a transaction: `execute(sql,
# params)` returning rows to fetch or iterate. Typed loosely on purpose: the two
# drivers' classes share that shape but no base class.
Conn = Any


@dataclass(frozen=True, slots=True)
class Dialect:
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
