"""The workspace and agent trees on SQLite: store/sql/trees.py in SQLite's dialect."""

from __future__ import annotations

from ..sql.dialect import SQLITE
from ..sql.trees import SQLTrees
from .database import Database


class SQLiteTrees(SQLTrees):
    """`TreeStore` (store/base/store.py) over one SQLite `Database`."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, SQLITE)
