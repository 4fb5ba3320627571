"""Which chats a search may return: one SQL predicate both backends' search statements
use (sessions aliased `s`).

A match may be in a harness's subagent or sidechain chat (hidden, imported: the
commands and files a user remembers often stand there); a chat forest made hidden
itself (a deep search's usage record) never is. Listing with nothing to match is
of top-level chats only, as the sidebar.
"""

from __future__ import annotations

from typing import Final

FINDABLE: Final = "(s.visibility = 'top-level' OR s.source_format IS NOT NULL)"
LISTED: Final = "s.visibility = 'top-level'"
