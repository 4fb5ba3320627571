"""PostgreSQL T1 paired query by query: two ways of running the same search.

On a PostgreSQL store of the scaled Bridge corpus (bench_postgres.py builds them;
`--build COPIES` builds one here: 5 copies = 100k entries, 50 = 1M), every
labelled and common-word query is run both ways, alternating which goes first,
each timed right after an untimed run of itself. The two sides share the
process, the store and the load, so the ratio holds on a loaded machine where
absolute times do not. Index only (FOREST_SEMANTIC=off), as run.py measures.

`--compare walk` (the default): with the newest-chats walk
(search.PostgresSearch._newest, as shipped) and without it (every newest-match
list read through the GIN index, as before it).

`--compare trips`: as shipped, where a search's term statistics, probes,
snippets and landings are asked together (a statement for each kind), and one
statement per item as before that (`OneByOne`). Also prints the statements
each side sends per search (load-independent) and checks that both sides
return the same hits, snippets, landings and gate decisions for every query.

`--compare evidence`: as shipped, where the chat-level evidence (every term's
entry counts and digest list, the chat count and sizes) is one statement and the
passages' reads one more, and `PerList`, as before that: a statement per list
(the rest as shipped). Statements per search and the same results, as `trips`.

    .venv/bin/python benchmarks/pg_t1_pairs.py --build 50 postgresql://…/somedb
    .venv/bin/python benchmarks/pg_t1_pairs.py --compare trips postgresql://…/somedb
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import bench_search
import harness
import search_data
from bench_postgres import _copy
from sessionforest import Forest
from sessionforest.search import terms as search_terms
from sessionforest.store import postgres as pg_store
from sessionforest.store.base import ChatEvidence, ChatKey, EntryKey, Landing, Term
from sessionforest.store.base.search import (
    chat_evidence_alone,
    contains_each_alone,
    entry_sequences_alone,
    shown_alone,
)
from sessionforest.store.postgres import search as pg_search

# The statements of term statistics as they were (one per stem and index).
ENTRY_DF = "SELECT docs FROM search_terms WHERE term = %s"
DIGEST_DF = "SELECT docs FROM digest_terms WHERE term = %s"
ENTRY_PREFIX_DF = "SELECT coalesce(sum(docs), 0) FROM search_terms WHERE term >= %s AND term < %s"
DIGEST_PREFIX_DF = "SELECT coalesce(sum(docs), 0) FROM digest_terms WHERE term >= %s AND term < %s"


class OneByOne(pg_search.PostgresSearch):
    """PostgresSearch sending one statement per item, as before the round trips
    were folded: a statement per stem's statistics, per (chat, term) probe, per
    snippet and per landing, a statement per list of the chat-level evidence,
    and every list read again when asked again."""

    def tokens(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        return self.stems(texts)

    def frequency(self, stem: str) -> tuple[int, int]:
        return self._one(ENTRY_DF, stem), self._one(DIGEST_DF, stem)

    def prefix_frequency(self, stem: str) -> tuple[int, int]:
        high = stem + pg_search._TOP
        return self._one(ENTRY_PREFIX_DF, stem, high), self._one(DIGEST_PREFIX_DF, stem, high)

    def harnesses(self) -> list[str]:
        return [row[0] for row in self._conn.execute(pg_search.HARNESSES)]

    def entry_matches(
        self, terms: Sequence[Term], *, conjunctive: bool, ranked: bool, limit: int
    ) -> list[tuple[ChatKey, EntryKey]]:
        return self._entry_matches(terms, conjunctive, ranked, limit)

    def digest_matches(
        self, terms: Sequence[Term], *, conjunctive: bool, ranked: bool, limit: int
    ) -> list[ChatKey]:
        return self._digest_matches(terms, conjunctive, ranked, limit)

    def contains_each(self, pairs: Sequence[tuple[ChatKey, Term]]) -> list[bool]:
        return contains_each_alone(self, pairs)

    def shown(
        self, hits: Sequence[tuple[ChatKey, EntryKey | None]], terms: Sequence[Term]
    ) -> list[tuple[str, Landing | None]]:
        return shown_alone(self, hits, terms)

    def chat_evidence(self, terms: Sequence[Term], limit: int) -> ChatEvidence:
        return chat_evidence_alone(self, terms, limit)

    def entry_sequences_each(
        self, terms: Sequence[Term], chats: Iterable[ChatKey], limit: int
    ) -> list[dict[ChatKey, list[int]]]:
        return entry_sequences_alone(self, terms, chats, limit)


class PerList(pg_search.PostgresSearch):
    """PostgresSearch as shipped but for the chat-level evidence, read as before
    it was folded: a statement for the chat count, per term's entry counts and
    digest list, for the sizes and per term's passage reads."""

    def chat_evidence(self, terms: Sequence[Term], limit: int) -> ChatEvidence:
        return chat_evidence_alone(self, terms, limit)

    def entry_sequences_each(
        self, terms: Sequence[Term], chats: Iterable[ChatKey], limit: int
    ) -> list[dict[ChatKey, list[int]]]:
        return entry_sequences_alone(self, terms, chats, limit)


@contextmanager
def side(name: str) -> Iterator[None]:
    """The search as `name` runs it: "walk"/"index" (the newest-chats walk on or
    off), "batched" (as shipped), "per-list" (PerList) or "one-by-one" (OneByOne,
    and no texts tokenized ahead: each call of Vocabulary.tokens asks the index)."""
    walk = pg_search.PostgresSearch._walk_pays
    learn = search_terms.Vocabulary.learn
    tokens = search_terms.Vocabulary.tokens

    def never(self: Any, matches: int, limit: int) -> bool:
        return False

    def each_time(self: Any, texts: Sequence[str]) -> list[tuple[str, ...]]:
        return self._index.tokens(texts)  # type: ignore[no-any-return]

    try:
        if name == "index":
            pg_search.PostgresSearch._walk_pays = never  # type: ignore[method-assign]
        if name == "per-list":
            pg_store.PostgresSearch = PerList  # type: ignore[misc]
        if name == "one-by-one":
            pg_store.PostgresSearch = OneByOne  # type: ignore[misc]
            search_terms.Vocabulary.learn = lambda self, texts: None  # type: ignore[method-assign]
            search_terms.Vocabulary.tokens = each_time  # type: ignore[method-assign]
        yield
    finally:
        pg_search.PostgresSearch._walk_pays = walk  # type: ignore[method-assign]
        pg_store.PostgresSearch = pg_search.PostgresSearch  # type: ignore[misc]
        search_terms.Vocabulary.learn = learn  # type: ignore[method-assign]
        search_terms.Vocabulary.tokens = tokens  # type: ignore[method-assign]


def _shown(result: Any) -> tuple[Any, ...]:
    """What a search returns that a user or the gate sees (scores to 12 digits)."""
    hits = tuple(
        (h.session_id, h.snippet, h.entry_id, h.sequence, h.active, round(h.score, 12))
        for h in result.hits
    )
    return (result.mode, result.confident, result.reason, result.detail, result.terms, hits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="a PostgreSQL store (a schema or database) to search")
    parser.add_argument("--build", type=int, help="build the scaled Bridge corpus there first")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--compare", choices=("walk", "trips", "evidence"), default="walk")
    args = parser.parse_args()
    corpus = search_data.load_bridge()
    if args.build:
        path = harness.WORK / "pg-pairs.db"
        harness.WORK.mkdir(parents=True, exist_ok=True)
        harness.remove_db(path)
        search_data.build_scaled_bridge(path, corpus, args.build)
        _copy(path, args.url)
        harness.remove_db(path)
    queries = list(
        dict.fromkeys([q.query for q in corpus.queries] + list(bench_search.COMMON_QUERIES))
    )
    sides = {
        "walk": ("walk", "index"),
        "trips": ("batched", "one-by-one"),
        "evidence": ("batched", "per-list"),
    }[args.compare]
    times: dict[str, dict[str, list[float]]] = {s: {} for s in sides}
    with harness.index_only(), Forest.open(args.url, readonly=True) as forest:

        def search(q: str) -> Any:
            return forest.search_chats(q, now=corpus.now)

        if args.compare != "walk":
            _check(forest, search, queries, sides)
        for r in range(args.rounds):
            for q in queries:
                for name in sides if r % 2 == 0 else sides[::-1]:
                    with side(name):
                        search(q)
                        began = time.perf_counter()
                        search(q)
                        times[name].setdefault(q, []).append(time.perf_counter() - began)

    def p95(name: str) -> float:
        return harness.percentile([t for ts in times[name].values() for t in ts], 95) * 1000

    a, b = sides
    med = {s: {q: statistics.median(ts) for q, ts in times[s].items()} for s in times}
    ratios = sorted(med[a][q] / med[b][q] for q in queries)
    print(f"T1 p95 over {len(queries)} queries x {args.rounds} rounds: {a} {p95(a):.1f} ms, "
          f"{b} {p95(b):.1f} ms, ratio {p95(a) / p95(b):.2f}x")  # fmt: skip
    print(f"per-query median ratio {a}/{b}: median {statistics.median(ratios):.2f}, "
          f"min {ratios[0]:.2f}, max {ratios[-1]:.2f}")  # fmt: skip
    print(f"slowest on {a}, and the queries with the highest ratio {a}/{b}:")
    slowest = sorted(queries, key=lambda q: -med[a][q])[:5]
    worst = sorted(queries, key=lambda q: -med[a][q] / med[b][q])[:3]
    for q in dict.fromkeys(slowest + worst):
        print(f"  {med[a][q] * 1000:6.1f} ms vs {med[b][q] * 1000:6.1f} ms  {q}")


def _check(
    forest: Forest, search: Callable[[str], Any], queries: list[str], sides: Sequence[str]
) -> None:
    """Statements per search on each side, and the same results on both (or stop)."""
    sent: list[str] = []
    db = forest._backend.db  # type: ignore[attr-defined]
    counts: dict[str, list[int]] = {s: [] for s in sides}
    results: dict[str, list[Any]] = {s: [] for s in sides}
    db.trace(sent.append)
    try:
        for q in queries:
            for name in sides:
                with side(name):
                    sent.clear()
                    results[name].append(_shown(search(q)))
                    counts[name].append(len(sent))
    finally:
        db.trace(None)
    for name in sides:
        c = sorted(counts[name])
        print(f"statements per search, {name}: median {statistics.median(c):.0f}, "
              f"max {c[-1]}, min {c[0]}, total {sum(c)} over {len(c)} queries")  # fmt: skip
    a, b = sides
    differ = [q for q, x, y in zip(queries, results[a], results[b], strict=True) if x != y]
    if differ:
        raise SystemExit(f"{a} and {b} return different results for: {differ}")
    print(f"the same hits, snippets, landings and gate decisions on both sides: {len(queries)}")


if __name__ == "__main__":
    main()
