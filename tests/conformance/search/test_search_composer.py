"""`/recall` and `/find` typed in a composer: parsed, answered locally as a card,
never written to the forest."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import Forest
from sessionforest.search.composer import ComposerCommand, handle, parse_composer

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("typed", "parsed"),
    [
        ("/recall foo", ComposerCommand("recall", "foo")),
        ("  /recall   the redis fix  ", ComposerCommand("recall", "the redis fix")),
        ("/RECALL Foo", ComposerCommand("recall", "Foo")),
        ("/find kanji last week", ComposerCommand("find", "kanji last week")),
        ("/find", ComposerCommand("find", "")),
        ("/recall\nmulti\nline", ComposerCommand("recall", "multi\nline")),
        ("/recallfoo", None),
        ("recall foo", None),
        ("please /recall foo", None),
        ("/help", None),
        ("", None),
    ],
)
def test_parse_composer(typed: str, parsed: ComposerCommand | None) -> None:
    assert parse_composer(typed) == parsed


def test_recall_card_searches_only_the_open_chat_and_writes_nothing(
    forest: Forest, harness: Harness, make_chat: Any
) -> None:
    here = make_chat("Redis", ["the redis fix was a timeout", "ok"])
    make_chat("Elsewhere", ["another redis fix"])
    # A backend may index appends when a search first needs them; past that, nothing.
    forest.search_chats("warm up")
    before = harness.dump(forest)
    changes = harness.changes(forest)
    card = handle(forest, here, "/recall redis fix", now=NOW)
    assert card is not None and card.command == "recall"
    assert [h.session_id for h in card.entries] == [here]
    assert card.text.splitlines()[0] == 'recall "redis fix" in this chat: 1 hit'
    assert "the **redis** **fix** was a timeout" in card.text
    assert card.to_json()["entries"][0]["session_id"] == here
    assert harness.changes(forest) == changes
    assert harness.dump(forest) == before


def test_find_card_is_the_chat_search(forest: Forest, harness: Harness, make_chat: Any) -> None:
    sid = make_chat("Kanji flashcards", ["build a kanji deck"], age_days=3)
    forest.search_chats("warm up")  # indexes what the appends left pending, if anything
    before = harness.dump(forest)
    card = handle(forest, None, "/find kanji 3 days ago", now=NOW)
    assert card is not None and card.chats is not None
    assert card.chats == forest.search_chats("kanji 3 days ago", now=NOW)
    assert card.chats.hits[0].session_id == sid
    assert card.text.startswith('find "kanji 3 days ago": confident')
    assert harness.dump(forest) == before


def test_find_card_lists_chats_found_outside_the_window(forest: Forest, make_chat: Any) -> None:
    sid = make_chat("Kanji flashcards", ["build a kanji deck"], age_days=40)
    card = handle(forest, None, "/find kanji yesterday", now=NOW)
    assert card is not None and card.chats is not None
    assert card.chats.hits == card.chats.outside_window
    assert [h.session_id for h in card.chats.outside_window] == [sid]
    lines = card.text.splitlines()
    assert "listed apart" in lines[0]
    assert lines[1:3] == [
        "  window: yesterday (2026-09-29T00:00:00.000Z .. 2026-09-30T00:00:00.000Z)",
        "  no chat matched yesterday; from any time:",
    ]
    assert lines[3].startswith("  1. Kanji flashcards  codex  2026-08-21 15:00")
    assert lines[4] == f"     {sid}  entry 1  build a **kanji** deck"
    assert "no chats found" not in card.text


def test_find_card_lists_chats_outside_the_window_after_those_inside(
    forest: Forest, make_chat: Any
) -> None:
    old = make_chat("Kanji flashcards", ["build a kanji deck"], age_days=40)
    new = make_chat("Kanji review", ["review the kanji deck"], age_days=1)
    card = handle(forest, None, "/find kanji yesterday", now=NOW)
    assert card is not None and card.chats is not None
    assert [h.session_id for h in card.chats.hits] == [new, old]
    lines = card.text.splitlines()
    assert lines[2].startswith("  1. Kanji review  codex")
    assert lines[4] == "  outside yesterday, from any time:"
    assert lines[5].startswith("  2. Kanji flashcards  codex")


def test_ordinary_messages_and_empty_commands(forest: Forest, make_chat: Any) -> None:
    sid = make_chat("x", ["y"])
    assert handle(forest, sid, "just a message") is None
    card = handle(forest, sid, "/recall")
    assert card is not None and card.text == "usage: /recall <words to look for>"
    card = handle(forest, None, "/recall something")
    assert card is not None and "open one first" in card.text and card.entries == ()
