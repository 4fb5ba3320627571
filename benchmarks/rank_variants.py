"""T1 ranking variants for issue 26's unmet targets, re-scored on the labelled sets.

    PYTHONPATH=src:benchmarks .venv/bin/python benchmarks/rank_variants.py [--semantic]

(`--only PREFIX ...`: only the variants whose name starts so.)

Builds three stores once, index only (harness.index_only): the Bridge corpus and
LoCoMo as bench_search.py loads them, and the coding-agent transcripts as
bench_coding_search.py imports them. Then, for the shipped ranking and for each
named variant, it asks every labelled query of all three and prints one
Markdown row: Bridge recall@4 per class (exact / vague / time) and the gate's
confident (wrong), LoCoMo recall@1, recall@5, MRR@10 and confident (wrong),
and the coding set's recall@1 and recall@5 (of 77) and confident (wrong).

A variant changes search/retrieve.py's module constants, or swaps its
`evidence` for one of the candidate-local discrimination functions below,
inside a context manager that puts everything back; src/ is never edited.
Constants are read when a search runs, except where retrieve.py derives one
from another at import (WORKER_PENALTY keeps ENTRY_WEIGHT's shipped value).

With --semantic it also builds the Bridge and LoCoMo stores with the semantic
leg on and every vector made (`index_semantic`: minutes for LoCoMo), and
scores the leg at the shipped fusion weights, at heavier weights after an OR,
and alone. The data stays in ../shared/data (LoCoMo is CC BY-NC 4.0:
benchmarks and tests only); the stores are made under benchmarks/.work and
removed at the end.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bench_coding_search as coding
import harness
import search_data
from bench_search import LOCOMO_LIMIT, Scores, bridge_quality
from sessionforest import Forest
from sessionforest.deadline import checkpoint
from sessionforest.search import retrieve as R
from sessionforest.store.base import ChatKey, SearchIndex, Term

# --- candidate-local discrimination ---------------------------------------------------
#
# The idea under test: a term most of the best-ranked chats hold (a speaker's
# name in every LoCoMo session of one conversation) cannot tell those chats
# apart, however rare it is store-wide; weigh each term by how few of the top M
# chats hold it. A `Weigh` maps (global idf, top-M chats holding the term, M) to
# the term's weight there.

Weigh = Callable[[float, int, int], float]


def linear(floor: float = 0.0) -> Weigh:
    """idf x (1 - share of the top M holding the term), at least `floor` x idf."""
    return lambda idf, held, m: idf * max(floor, 1 - held / m)


def partial(alpha: float) -> Weigh:
    """idf x (1 - alpha x share): only part of the share discounted."""
    return lambda idf, held, m: idf * (1 - alpha * held / m)


def local_idf(floor: float = 0.0) -> Weigh:
    """idf x the BM25 idf among the top M, scaled to its value for a term only one holds."""

    def weigh(idf: float, held: int, m: int) -> float:
        local = math.log(1 + (m - held + 0.5) / (held + 0.5))
        return idf * max(floor, local / math.log(1 + (m - 0.5) / 1.5))

    return weigh


def capped(idf: float, held: int, m: int) -> float:
    """The global idf, capped at the term's BM25 idf among the top M."""
    return min(idf, math.log(1 + (m - held + 0.5) / (held + 0.5)))


@dataclass(slots=True)
class Read:
    """What retrieve.evidence reads of the terms before scoring."""

    everything: list[Term]
    per_term: list[tuple[float, dict[ChatKey, int], int]]  # (idf, entry counts, term index)
    covered: dict[ChatKey, set[int]]
    counted: set[int]
    sizes: dict[ChatKey, int]


def _read(index: SearchIndex, terms: Sequence[Term], extra: Sequence[Term]) -> Read:
    """retrieve.evidence's reading of the terms, step for step (rarest first, within
    EVIDENCE_BUDGET, the digest counting DIGEST_TF entries); the `local control`
    variant checks that it scores exactly as the shipped function does."""
    everything = [*terms, *extra]
    out = Read(everything, [], {}, set(), {})
    total = chats = 0
    for i in sorted(range(len(everything)), key=lambda i: everything[i].entries):
        checkpoint()
        term = everything[i]
        if not term.entries and not term.digest_df:
            continue
        if total + term.entries > R.EVIDENCE_BUDGET:
            break
        total += term.entries
        if not chats:
            chats = index.chat_count() or 1
        counts = index.entry_counts(term, R.EVIDENCE_BUDGET)
        if term.digest_df:
            for num in index.digest_matches(
                [term], conjunctive=False, ranked=False, limit=R.EVIDENCE_BUDGET
            ):
                counts[num] = counts.get(num, 0) + R.DIGEST_TF
        if i < len(terms):
            out.counted.add(i)
        if not counts:
            continue
        idf = math.log(1 + (chats - len(counts) + 0.5) / (len(counts) + 0.5))
        out.per_term.append((idf, counts, i))
        if i < len(terms):
            for num in counts:
                out.covered.setdefault(num, set()).add(i)
    matched = {num for _, counts, _ in out.per_term for num in counts}
    out.sizes = index.chat_sizes(matched) if matched else {}
    return out


def _first(scores: dict[ChatKey, float], n: int) -> list[ChatKey]:
    # Equal scores: the newer chat first, as retrieve.evidence orders them.
    return sorted(scores, key=lambda k: (-scores[k], -k))[:n]


def _fused(read: Read, idfs: dict[int, float], whole: dict[ChatKey, float], index: Any) -> Any:
    first = _first(whole, R.PASSAGE_CHATS)
    passage = R._normalised(R._passages(index, read.everything, idfs, first)) if first else {}
    return {
        num: value + R.PASSAGE_WEIGHT * passage.get(num, 0.0)
        for num, value in R._normalised(whole).items()
    }


def reweighted(weigh: Weigh, m: int) -> Callable[..., R.Evidence]:
    """Every term re-weighted by its spread over the BM25F's top M chats, then the
    BM25F and the passages scored again with those weights (over every chat)."""

    def evidence(index: SearchIndex, terms: Sequence[Term], extra: Sequence[Term] = ()) -> Any:
        read = _read(index, terms, extra)
        pairs = [(idf, counts) for idf, counts, _ in read.per_term]
        whole = R._bm25f(pairs, read.sizes)
        idfs = {i: idf for idf, _, i in read.per_term}
        if len(whole) >= m:
            top = _first(whole, m)
            weighted = []
            for idf, counts, i in read.per_term:
                w = weigh(idf, sum(1 for n in top if n in counts), len(top))
                weighted.append((w, counts))
                idfs[i] = w
            whole = R._bm25f(weighted, read.sizes)
        scores = _fused(read, {i: v for i, v in idfs.items() if v > 0}, whole, index)
        return R.Evidence(scores, read.covered, frozenset(read.counted))

    return evidence


def permuted(weigh: Weigh, m: int) -> Callable[..., R.Evidence]:
    """The shipped evidence, then its top M chats re-ordered by a BM25F and
    passages over those M alone, with the terms weighed by `weigh`; the top M's
    scores are handed out again in that order (the rest keep theirs)."""

    def evidence(index: SearchIndex, terms: Sequence[Term], extra: Sequence[Term] = ()) -> Any:
        read = _read(index, terms, extra)
        pairs = [(idf, counts) for idf, counts, _ in read.per_term]
        idfs = {i: idf for idf, _, i in read.per_term}
        scores = _fused(read, idfs, R._bm25f(pairs, read.sizes), index)
        if len(scores) >= m:
            top = _first(scores, m)
            held = set(top)
            weights: dict[int, float] = {}
            local_pairs = []
            for idf, counts, i in read.per_term:
                weights[i] = weigh(idf, sum(1 for n in top if n in counts), m)
                local_pairs.append((weights[i], {n: c for n, c in counts.items() if n in held}))
            sizes = {n: read.sizes[n] for n in top if n in read.sizes}
            passage = R._normalised(
                R._passages(
                    index, read.everything, {i: w for i, w in weights.items() if w > 0}, top
                )
            )
            local = {
                n: v + R.PASSAGE_WEIGHT * passage.get(n, 0.0)
                for n, v in R._normalised(R._bm25f(local_pairs, sizes)).items()
            }
            values = sorted((scores[n] for n in top), reverse=True)
            order = sorted(top, key=lambda n: (-local.get(n, 0.0), -scores[n], -n))
            scores.update(zip(order, values, strict=True))
        return R.Evidence(scores, read.covered, frozenset(read.counted))

    return evidence


# --- variants -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    constants: dict[str, Any] = field(default_factory=dict)  # retrieve.py's, by name
    evidence: Callable[..., R.Evidence] | None = None


SHIPPED = Variant("shipped (baseline)")

INDEX_VARIANTS = (
    SHIPPED,
    # The discrimination functions' own reading of the terms, discounting nothing.
    Variant("local control (permuted, no discount)", evidence=permuted(partial(0.0), 10)),
    Variant("local reweighted, linear, M 20", evidence=reweighted(linear(), 20)),
    Variant("local reweighted, local idf, M 20", evidence=reweighted(local_idf(), 20)),
    Variant("local permuted, linear, M 20", evidence=permuted(linear(), 20)),
    Variant("local permuted, local idf, M 20", evidence=permuted(local_idf(), 20)),
    Variant("local permuted, idf capped, M 20", evidence=permuted(capped, 20)),
    Variant("local permuted, 0.3 x share, M 10", evidence=permuted(partial(0.3), 10)),
    Variant("local permuted, 0.6 x share, M 10", evidence=permuted(partial(0.6), 10)),
    Variant("PASSAGE_WEIGHT 0.5", {"PASSAGE_WEIGHT": 0.5}),
    Variant("PASSAGE_WEIGHT 1.5", {"PASSAGE_WEIGHT": 1.5}),
    Variant("PASSAGE_WEIGHT 2", {"PASSAGE_WEIGHT": 2.0}),
    Variant("PASSAGE_SPAN 2", {"PASSAGE_SPAN": 2}),
    Variant("PASSAGE_SPAN 5", {"PASSAGE_SPAN": 5}),
    Variant("EVIDENCE_B 0", {"EVIDENCE_B": 0.0}),
    Variant("EVIDENCE_B 0.6", {"EVIDENCE_B": 0.6}),
    Variant("EVIDENCE_K1 1.2", {"EVIDENCE_K1": 1.2}),
    Variant("EVIDENCE_K1 2.4", {"EVIDENCE_K1": 2.4}),
    Variant("EVIDENCE_WEIGHT_OR 8", {"EVIDENCE_WEIGHT_OR": 8.0}),
    Variant("EVIDENCE_WEIGHT_OR 32", {"EVIDENCE_WEIGHT_OR": 32.0}),
    Variant("ENTRY_WEIGHT 4", {"ENTRY_WEIGHT": 4.0}),
    Variant("DIGEST_TF 0", {"DIGEST_TF": 0}),
    Variant(
        "DIGEST_TF 0, PASSAGE_WEIGHT 2, EVIDENCE_WEIGHT_OR 32",
        {"DIGEST_TF": 0, "PASSAGE_WEIGHT": 2.0, "EVIDENCE_WEIGHT_OR": 32.0},
    ),
)

SEMANTIC_ALONE = "semantic leg alone (no fusion)"
SEMANTIC_VARIANTS = (
    Variant("semantic leg, shipped weights (1 / 1)"),
    Variant("semantic leg, SEMANTIC_WEIGHT_OR 4", {"SEMANTIC_WEIGHT_OR": 4.0}),
    Variant("semantic leg, SEMANTIC_WEIGHT_OR 8", {"SEMANTIC_WEIGHT_OR": 8.0}),
    Variant("semantic leg, SEMANTIC_WEIGHT_OR 16", {"SEMANTIC_WEIGHT_OR": 16.0}),
    Variant(SEMANTIC_ALONE),
)


@contextmanager
def applied(variant: Variant) -> Iterator[None]:
    """retrieve.py as the variant has it, put back as shipped on the way out."""
    names = [*variant.constants, *(["evidence"] if variant.evidence is not None else [])]
    before = {name: getattr(R, name) for name in names}
    try:
        for name, value in variant.constants.items():
            setattr(R, name, value)
        if variant.evidence is not None:
            R.evidence = variant.evidence  # type: ignore[assignment]
        yield
    finally:
        for name, value in before.items():
            setattr(R, name, value)


# --- stores ---------------------------------------------------------------------------


@dataclass(slots=True)
class Stores:
    bridge: tuple[Forest, search_data.BridgeCorpus]
    locomo: tuple[Forest, search_data.Locomo]
    coding: tuple[Forest, list[coding.Query], dict[str, frozenset[str]]] | None


def _fresh(path: Path, semantic: bool, **kwargs: Any) -> Forest:
    harness.remove_db(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if semantic:
        return Forest.open(path, **kwargs)
    with harness.index_only():
        return Forest.open(path, **kwargs)


@contextmanager
def stores(semantic: bool, work: Path) -> Iterator[Stores]:
    """The three stores, index only; with `semantic` the Bridge and LoCoMo ones with
    the leg on and every vector made instead (no coding store)."""
    tag = "-semantic" if semantic else ""
    paths = [work / f"rank-variants-{name}{tag}.db" for name in ("bridge", "locomo")]
    with ExitStack() as stack:
        for path in paths:
            stack.callback(harness.remove_db, path)
        bridge = search_data.load_bridge()
        b = stack.enter_context(_fresh(paths[0], semantic, clock=lambda: bridge.now))
        search_data.store_bridge(b, bridge)
        locomo = search_data.load_locomo()
        lo = stack.enter_context(_fresh(paths[1], semantic, clock=lambda: locomo.now))
        search_data.store_locomo(lo, locomo)
        code = None
        if semantic:
            for forest in (b, lo):
                forest.index_semantic()
        else:
            path = work / "rank-variants-coding.db"
            stack.callback(harness.remove_db, path)
            c = stack.enter_context(_fresh(path, False))
            coding.import_all(c)
            queries = coding.load_queries()
            code = (c, queries, coding.gold_sessions(c, queries, search_data.DATA))
        yield Stores((b, bridge), (lo, locomo), code)


# --- scoring --------------------------------------------------------------------------


def _alone(forest: Forest) -> Callable[[str], list[str]]:
    """The semantic leg's ranking by itself, as session ids (its chat keys mapped
    through the index: a benchmark reaching into the facade, not an API)."""
    leg = forest._semantic
    assert leg is not None, "the semantic leg is not on"
    with forest._backend.search(None) as index:
        ids = {row.key: row.session_id for row in index.all_chats()}
    return lambda q: [ids[k] for k in leg.ranked(q, limit=LOCOMO_LIMIT) if k in ids]


def score(s: Stores, alone: bool = False) -> list[str]:
    """One table row's cells (after the name)."""
    forest, bridge = s.bridge
    if alone:
        ranked = _alone(forest)
        b_at = {k: 0 for k in ("exact", "vague", "time")}
        for q in bridge.queries:
            b_at[q.klass] += q.expect in ranked(q.query)[:4]
        counts = {k: sum(q.klass == k for q in bridge.queries) for k in b_at}
        cells = [" / ".join(f"{b_at[k]}/{counts[k]}" for k in b_at), "-"]
    else:
        outcomes = bridge_quality(forest, bridge)
        cells = [
            " / ".join(
                f"{sum(o.at(4) for o in outcomes if o.klass == k)}"
                f"/{sum(o.klass == k for o in outcomes)}"
                for k in ("exact", "vague", "time")
            ),
            f"{sum(o.confident for o in outcomes)} ({sum(o.confident_wrong for o in outcomes)})",
        ]
    forest, locomo = s.locomo
    ranked_alone = _alone(forest) if alone else None
    scores = Scores()
    confident = wrong = 0
    for question in locomo.questions:
        if ranked_alone is not None:
            scores.add(ranked_alone(question.question), question.gold)
            continue
        result = forest.search_chats(question.question, now=locomo.now, limit=LOCOMO_LIMIT)
        ranked = [hit.session_id for hit in result.hits]
        scores.add(ranked, question.gold)
        if result.confident:
            confident += 1
            wrong += not ranked or ranked[0] not in question.gold
    at1, at5, mrr = scores.figures()
    cells += [f"{at1:.3f}", f"{at5:.3f}", f"{mrr:.3f}"]
    cells.append("-" if alone else f"{confident} ({wrong})")
    if s.coding is None:
        return [*cells, "-", "-", "-"]
    forest, queries, gold = s.coding
    r1 = r5 = confident = wrong = 0
    for q in queries:
        result = forest.search_chats(q.query, limit=coding.LIMIT)
        ranked = [hit.session_id for hit in result.hits]
        hit1 = bool(ranked) and ranked[0] in gold[q.id]
        r1 += hit1
        r5 += any(sid in gold[q.id] for sid in ranked[:5])
        confident += result.confident
        wrong += result.confident and not hit1
    return [*cells, f"{r1}/{len(queries)}", f"{r5}/{len(queries)}", f"{confident} ({wrong})"]


HEAD = (
    "| variant | Bridge r@4 exact / vague / time | Bridge confident (wrong) "
    "| LoCoMo r@1 | r@5 | MRR | LoCoMo confident (wrong) "
    "| coding r@1 | r@5 | coding confident (wrong) |"
)
RULE = "|---|---|---|---:|---:|---:|---|---:|---:|---|"


def run(variants: Sequence[Variant], semantic: bool, work: Path) -> None:
    if not variants:
        return
    t0 = time.perf_counter()
    with stores(semantic, work) as s:
        print(f"<!-- stores built in {time.perf_counter() - t0:.0f} s -->", flush=True)
        for variant in variants:
            with applied(variant):
                cells = score(s, alone=variant.name == SEMANTIC_ALONE)
            print("| " + " | ".join([variant.name, *cells]) + " |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--semantic", action="store_true", help="also the semantic-leg rows (builds every vector)"
    )
    parser.add_argument(
        "--only",
        nargs="+",
        default=(),
        help="only the variants whose name starts with one of these",
    )
    parser.add_argument(
        "--work", type=Path, default=harness.WORK, help="where the stores are made (and removed)"
    )
    args = parser.parse_args(argv)

    def chosen(variants: Sequence[Variant]) -> list[Variant]:
        if not args.only:
            return list(variants)
        return [v for v in variants if v.name.startswith(tuple(args.only))]

    print(HEAD)
    print(RULE, flush=True)
    run(chosen(INDEX_VARIANTS), semantic=False, work=args.work)
    if args.semantic:
        run(chosen(SEMANTIC_VARIANTS), semantic=True, work=args.work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
