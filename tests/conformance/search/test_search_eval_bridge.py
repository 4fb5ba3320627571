"""Finding a chat, measured on the original system's own labelled benchmark.

`../shared/data/bridge-chat-search/corpus.json`: 200 chats padded to 100
entries each (20,000 entries), 40 queries in three classes. The corpus is
loaded as that system's eval loads it (benchmarks/search_data.py says how),
through the public `Forest` API, with `now` pinned to the corpus `now`: once
per module, into a store file of its own, by 20,000 single appends; each
backend's store is a `Forest.copy_to` of it (the bulk path, which verifies
every session by count and hash; tests/store/postgres/test_copy.py checks that
a bulk-loaded store searches as one built by appends). 20,000 appends into
PostgreSQL took most of this module's time, and single appends are not what it
tests.

Targets, index only (no model): recall@4 of 15/15 on exact and 10/10 on time
queries, at least 6/15 on vague ones (the original's pinned floor), and not one
query where the gate is confident while the top chat is not the expected one
(Enter would open the wrong chat). Every figure and every miss is printed and
repeated in each assertion message, so a failure says which query and why.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from conformance.backends import Backend
from sessionforest import Forest


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

EXACT_TARGET = 15
TIME_TARGET = 10
VAGUE_FLOOR = 6


@dataclass(frozen=True, slots=True)
class Outcome:
    query: str
    klass: str
    expect: str
    top4: tuple[str, ...]
    confident: bool
    reason: str
    terms: tuple[str, ...]
    unknown: tuple[str, ...]
    window: str | None

    @property
    def found(self) -> bool:
        return self.expect in self.top4

    @property
    def confident_wrong(self) -> bool:
        return self.confident and (not self.top4 or self.top4[0] != self.expect)

    def line(self) -> str:
        mark = "CONFIDENT-WRONG" if self.confident_wrong else ("ok" if self.found else "MISS")
        return (
            f"  {mark:<15} [{self.klass}] {self.query!r} expect={self.expect} "
            f"top4={list(self.top4)} confident={self.confident} reason={self.reason} "
            f"terms={list(self.terms)} unknown={list(self.unknown)} window={self.window}"
        )


@dataclass(frozen=True, slots=True)
class Eval:
    outcomes: tuple[Outcome, ...]
    entries: int

    def found(self, klass: str) -> int:
        return sum(o.found for o in self.outcomes if o.klass == klass)

    def total(self, klass: str) -> int:
        return sum(o.klass == klass for o in self.outcomes)

    def report(self) -> str:
        lines = [f"Bridge chat-search eval, index only ({self.entries:,} entries):"]
        for klass in ("exact", "vague", "time"):
            confident = sum(o.confident for o in self.outcomes if o.klass == klass)
            lines.append(
                f"  {klass}: recall@4 {self.found(klass)}/{self.total(klass)}, "
                f"confident {confident}/{self.total(klass)}"
            )
        wrong = [o for o in self.outcomes if o.confident_wrong]
        lines.append(
            f"  confident: {sum(o.confident for o in self.outcomes)}/{len(self.outcomes)}, "
            f"confident but top hit wrong: {len(wrong)}"
        )
        lines.append("misses and confident-wrong queries:")
        lines += [o.line() for o in self.outcomes if not o.found or o.confident_wrong] or [
            "  (none)"
        ]
        return "\n".join(lines)


@pytest.fixture(scope="module")
def appended(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Forest, int]]:
    """The corpus written by single appends, once per module; and how many it wrote."""
    corpus = data.load_bridge()
    assert (len(corpus.chats), len(corpus.queries)) == (200, 40)
    path = tmp_path_factory.mktemp("bridge-appended") / "bridge.db"
    with Forest.open(path, clock=lambda: corpus.now) as forest:
        yield forest, data.store_bridge(forest, corpus)


@pytest.fixture(scope="module")
def bridge(
    backend: Backend, appended: tuple[Forest, int], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Eval]:
    """The corpus copied into a store of each backend, every query asked; the figures printed."""
    corpus = data.load_bridge()
    source, entries = appended
    harness = backend.open_harness(tmp_path_factory.mktemp("bridge"))
    forest = harness.fresh(clock=lambda: corpus.now)
    try:
        copied = source.copy_to(forest)
        assert (copied.verified, copied.entries) == (200, entries), copied
        assert not (copied.mismatched or copied.quarantined), copied
        outcomes = []
        for q in corpus.queries:
            result = forest.search_chats(q.query, now=corpus.now)
            outcomes.append(
                Outcome(
                    query=q.query,
                    klass=q.klass,
                    expect=q.expect,
                    top4=tuple(hit.session_id for hit in result.hits[:4]),
                    confident=bool(result.confident),
                    reason=str(result.reason),
                    terms=tuple(getattr(result, "terms", ())),
                    unknown=tuple(result.unknown_terms),
                    window=result.window.phrase if result.window else None,
                )
            )
        found = Eval(tuple(outcomes), entries)
        print("\n" + found.report())
        yield found
    finally:
        harness.close()


def test_the_corpus_is_loaded_as_the_original_eval_loads_it(bridge: Eval) -> None:
    assert bridge.entries == 20_000
    corpus = data.load_bridge()
    pick = data.EvalFiller(corpus.filler)
    first = data.bridge_entries(corpus, corpus.chats[0], pick)
    keys = corpus.chats[0].keys
    # Key 0 opens the chat, keys 1 and 2 recur at sequences 7 and 37; the rest is filler.
    assert [first[i][1] for i in (0, 7, 37)] == list(keys)
    assert all(first[i][1] in corpus.filler for i in range(100) if i not in (0, 7, 37))
    assert [kind for kind, _, _ in first[:3]] == [
        "user.message",
        "assistant.message",
        "user.message",
    ]
    assert first[0][2] == "2026-09-29T13:00:00.000Z"  # daysAgo 1, two hours before now


def test_exact_queries_find_their_chat_in_the_top_four(bridge: Eval) -> None:
    assert bridge.found("exact") >= EXACT_TARGET, bridge.report()


def test_time_queries_find_their_chat_in_the_top_four(bridge: Eval) -> None:
    assert bridge.found("time") >= TIME_TARGET, bridge.report()


def test_vague_queries_stay_at_or_above_the_pinned_floor(bridge: Eval) -> None:
    assert bridge.found("vague") >= VAGUE_FLOOR, bridge.report()


def test_the_gate_is_never_confident_about_a_wrong_chat(bridge: Eval) -> None:
    wrong = [o for o in bridge.outcomes if o.confident_wrong]
    assert not wrong, bridge.report()
