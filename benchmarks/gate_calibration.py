"""Gate calibration: coverage and precision of the gate's operating points.

    .venv/bin/python benchmarks/gate_calibration.py [--quick] [--keep DIR]

Every labelled query of the Bridge corpus (40, gold = the expected chat) and
every LoCoMo question with evidence (gold = the sessions holding it) is
searched once with the current ranking; each search keeps what its gate
judged (`gate_space.searched`), and every variant of `gate_space.GateRule`
re-judges those facts, so the grid costs one search per query. For each variant:
coverage = confident / all and precision = confident and right / confident,
on both corpora. The operating point is the variant with zero confident-but-
wrong on both corpora that is confident most often (Bridge first, then
LoCoMo; ties keep the earlier variant in grid order). Nothing here knows the
queries: the grid is over principled rules (how the lead is measured under
reciprocal-rank fusion, its threshold, whether dropped common words count,
what an only hit needs, whether nothing the filters left out may outweigh a
filtered-down only hit, how many matches, whether recency may lead where the
words tie, whether a word known only as a prefix counts as known).

Re-runnable after a ranking change: it prints the whole grid and says whether
`gate_space.RULE` (the library's operating point, search.gate) is still
the choice. Also the `gate` workload of
benchmarks/run.py (the table goes to docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import harness
import search_data
from gate_space import (
    RULE,
    CommonWords,
    Counted,
    GateInput,
    GateRule,
    LeadMeasure,
    OnlyHit,
    Prefixes,
    rejudge,
    searched,
)
from harness import Row, Section
from sessionforest import Forest
from sessionforest.search.results import GateReason

NAME = "gate"
BRIDGE_TARGET = 22  # the original system's gate: 22 of 40, none wrong


@dataclass(frozen=True, slots=True)
class Judged:
    """One labelled query's search: its gold chats, the ranking's top and the gate's facts."""

    top: str | None
    gold: frozenset[str]
    facts: GateInput
    query: str = ""
    # Whether the listed first chat is the one the gate judged (the words' top):
    # with the semantic leg on they may differ, and search.find is then never sure.
    agrees: bool = True

    def verdict(self, rule: GateRule) -> tuple[bool, bool]:
        """(confident, confident and wrong) under `rule`."""
        confident = self.agrees and rejudge(self.facts, rule)[0]
        return confident, confident and self.top not in self.gold


@dataclass(frozen=True, slots=True)
class Score:
    n: int
    confident: int
    wrong: int

    @property
    def coverage(self) -> float:
        return self.confident / self.n if self.n else 0.0

    @property
    def precision(self) -> float:
        return (self.confident - self.wrong) / self.confident if self.confident else 1.0

    def cell(self) -> str:
        return (
            f"{self.confident}/{self.n} ({self.coverage:.1%}), "
            f"wrong {self.wrong}, precision {self.precision:.1%}"
        )


def score(judged: Sequence[Judged], rule: GateRule) -> Score:
    verdicts = [j.verdict(rule) for j in judged]
    return Score(len(judged), sum(c for c, _ in verdicts), sum(w for _, w in verdicts))


# The values each dimension of `GateRule` takes in the grid.
VALUES: dict[str, tuple[object, ...]] = {
    "measure": tuple(LeadMeasure),
    "lead": (1.25, 1.5, 2.0, 3.0),
    "min_matches": (2, 1),
    "common_words": tuple(CommonWords),
    "only_hit": tuple(OnlyHit),
    "about": (False, True),
    "counted": tuple(Counted),
    # Strictest first, so a tie keeps the stricter factor.
    "recency": (0.0, 8.0, 4.0, 2.0, 1.5),
    "prefixes": tuple(Prefixes),
    # Strictest first: recency only on an exact tie, within 2%, over any weaker chat.
    "recency_tie": (1.0, 1.02, math.inf),
}
FIELDS = tuple(VALUES)


def grid() -> list[GateRule]:
    """The variants, the spec's literal rule first: every combination of the
    lead, match, common-word, only-hit and digest dimensions, then every
    combination of the lead measure and threshold, only-hit, digest, recency
    and prefix dimensions (the others at the spec's values: two matched words,
    every typed word counts). `calibrate` adds the one-parameter changes of
    its choice that neither product holds."""
    rules = [GateRule(LeadMeasure.FUSED, 1.5, 2, CommonWords.ALL, OnlyHit.WHOLE, False)]
    first = ("measure", "lead", "min_matches", "common_words", "only_hit", "about", "counted")
    for values in itertools.product(*(VALUES[f] for f in first)):
        rules.append(GateRule(**dict(zip(first, values, strict=True))))  # type: ignore[arg-type]
    second = ("measure", "lead", "only_hit", "about", "recency", "prefixes", "recency_tie")
    for values in itertools.product(*(VALUES[f] for f in second)):
        fixed = dict(zip(second, values, strict=True))
        rules.append(GateRule(counted=Counted.WORDS, **fixed))  # type: ignore[arg-type]
    return list(dict.fromkeys(rules))


def changes(rule: GateRule) -> list[GateRule]:
    """Every rule one grid value away from `rule`."""
    out = []
    for f in FIELDS:
        for value in VALUES[f]:
            if getattr(rule, f) != value:
                out.append(dataclasses.replace(rule, **{f: value}))
    return out


def judge(
    forest: Forest, now: datetime, labelled: Sequence[tuple[str, frozenset[str]]]
) -> list[Judged]:
    """Search each (query, gold chats) once and keep what the gate judged."""
    out = []
    for query, gold in labelled:
        result, facts = searched(forest, query, now)
        top = result.hits[0].session_id if result.hits else None
        judged_top = facts.top.session_id if facts.top is not None else None
        out.append(Judged(top, gold, facts, query, judged_top in (None, top)))
    return out


def _conversations(locomo: search_data.Locomo, n: int) -> search_data.Locomo:
    kept = {c.sample_id for c in locomo.chats[:1]} if n == 1 else None
    if kept is None:
        kept = set(sorted({c.sample_id for c in locomo.chats})[:n])
    return search_data.Locomo(
        tuple(c for c in locomo.chats if c.sample_id in kept),
        tuple(q for q in locomo.questions if q.sample_id in kept),
        locomo.skipped_questions,
        locomo.now,
    )


def _bridge(path: Path, bridge: search_data.BridgeCorpus) -> list[Judged]:
    fresh = not path.exists()
    with harness.index_only():
        forest = Forest.open(path, clock=lambda: bridge.now)
    try:
        if fresh:
            search_data.store_bridge(forest, bridge)
        return judge(forest, bridge.now, [(q.query, frozenset({q.expect})) for q in bridge.queries])
    finally:
        forest.close()


def _locomo(path: Path, locomo: search_data.Locomo) -> list[Judged]:
    fresh = not path.exists()
    with harness.index_only():
        forest = Forest.open(path, clock=lambda: locomo.now)
    try:
        if fresh:
            search_data.store_locomo(forest, locomo)
        return judge(forest, locomo.now, [(q.question, q.gold) for q in locomo.questions])
    finally:
        forest.close()


# LoCoMo conversations the near-duplicate variant holds (its searches cost as much
# again as the plain corpus's: two of ten keep the run short).
FOLLOWUP_CONVERSATIONS = 2


@dataclass(frozen=True, slots=True)
class Collected:
    bridge: list[Judged]
    locomo: list[Judged]
    # The near-duplicate variants: each labelled chat beside a newer follow-up
    # repeating its words (search_data.*_with_followups), the labels unchanged.
    bridge_twins: list[Judged]
    locomo_twins: list[Judged]


def collect(work: Path, quick: bool) -> Collected:
    """Search every labelled query once; stores in `work` are reused when present."""
    work.mkdir(parents=True, exist_ok=True)
    bridge = search_data.load_bridge()
    full = search_data.load_locomo()
    locomo = _conversations(full, 1) if quick else full
    twins = _conversations(full, 1 if quick else FOLLOWUP_CONVERSATIONS)
    suffix = "-quick" if quick else ""
    return Collected(
        _bridge(work / "gate-bridge.db", bridge),
        _locomo(work / f"gate-locomo{suffix}.db", locomo),
        [
            judged
            for ago in search_data.FOLLOWUP_AGES
            for judged in _bridge(
                work / f"gate-bridge-followups-{ago}.db",
                search_data.bridge_with_followups(bridge, ago),
            )
        ],
        _locomo(
            work / f"gate-locomo-followups{suffix}.db", search_data.locomo_with_followups(twins)
        ),
    )


@dataclass(frozen=True, slots=True)
class Calibration:
    rows: list[tuple[GateRule, Score, Score]]
    chosen: GateRule | None
    # Each rule's scores on the near-duplicate variants (Bridge, LoCoMo).
    twins: dict[GateRule, tuple[Score, Score]] = dataclasses.field(default_factory=dict)

    def of(self, rule: GateRule) -> tuple[Score, Score]:
        for r, b, lo in self.rows:
            if r == rule:
                return b, lo
        raise KeyError(rule)


def _best(
    rows: Sequence[tuple[GateRule, Score, Score]],
    twins: dict[GateRule, tuple[Score, Score]],
) -> tuple[GateRule, Score, Score] | None:
    safe = [
        row
        for row in rows
        if row[1].wrong == 0
        and row[2].wrong == 0
        and all(s.wrong == 0 for s in twins.get(row[0], ()))
    ]
    return max(safe, key=lambda row: (row[1].confident, row[2].confident), default=None)


def calibrate(
    bridge: Sequence[Judged],
    locomo: Sequence[Judged],
    bridge_twins: Sequence[Judged] = (),
    locomo_twins: Sequence[Judged] = (),
) -> Calibration:
    """Score the grid and choose (none wrong on either corpus nor on their
    near-duplicate variants, then the most confident); then score the choice's
    one-parameter changes the grid lacks, choosing again, until no change is a
    better safe rule."""

    def scored(rules: Sequence[GateRule]) -> list[tuple[GateRule, Score, Score]]:
        for rule in rules:
            twins[rule] = (score(bridge_twins, rule), score(locomo_twins, rule))
        return [(rule, score(bridge, rule), score(locomo, rule)) for rule in rules]

    twins: dict[GateRule, tuple[Score, Score]] = {}
    rows = scored(grid())
    seen = {row[0] for row in rows}
    best = _best(rows, twins)
    while best is not None:
        new = [r for r in changes(best[0]) if r not in seen]
        if not new:
            break
        seen.update(new)
        rows += scored(new)
        again = _best(rows, twins)
        if again is None or again[0] == best[0]:
            break
        best = again
    return Calibration(rows, best[0] if best else None, twins)


def table(cal: Calibration, only: Sequence[GateRule] | None = None) -> list[str]:
    lines = [
        "| gate rule | Bridge confident (coverage), wrong, precision | "
        "LoCoMo confident (coverage), wrong, precision | "
        "with follow-ups: Bridge | with follow-ups: LoCoMo |",
        "|---|---|---|---|---|",
    ]
    for rule, b, lo in cal.rows:
        if only is not None and rule not in only:
            continue
        mark = " **(chosen)**" if rule == cal.chosen else ""
        mark += " (spec's literal rule)" if rule == cal.rows[0][0] else ""
        bt, lot = cal.twins[rule]
        lines.append(
            f"| {rule.name}{mark} | {b.cell()} | {lo.cell()} | {bt.cell()} | {lot.cell()} |"
        )
    return lines


def frontier(cal: Calibration) -> list[str]:
    """Past the safe choice: for each Bridge coverage a grid rule reaches with none
    wrong on Bridge, the rule that is wrong least often on LoCoMo (the price of
    that coverage)."""
    start = cal.of(cal.chosen)[0].confident + 1 if cal.chosen is not None else 0
    lines = [
        "| Bridge confident at least | cheapest grid rule | its Bridge | its LoCoMo |",
        "|---|---|---|---|",
    ]
    top = max((b.confident for _, b, _ in cal.rows if not b.wrong), default=0)
    for k in range(start, top + 1):
        reaching = [(r, b, lo) for r, b, lo in cal.rows if not b.wrong and b.confident >= k]
        if reaching:
            r, b, lo = min(reaching, key=lambda row: (row[2].wrong, -row[2].confident))
            lines.append(f"| {k}/{b.n} | {r.name} | {b.cell()} | {lo.cell()} |")
    return lines


def neighbours(cal: Calibration) -> list[GateRule]:
    """The literal rule, the chosen one, each one-parameter change of it, and
    the best safe rule of each lead measure."""
    picked: list[GateRule] = [cal.rows[0][0]]
    if cal.chosen is None:
        return picked
    c = cal.chosen
    picked.append(c)
    for rule, _, _ in cal.rows:
        changed = sum(getattr(rule, f) != getattr(c, f) for f in FIELDS)
        if changed == 1:
            picked.append(rule)
    for measure in LeadMeasure:
        safe = [
            (r, b, lo)
            for r, b, lo in cal.rows
            if r.measure is measure and b.wrong == 0 and lo.wrong == 0
        ]
        if safe:
            picked.append(max(safe, key=lambda row: (row[1].confident, row[2].confident))[0])
    return list(dict.fromkeys(picked))


def declined(judged: Sequence[Judged], rule: GateRule, classes: dict[str, str]) -> list[str]:
    """Each query `rule` is not confident on: why, and whether the top chat was right."""
    lines = [
        "| query | class | why the gate declined | top chat right |",
        "|---|---|---|---|",
    ]
    for j in judged:
        confident, reason, detail = rejudge(j.facts, rule)
        if confident and not j.agrees:
            confident, reason = False, GateReason.CONTESTED_LEAD
            detail = "the words pick another chat than the one listed first (by meaning)"
        if not confident:
            right = "yes" if j.top in j.gold else "no" if j.top else "none found"
            lines.append(
                f"| {j.query} | {classes.get(j.query, '')} | {reason}: {detail} | {right} |"
            )
    return lines


def run(quick: bool) -> Section:
    t = time.perf_counter()
    got = collect(harness.WORK / "gate", quick)
    bridge, locomo = got.bridge, got.locomo
    cal = calibrate(bridge, locomo, got.bridge_twins, got.locomo_twins)
    bt, lot = cal.twins[RULE]
    elapsed = time.perf_counter() - t
    b, lo = cal.of(RULE)
    rows = [
        Row(
            "Bridge confident under gate_space.RULE",
            f"{b.confident}/{b.n}",
            "",
            "",
            f">= {BRIDGE_TARGET}/40",
            harness.verdict(b.confident >= BRIDGE_TARGET),
        ),
        Row("Bridge confident but wrong", str(b.wrong), "", "", "0", harness.verdict(not b.wrong)),
        Row(
            "LoCoMo confident (coverage)",
            f"{lo.confident}/{lo.n} ({lo.coverage:.1%})",
            "",
            "",
            "info",
        ),
        Row(
            "LoCoMo confident but wrong", str(lo.wrong), "", "", "0", harness.verdict(not lo.wrong)
        ),
        Row(
            "with follow-ups: Bridge confident, wrong",
            f"{bt.confident}/{bt.n}, wrong {bt.wrong}",
            "",
            "",
            "wrong 0",
            harness.verdict(not bt.wrong),
        ),
        Row(
            "with follow-ups: LoCoMo confident, wrong",
            f"{lot.confident}/{lot.n}, wrong {lot.wrong}",
            "",
            "",
            "wrong 0",
            harness.verdict(not lot.wrong),
        ),
        Row(
            "gate_space.RULE is the calibrated choice",
            "yes" if cal.chosen == RULE else f"no: {cal.chosen.name if cal.chosen else 'none'}",
            "",
            "",
            "yes",
            harness.verdict(cal.chosen == RULE),
        ),
    ]
    summary = "\n".join(
        [
            "How often the gate settles a search without a model (coverage = confident / "
            "all) and how often it is right when it does (precision), for the spec's literal "
            "rule, the chosen operating point, every one-parameter change of it and the best "
            "safe rule of each lead measure. One search per labelled query "
            "(`benchmarks/gate_calibration.py`, which prints the whole grid of "
            f"{len(cal.rows)} rules); the choice is the rule with zero confident-but-wrong on "
            "both corpora and on their near-duplicate variants that is confident most often. "
            "The variants (`search_data.bridge_with_followups`, `locomo_with_followups`) put "
            "beside each labelled chat a newer follow-up repeating its words and more of them "
            "(Bridge: the target's keys and its first key again, started a half, a quarter "
            "or a sixteenth as long ago, each age a variant of its own, 3 x 40 queries; "
            "LoCoMo: the session's turns and their first half again, dated half-way to the next "
            f"session, over the first {FOLLOWUP_CONVERSATIONS} conversations); the labels do "
            "not change, so a confident answer at the follow-up is wrong.",
            "",
            *table(cal, neighbours(cal)),
            "",
            "The frontier past the chosen rule: what each further Bridge query settled "
            "without a model costs in confident-but-wrong LoCoMo answers.",
            "",
            *frontier(cal),
            "",
            "The Bridge queries `gate_space.RULE` leaves to a model, and why.",
            "",
            *declined(bridge, RULE, {q.query: q.klass for q in search_data.load_bridge().queries}),
        ]
    )
    notes = [
        f"Bridge: 40 labelled queries; LoCoMo: {len(locomo)} questions with evidence "
        f"({'one conversation, quick mode' if quick else 'all 10 conversations'}); "
        f"{elapsed:.0f} s including loading both stores.",
        "Lead measures: `fused` compares the reciprocal-rank-fused scores (rank 1 over rank 2 "
        "of one list is 61/62, so 1.5x is almost never reached); `evidence` compares the "
        "chats' whole-chat evidence (the BM25F of their matching entries plus their best "
        "passage, each scaled to the best chat); `coverage` counts a next chat that "
        "misses a searched word as led outright and otherwise compares evidence.",
        "Only hit: `whole` needs one entry (or the digest) holding every searched word; "
        "`covered` lets its entries hold them together; `best` also lets them, unless a "
        "chat the filters (time window, harness) left out holds more whole-chat evidence. "
        "Recency `Nx`: where the words lead by less than the threshold, the top chat "
        "still leads when every chat it does not lead on the words holds no more evidence "
        "and has been idle N times as long (idle times count at least a day); ties in the "
        "grid keep the stricter factor. Prefixes known: a word the index knows only as "
        "the start of longer words counts as known.",
        f"The grid is two products ({len(grid())} rules, see `grid()`) plus the chosen "
        "rule's one-parameter changes neither holds.",
    ]
    return Section(NAME, "Gate calibration (coverage and precision)", summary, rows, notes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one LoCoMo conversation")
    parser.add_argument("--keep", type=Path, help="reuse/keep the stores in this directory")
    args = parser.parse_args(argv)
    work = args.keep or harness.WORK / "gate"
    got = collect(work, args.quick)
    cal = calibrate(got.bridge, got.locomo, got.bridge_twins, got.locomo_twins)
    print("\n".join(table(cal)))
    print()
    print("\n".join(frontier(cal)))
    print()
    print(f"chosen: {cal.chosen.name if cal.chosen else 'none is safe'}")
    print(f"gate_space.RULE: {RULE.name} ({'the choice' if cal.chosen == RULE else 'DIFFERS'})")
    return 0 if cal.chosen == RULE else 1


if __name__ == "__main__":
    sys.exit(main())
