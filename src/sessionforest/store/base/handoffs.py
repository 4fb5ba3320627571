"""The `HandoffStore` contract: which entry each transcript `forest resume` wrote continues.

`forest resume` writes a branch of a chat as a new transcript of a harness
(sessionforest/resume/). When that transcript is imported later (or followed
by the live mirror), its importer derives fresh ids from it; the hand-off row
is what lets the import (io/handoff.py) meet the prefix it shares with the
chat as the chat's own entries and hang only the harness's new turns under
the entry it continues. One row a transcript, keyed as its importer names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Handoff:
    """One transcript written by `forest resume`, and the entry of a chat it continues."""

    format: str  # the importer that reads the transcript (io/importers.py)
    source_id: str  # the transcript's source id as that importer derives it
    session_id: str  # the chat it continues
    entry_id: str  # the entry it continues (its prefix is the path to it)
    path: str  # the transcript file
    target: str  # the harness it was written for (claude-code, codex, gemini)
    plan: str  # JSON text: prefix lines -> entries, ids met so far (io/handoff.py)
    created_at: str


class HandoffStore(Protocol):
    """A backend's table of hand-offs (`handoffs`)."""

    def handoff(self, fmt: str, source_id: str) -> Handoff | None:
        """The hand-off of the transcript `fmt` reads as `source_id`, if one was written."""
        ...

    def handoffs(self, session_id: str) -> list[Handoff]:
        """Every hand-off of a chat, oldest first."""
        ...

    def keep_handoff(self, handoff: Handoff) -> None:
        """Insert or replace the row of (`handoff.format`, `handoff.source_id`)."""
        ...
