"""The semantic leg (the `[semantic]` extra): quality next to the index alone, and its costs.

Quality. The Bridge corpus and LoCoMo as bench_search.py loads them, searched
twice in the same run on the same store: with the semantic leg, and with it
off (`Forest.open` under FOREST_SEMANTIC=off, so the lexical funnel alone),
at the fusion weights in search/retrieve.py and at the other weights tried
(every variant is reported, the chosen one is the shipped constants).

Costs. Embedding throughput on one core (LoCoMo turns, the model alone);
model load time; append and import throughput with the leg on and off,
interleaved run by run (an append never embeds: only the vector catch-up
after an import, a search or `forest index --semantic` does); T1 latency with
and without the leg on the scaled Bridge stores.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import harness
import search_data
from bench_search import BridgeOutcome, Scores, bridge_quality
from sessionforest import Forest
from sessionforest.search import embedder, retrieve

NAME = "semantic"
VAGUE_TARGET, EXACT_TARGET, TIME_TARGET = 10, 15, 10
LOCOMO_R5_TARGET = 0.95
WEIGHTS = ((1.0, 8.0), (1.0, 4.0), (1.0, 16.0), (2.0, 8.0), (0.5, 8.0))


@contextmanager
def semantic_off() -> Iterator[None]:
    before = os.environ.get(embedder.SWITCH)
    os.environ[embedder.SWITCH] = "off"
    try:
        yield
    finally:
        if before is None:
            del os.environ[embedder.SWITCH]
        else:
            os.environ[embedder.SWITCH] = before


@contextmanager
def weights(pair: tuple[float, float]) -> Iterator[None]:
    before = retrieve.SEMANTIC_WEIGHT_AND, retrieve.SEMANTIC_WEIGHT_OR
    retrieve.SEMANTIC_WEIGHT_AND, retrieve.SEMANTIC_WEIGHT_OR = pair  # type: ignore[misc]
    try:
        yield
    finally:
        retrieve.SEMANTIC_WEIGHT_AND, retrieve.SEMANTIC_WEIGHT_OR = before  # type: ignore[misc]


def _bridge_counts(outcomes: Sequence[BridgeOutcome]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in ("exact", "vague", "time"):
        out[k] = sum(o.at(4) for o in outcomes if o.klass == k)
    out["wrong"] = sum(o.confident_wrong for o in outcomes)
    out["confident"] = sum(o.confident for o in outcomes)
    out["r1"] = sum(o.at(1) for o in outcomes)
    return out


def _locomo(forest: Forest, corpus: search_data.Locomo) -> tuple[Scores, int, int]:
    scores = Scores()
    confident = wrong = 0
    for q in corpus.questions:
        result = forest.search_chats(q.question, now=corpus.now, limit=10)
        ranked = [h.session_id for h in result.hits]
        scores.add(ranked, q.gold)
        if result.confident:
            confident += 1
            wrong += not ranked or ranked[0] not in q.gold
    return scores, confident, wrong


def quality(variants: Sequence[tuple[float, float]]) -> dict[str, Any]:
    bridge = search_data.load_bridge()
    locomo = search_data.load_locomo()
    out: dict[str, Any] = {}
    path = harness.WORK / "semantic-bridge.db"
    harness.remove_db(path)
    forest = Forest.open(path, clock=lambda: bridge.now)
    t = time.perf_counter()
    search_data.store_bridge(forest, bridge)
    out["bridge_embed_s"] = _timed(lambda: forest.index_semantic())
    out["bridge_load_s"] = time.perf_counter() - t
    for pair in variants:
        with weights(pair):
            out[("bridge", pair)] = _bridge_counts(bridge_quality(forest, bridge))
    forest.close()
    with semantic_off():
        plain = Forest.open(path, clock=lambda: bridge.now)
        out[("bridge", None)] = _bridge_counts(bridge_quality(plain, bridge))
        plain.close()
    harness.remove_db(path)

    path = harness.WORK / "semantic-locomo.db"
    harness.remove_db(path)
    forest = Forest.open(path, clock=lambda: locomo.now)
    out["locomo_entries"] = search_data.store_locomo(forest, locomo)
    out["locomo_embed_s"] = _timed(lambda: forest.index_semantic())
    for pair in variants:
        with weights(pair):
            out[("locomo", pair)] = _locomo(forest, locomo)
    forest.close()
    with semantic_off():
        plain = Forest.open(path, clock=lambda: locomo.now)
        out[("locomo", None)] = _locomo(plain, locomo)
        plain.close()
    harness.remove_db(path)
    return out


def _timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    import sys

    chosen = (retrieve.SEMANTIC_WEIGHT_AND, retrieve.SEMANTIC_WEIGHT_OR)
    got = quality([chosen] if "--chosen" in sys.argv else WEIGHTS)
    for key, value in got.items():
        print(key, value if not isinstance(value, tuple) else (value[0].text(), *value[1:]))
