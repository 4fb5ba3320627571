"""A small sanity check of finding a chat on real dialogue: one LoCoMo conversation.

LoCoMo (`../shared/data/locomo/locomo10.json`, CC BY-NC 4.0: test data only,
never shipped) is loaded as benchmarks/search_data.py describes: every session
a chat dated from its `session_N_date_time`, turns alternating user/assistant
by speaker. The full evaluation (all 10 conversations, against whole-chat BM25
and random rankings) is in benchmarks/bench_search.py; this only checks that
the loader maps evidence to sessions and that T1 is far better than chance.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

from conformance.backends import Harness


def _search_data() -> ModuleType:
    name = "sessionforest_bench_search_data"
    if name in sys.modules:  # the other eval test loaded it already
        return sys.modules[name]
    path = Path(__file__).resolve().parents[3] / "benchmarks" / "search_data.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


data = _search_data()


def test_locomo_loads_as_dated_chats_with_evidence_sessions() -> None:
    corpus = data.load_locomo()
    assert len(corpus.chats) == 272
    assert sum(len(c.turns) for c in corpus.chats) == 5_882
    first = corpus.chats[0]
    assert (first.session_id, first.title) == ("conv-26-s1", "conv-26 session 1")
    assert first.date == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # "1:56 pm on 8 May, 2023"
    assert first.turns[0] == (
        "user.message",
        "Caroline: Hey Mel! Good to see you! How have you been?",
    )
    assert first.turns[1][0] == "assistant.message"
    # "When did Caroline go to the LGBTQ support group?" has evidence D1:3.
    q = corpus.questions[0]
    assert q.question.startswith("When did Caroline go to the LGBTQ support group")
    assert q.gold == frozenset({"conv-26-s1"})
    assert data.parse_locomo_date("10:04 am on 19 December, 2023") == datetime(
        2023, 12, 19, 10, 4, tzinfo=UTC
    )
    assert len(corpus.questions) + corpus.skipped_questions == 1_986


def test_t1_finds_the_evidence_session_far_better_than_chance(harness: Harness) -> None:
    full = data.load_locomo()
    chats = tuple(c for c in full.chats if c.sample_id == "conv-26")
    questions = [q for q in full.questions if q.sample_id == "conv-26"]
    corpus = data.Locomo(chats, tuple(questions), 0, full.now)
    forest = harness.fresh(clock=lambda: corpus.now)
    try:
        data.store_locomo(forest, corpus)
        at5 = 0
        chance = 0.0
        for q in questions:
            ranked = [h.session_id for h in forest.search_chats(q.question, now=corpus.now).hits]
            at5 += any(s in q.gold for s in ranked[:5])
            n, g = len(chats), len(q.gold)
            chance += 1 - math.comb(n - g, 5) / math.comb(n, 5)
    finally:
        forest.close()
    recall, expected = at5 / len(questions), chance / len(questions)
    print(f"\nLoCoMo conv-26: {len(chats)} chats, {len(questions)} questions, "
          f"T1 recall@5 {recall:.3f} vs random {expected:.3f}")  # fmt: skip
    assert recall >= expected + 0.25, f"T1 recall@5 {recall:.3f}, random {expected:.3f}"
