"""Composer commands `/recall <query>` and `/find <query>`, answered locally as a card.

A card is for the person typing: it is never sent to a model and never written
to the forest (both searches only read). The CLI prints the same cards, every
line escaped so stored text cannot break the card's layout.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

import msgspec

from ..text import escape, plural
from .results import ChatHit, ChatSearch, EntryHit

if TYPE_CHECKING:
    # TypedDicts for annotations only: wire.py builds ~30 of them at import.
    from ..wire import ResultCardJson

COMMANDS = ("recall", "find")
_COMMAND = re.compile(r"\s*/(recall|find)(?:\s+(.*))?", re.IGNORECASE | re.DOTALL)


class Searchable(Protocol):
    """What the composer needs of a store (a `Forest`)."""

    def search_session_entries(
        self, session_id: str, query: str, limit: int = 10
    ) -> list[EntryHit]: ...

    def search_chats(
        self,
        query: str,
        now: datetime | None = None,
        limit: int = 8,
        harness: str | None = None,
    ) -> ChatSearch: ...


class ComposerCommand(msgspec.Struct, frozen=True):
    name: str  # "recall" or "find"
    query: str


class ResultCard(msgspec.Struct, frozen=True):
    """A local answer: shown to the user, never sent to a model, never stored."""

    command: str
    query: str
    text: str
    entries: tuple[EntryHit, ...] = ()
    chats: ChatSearch | None = None

    def to_json(self) -> ResultCardJson:
        return {
            "command": self.command,
            "query": self.query,
            "text": self.text,
            "entries": [hit.to_json() for hit in self.entries],
            "chats": self.chats.to_json() if self.chats is not None else None,
        }


def parse_composer(text: str) -> ComposerCommand | None:
    """The command typed in a composer, or None for an ordinary message."""
    m = _COMMAND.fullmatch(text)
    if m is None:
        return None
    return ComposerCommand(m[1].lower(), (m[2] or "").strip())


def _when(stamp: str) -> str:
    return stamp[:16].replace("T", " ")


def recall_card(query: str, hits: Sequence[EntryHit]) -> str:
    """The text of a `/recall` card (also `forest recall`)."""
    lines = [f'recall "{query}" in this chat: {plural(len(hits), "hit")}']
    for hit in hits:
        where = "" if hit.on_active_branch else "  (off the active branch)"
        lines.append(f"  #{hit.sequence:<4} {hit.kind:<17} {_when(hit.created_at)}{where}")
        lines.append(f"        {hit.snippet}")
    return "\n".join(map(escape, lines))


def find_card(result: ChatSearch) -> str:
    """The text of a `/find` card (also `forest find`)."""
    verdict = "confident" if result.confident else "not sure"
    lines = [f'find "{result.query}": {verdict} ({result.detail})']
    if result.window is not None:
        w = result.window.to_json()
        lines.append(f"  window: {w['phrase']} ({w['start']} .. {w['end']})")
    if result.harness:
        lines.append(f"  harness: {', '.join(result.harness)}")
    if result.unknown_terms:
        lines.append(f"  never seen: {', '.join(result.unknown_terms)}")
    if result.excluded_terms:
        lines.append(f"  excluding chats with: {', '.join(result.excluded_terms)}")
    outside = {hit.session_id for hit in result.outside_window}
    inside = [hit for hit in result.hits if hit.session_id not in outside]
    lines += _chat_lines(inside)
    if result.outside_window:
        # The hits from outside the window follow the others, under a line of their own.
        phrase = result.window.phrase if result.window is not None else "the time window"
        lines.append(
            f"  outside {phrase}, from any time:"
            if inside
            else f"  no chat matched {phrase}; from any time:"
        )
        lines += _chat_lines(result.outside_window, len(inside) + 1)
    elif not result.hits:
        lines.append("  no chats found")
    return "\n".join(map(escape, lines))


def _chat_lines(hits: Sequence[ChatHit], first: int = 1) -> list[str]:
    lines = []
    for n, hit in enumerate(hits, first):
        status = "" if hit.status == "active" else f"  [{hit.status}]"
        title = hit.title or "(untitled)"
        lines.append(f"  {n}. {title}{status}  {hit.harness or '-'}  {_when(hit.updated_at)}")
        lines.append(
            f"     {hit.session_id}{_landing(hit)}" + (f"  {hit.snippet}" if hit.snippet else "")
        )
    return lines


def _landing(hit: ChatHit) -> str:
    """Where the chat opens, as `forest log` numbers entries (`forest seek` takes it)."""
    if hit.sequence is None:
        return ""
    return f"  entry {hit.sequence}" + ("" if hit.active else " (off the active branch)")


def run_command(
    forest: Searchable,
    session_id: str | None,
    command: ComposerCommand,
    now: datetime | None = None,
) -> ResultCard:
    """Answer a parsed command; `/recall` searches `session_id` only."""
    name, query = command.name, command.query
    if not query:
        return ResultCard(name, query, f"usage: /{name} <words to look for>")
    if name == "recall":
        if session_id is None:
            return ResultCard(name, query, "/recall searches the open chat: open one first")
        hits = forest.search_session_entries(session_id, query)
        return ResultCard(name, query, recall_card(query, hits), entries=tuple(hits))
    result = forest.search_chats(query, now=now)
    return ResultCard(name, query, find_card(result), chats=result)


def handle(
    forest: Searchable, session_id: str | None, text: str, now: datetime | None = None
) -> ResultCard | None:
    """A card when `text` is a composer command; None when it is a message to send."""
    command = parse_composer(text)
    return None if command is None else run_command(forest, session_id, command, now)
