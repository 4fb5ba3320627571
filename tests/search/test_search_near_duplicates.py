"""The gate beside a near-duplicate: a newer follow-up that repeats an older chat's
words, and more of them, is no answer the gate may be sure of (issue 26).

Real histories hold such pairs (the topic taken up again a few weeks on). The
words cannot say which chat a user meant, so the gate must not be confident
about either, and recency does not decide it (a follow-up is always the newer
chat). Run on every backend (the `forest` fixture is parametrised over them).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sessionforest import Forest
from sessionforest.ids import iso
from sessionforest.search.results import GateReason

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)
FILLER = ("ok", "looks good", "running it now", "done, tests pass")


def _text(body: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": body}]}


def _chat(forest: Forest, title: str, messages: Sequence[str], age_days: float) -> str:
    start = NOW - timedelta(days=age_days)
    sid = forest.create_session(title, "claude-code", created_at=iso(start))
    for i, body in enumerate(messages):
        kind = "user.message" if i % 2 == 0 else "assistant.message"
        forest.append(sid, kind, _text(body), created_at=iso(start + timedelta(seconds=i)))
    return sid


def _others(forest: Forest) -> None:
    for i in range(4):
        _chat(forest, f"Misc {i}", ["the build is green", *FILLER], age_days=10 + i)


def test_a_follow_up_repeating_the_words_is_never_a_confident_answer(forest: Forest) -> None:
    original = _chat(
        forest,
        "Wheel build fails with hatchling",
        ["uv tool install fails: hatchling cannot build the wheel", *FILLER,
         "the wheel needs packages in pyproject"],
        age_days=40,
    )  # fmt: skip
    follow_up = _chat(
        forest,
        "Wheel build fails with hatchling",
        ["uv tool install fails again: hatchling cannot build the wheel", *FILLER,
         "hatchling still cannot build the wheel", "the wheel needs packages in pyproject"],
        age_days=3,
    )  # fmt: skip
    _others(forest)
    result = forest.search_chats("hatchling wheel", now=NOW)
    ranked = [h.session_id for h in result.hits]
    assert set(ranked[:2]) == {original, follow_up}
    # The newer chat holds more of the words and ranks first; the words do not
    # single it out and recency may not either (it holds more, not as much).
    assert ranked[0] == follow_up
    assert result.hits[0].evidence > result.hits[1].evidence
    assert (result.confident, result.reason) == (False, GateReason.NARROW_LEAD)


def test_a_twin_holding_the_words_as_often_is_no_confident_answer_either(
    forest: Forest,
) -> None:
    words = ["uv tool install fails: hatchling cannot build the wheel", *FILLER]
    _chat(forest, "Wheel build fails with hatchling", words, age_days=40)
    newer = _chat(forest, "Wheel build fails with hatchling", words, age_days=3)
    _others(forest)
    result = forest.search_chats("hatchling wheel", now=NOW)
    assert result.top is not None and result.top.session_id == newer
    assert (result.confident, result.reason) == (False, GateReason.NARROW_LEAD)


def test_a_clear_leader_beside_a_distant_relative_stays_confident(forest: Forest) -> None:
    # A chat about the words, beside one that mentions them once in passing: the
    # near-duplicate rule costs nothing where the words single a chat out.
    leader = _chat(
        forest,
        "Wheel build fails with hatchling",
        ["uv tool install fails: hatchling cannot build the wheel", *FILLER,
         "hatchling needs the wheel packages listed", "the wheel builds now"],
        age_days=40,
    )  # fmt: skip
    _chat(forest, "Release notes", ["we ship a wheel", *FILLER, "hatchling is the backend"], 3)
    _others(forest)
    result = forest.search_chats("hatchling wheel", now=NOW)
    assert result.top is not None and result.top.session_id == leader
    assert (result.confident, result.reason) == (True, GateReason.CLEAR_LEAD)
