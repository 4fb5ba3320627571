"""The workspace and agent trees on PostgreSQL: store/sql/trees.py in psycopg's dialect."""

from __future__ import annotations

from ..sql.dialect import POSTGRES
from ..sql.trees import SQLTrees
from .database import Database


class PostgresTrees(SQLTrees):
    """`TreeStore` (store/base/store.py) over one PostgreSQL `Database`."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, POSTGRES)
