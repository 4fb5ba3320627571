"""Search: recall inside one chat and finding a chat across the store.

`Forest.search_session_entries` and `Forest.search_chats` (see mixin.py) are
the entry points; composer.py answers `/recall` and `/find` typed in a chat.
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
