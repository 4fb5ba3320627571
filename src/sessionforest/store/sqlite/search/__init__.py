"""SQLite's search backend: FTS5 word and trigram indexes behind the SearchIndex primitives.

`SQLiteSearch(conn)` is one search's view (index.py, recall.py); the writers
that insert entries call `large.index_large` for payloads the triggers skip.
The index DDL is in the released migrations (store/sqlite/sql/); schema.py names what it made.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .index import SQLiteSearch
    from .recall import SQLiteSessionIndex

# Loaded on first use (PEP 562): an append or a listing reaches catchup.py and
# large.py, and must not load the query side (index.py, recall.py, grams.py).
_LAZY = {"SQLiteSearch": "index", "SQLiteSessionIndex": "recall"}

__all__ = ["SQLiteSearch", "SQLiteSessionIndex"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
