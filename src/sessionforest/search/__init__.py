"""Search: recall inside one chat and finding a chat across the store.

A backend-neutral funnel over one `store.base.SearchIndex`: `find.search_chats`
and `recall.search_session_entries` are its entry points (`Forest` offers
them); composer.py answers `/recall` and `/find` in a chat.
No module here runs SQL or knows a backend's query syntax.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .composer import ComposerCommand, ResultCard, handle, parse_composer
    from .query import TimeWindow
    from .results import ChatHit, ChatSearch, EntryHit, GateReason

# Loaded on first use (PEP 562): the facade reaches `search.semantic` when it
# opens, and must not pay for the funnel's parsers and tables unless it searches.
_LAZY = {
    "ComposerCommand": "composer",
    "ResultCard": "composer",
    "handle": "composer",
    "parse_composer": "composer",
    "TimeWindow": "query",
    "ChatHit": "results",
    "ChatSearch": "results",
    "EntryHit": "results",
    "GateReason": "results",
}

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
