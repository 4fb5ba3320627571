"""A query that is a line (an error, a command) finds the chat holding that line first.

The typed text is also searched as one phrase, stopwords and punctuation-joined
parts included (search/terms.typed_line): a chat one entry of which holds it
ranks above chats holding the same words apart, however often they hold them,
and its hit lands on that entry.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sessionforest import Forest

from .conftest import chat

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)
LINE = "ModuleNotFoundError: No module named 'extract_feedback'"


def _scattered(forest: Forest, n: int) -> str:
    # Every word of the line in one entry, apart, and said more than once.
    return chat(
        forest,
        f"Packaging {n}",
        [
            "the module named extract_feedback is found? no, no module error here",
            "ModuleNotFoundError would name the module; extract_feedback module is named fine",
            "ok",
        ],
        age_days=0.5,
    )


def test_the_chat_holding_the_line_comes_first_and_lands_on_it(forest: Forest) -> None:
    others = [_scattered(forest, n) for n in range(4)]
    held = chat(forest, "Install", ["install it as a tool", "running it"], age_days=3)
    forest.append(held, "tool.completed", {"call_id": "c1", "output": f"Traceback\n{LINE}\n"})
    last = forest.append(held, "assistant.message", {"content": [{"type": "text", "text": "ok"}]})
    found = forest.search_chats(LINE, now=NOW)
    assert found.mode == "and"
    assert [h.session_id for h in found.hits][:1] == [held]
    assert set(others) <= {h.session_id for h in found.hits}
    hit = found.hits[0]
    assert hit.sequence == last.sequence - 1  # the tool result holding the line (every word)
    assert "extract_feedback" in hit.snippet.replace("**", "")


def test_a_line_no_chat_holds_leaves_the_order_to_the_words(forest: Forest) -> None:
    made = [_scattered(forest, n) for n in range(4)]
    found = forest.search_chats("module named extract_feedback is missing", now=NOW)
    assert {h.session_id for h in found.hits} == set(made)
    assert all(h.score < 1 for h in found.hits)  # no chat got the line's bonus
