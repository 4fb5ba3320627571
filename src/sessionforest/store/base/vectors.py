"""The `VectorStore` contract: entry vectors of the semantic leg, kept with the chats.

Optional per backend (`Backend.vectors` is None where a backend keeps none).
Vectors are computed above the store (search/semantic.py), off the append's
path: an append only leaves its chat noted as having entries without vectors
(on SQLite, when the full-text catch-up indexes them); `pending` hands out
their text, the caller embeds it outside any transaction, `put` stores the
vectors in one write transaction. Keys are the search index's (`EntryKey`,
the chat's `ChatKey` in its high bits), so vectors join the funnel's lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .search import ChatKey, EntryKey


@dataclass(frozen=True, slots=True)
class Pending:
    """Entries waiting for a vector: (entry key, its indexed text), chat by chat in
    entry order, and the noted chats found to have nothing left to embed."""

    rows: list[tuple[EntryKey, str]]
    idle: list[ChatKey]


class VectorStore(Protocol):
    """A backend's table of entry vectors (float32, little-endian, one model at a time)."""

    def pending(self, model: str, limit: int) -> Pending:
        """Up to `limit` indexed entries with no vector of `model` yet (while the
        stored vectors are another model's, every chat's entries are)."""
        ...

    def put(
        self,
        model: str,
        vectors: Sequence[tuple[EntryKey, bytes]],
        done: Sequence[EntryKey],
        idle: Sequence[ChatKey] = (),
    ) -> None:
        """Store `vectors` and mark every key in `done` (those without text included)
        as embedded, in one write transaction; a chat (of `done`, or an `idle` one of
        `pending`) stops being pending once nothing of it is left. Storing under
        another model first drops every older vector and notes every chat again."""
        ...

    def load(
        self, model: str, after: int, limit: int | None = None
    ) -> tuple[int, list[tuple[EntryKey, bytes]]]:
        """(mark, vectors of `model` stored since mark `after`; 0: all of them), at most
        `limit` of them (the first ones; the mark is that of the last returned). A mark
        only grows while the model stays; a smaller one means start again from 0."""
        ...

    def waiting(self) -> int:
        """How many chats have entries without vectors (one cheap count)."""
        ...

    def backlog(self) -> int:
        """How many entries are waiting for a vector (a count over the noted chats)."""
        ...

    def renote(self) -> None:
        """Note every chat as pending (a backfill after vectors were dropped)."""
        ...
