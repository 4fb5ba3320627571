"""T1's final order: chats whose scores and activity tie come by chat key, newest first."""

from __future__ import annotations

from datetime import UTC, datetime

from sessionforest.search import retrieve
from sessionforest.search.retrieve import Candidate

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)
WHEN = datetime(2026, 9, 28, 15, 0, tzinfo=UTC)


def candidate(key: int, evidence_rank: int) -> Candidate:
    chat = Candidate(key, f"s{key}", "t", "codex", "active", "", WHEN, WHEN, "")
    chat.evidence_rank = evidence_rank  # the only list these chats are in
    return chat


def test_equal_scores_and_activity_come_newest_chat_first_whatever_the_input_order() -> None:
    for keys in ([3, 1, 4, 2], [2, 4, 1, 3], [1, 2, 3, 4]):
        chats = {k: candidate(k, 1) for k in keys} | {9: candidate(9, 2)}
        ranked = retrieve._ranked(None, chats, (), "and", NOW, 8)  # type: ignore[arg-type]
        assert [c.key for c in ranked] == [4, 3, 2, 1, 9]
        assert len({c.score for c in ranked[:4]}) == 1


def test_the_gate_s_words_only_order_breaks_ties_the_same_way() -> None:
    chats = [candidate(k, 1) for k in (2, 5, 1)]
    assert [c.key for c in retrieve.lexical_order(chats)] == [5, 2, 1]
