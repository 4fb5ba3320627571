"""Search: recall inside one chat and finding a chat across the store.

A backend-neutral funnel over one `store.base.SearchIndex`: `find.search_chats`
and `recall.search_session_entries` are its entry points (`Forest` offers
them); composer.py answers `/recall` and `/find` in a chat.
No module here runs SQL or knows a backend's query syntax.
"""

from .composer import ComposerCommand, ResultCard, handle, parse_composer
from .query import TimeWindow
from .results import ChatHit, ChatSearch, EntryHit, GateReason

__all__ = [
    "ChatHit",
    "ChatSearch",
    "ComposerCommand",
    "EntryHit",
    "GateReason",
    "ResultCard",
    "TimeWindow",
    "handle",
    "parse_composer",
]
