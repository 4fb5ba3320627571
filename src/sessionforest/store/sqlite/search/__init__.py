"""SQLite's search backend: FTS5 word and trigram indexes behind the SearchIndex primitives.

`SQLiteSearch(conn)` is one search's view (index.py, recall.py); the writers
that insert entries call `large.index_large` for payloads the triggers skip.
The index DDL is in the released migrations (store/sqlite/sql/); schema.py names what it made.
"""

from .index import SQLiteSearch
from .recall import SQLiteSessionIndex

__all__ = ["SQLiteSearch", "SQLiteSessionIndex"]
