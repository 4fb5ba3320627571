"""Find's order when chats tie: the same every time and on every backend (newest chat first)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from sessionforest import Forest

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)
# Created in this order, so the ids' own order is not the answer.
IDS = ("tie-d", "tie-b", "tie-f", "tie-a", "tie-e", "tie-c")


def same_chats(make_chat: Any, messages: list[str]) -> list[str]:
    """Six chats with the same title, messages and times (their ids aside)."""
    return [make_chat("Otter notes", messages, session_id=sid, age_days=2) for sid in IDS]


@pytest.mark.parametrize(
    ("messages", "query", "mode"),
    [
        # One entry of each holds the word, and so does the title (every list ties).
        (["otters hold hands", "they do", "the tide turns"], "otters", "and"),
        # No entry holds both words: the OR's chat-level evidence ties too.
        (["otters hold hands", "they do", "kelp forests sway"], "otters kelp", "or"),
    ],
)
def test_chats_that_tie_come_newest_first_every_time(
    forest: Forest, make_chat: Any, messages: list[str], query: str, mode: str
) -> None:
    made = same_chats(make_chat, messages)
    for _ in range(3):
        result = forest.search_chats(query, now=NOW, limit=10)
        assert result.mode == mode
        assert [h.session_id for h in result.hits] == made[::-1]


def test_a_tie_below_a_better_chat_keeps_the_order(forest: Forest, make_chat: Any) -> None:
    made = same_chats(make_chat, ["otters hold hands", "they do", "the tide turns"])
    best = make_chat("Otters", ["otters", "otters again", "otters, otters"], age_days=2)
    result = forest.search_chats("otters", now=NOW, limit=10)
    assert [h.session_id for h in result.hits] == [best, *made[::-1]]
