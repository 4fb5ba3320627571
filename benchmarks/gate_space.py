"""The gate's search space: every variant `gate_calibration.py` measures.

The library's gate (sessionforest.search.gate) is one operating point of this
space, written out plainly; this module holds the knobs (how the lead is
measured under reciprocal-rank fusion, its threshold, whether dropped common
words count, what an only hit needs, how many matches, recency, prefixes) and
`judge`, the gate with a `GateRule`. `RULE` is the library's operating point as
a rule: tests/conformance/search/test_search_gate.py checks that `judge` under
`RULE` says exactly what the library's gate says.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Final

from sessionforest import Forest
from sessionforest.ids import parse_iso
from sessionforest.search import find
from sessionforest.search.gate import GateInput, ratio
from sessionforest.search.results import ChatHit, ChatSearch, GateReason
from sessionforest.search.terms import TermChoice

__all__ = [
    "RULE",
    "CommonWords",
    "Counted",
    "GateInput",
    "GateRule",
    "LeadMeasure",
    "OnlyHit",
    "Prefixes",
    "judge",
    "rejudge",
    "searched",
]

MIN_MATCHES: Final = 2
DAY: Final = 86_400.0


class LeadMeasure(StrEnum):
    """What "leads the next chat by 1.5x" compares."""

    FUSED = "fused"  # the fused (RRF + bonuses) scores
    EVIDENCE = "evidence"  # their whole-chat evidence (BM25F and best passage)
    # A next chat that misses a word the top chat matched is led outright;
    # when both match every word, the evidence ratio decides.
    COVERAGE = "coverage"


class CommonWords(StrEnum):
    """Whether typed words too common to search must be in the top chat too."""

    ALL = "all"  # every typed word counts
    SEARCHED = "searched"  # only the searched (rarest six) words count


class Counted(StrEnum):
    """What "at least two matches" counts in the top chat."""

    ENTRIES = "entries"  # its matching entries (and its digest)
    WORDS = "words"  # the searched words it matched: a one-word query leads nothing


class OnlyHit(StrEnum):
    """When being the only chat that matched is enough."""

    WHOLE = "whole"  # one entry (or the digest) must hold every searched word
    COVERED = "covered"  # its entries together must hold every searched word
    # Its entries together hold every searched word and no chat at all, the
    # filters (time window, harness) aside, holds more whole-chat evidence:
    # the filters left one chat, and nothing they left out outweighs it.
    BEST = "best"


class Prefixes(StrEnum):
    """Whether a word the index knows only as the start of longer words is known."""

    UNSURE = "unsure"  # never confident with such a word
    KNOWN = "known"  # it counts as known (an inflection the prefix retry resolves)


@dataclass(frozen=True, slots=True)
class GateRule:
    """One operating point of the gate (gate_calibration.py measures them)."""

    measure: LeadMeasure = LeadMeasure.EVIDENCE
    lead: float = 1.5
    min_matches: int = MIN_MATCHES
    common_words: CommonWords = CommonWords.ALL
    only_hit: OnlyHit = OnlyHit.WHOLE
    # A lead also needs the top chat to be about the words: its digest (title,
    # opening exchange, latest summary) holds every searched word.
    about: bool = True
    counted: Counted = Counted.ENTRIES
    # When the words do not single the top chat out (a lead short of `lead`),
    # recency may: every shown chat it does not lead on the words holds no more
    # evidence and has been idle at least `recency` times as long (0: never;
    # idle times count at least a day).
    recency: float = 0.0
    prefixes: Prefixes = Prefixes.UNSURE
    # Recency leads only over chats the top chat's evidence exceeds by at most this
    # ratio (inf: any chat holding no more evidence). A newer chat holding more of
    # the words than an older one may be a follow-up that repeats them: the
    # near-duplicate variants of the corpora (search_data.*_with_followups) measure it.
    recency_tie: float = math.inf

    @property
    def name(self) -> str:
        counted = "matches" if self.counted is Counted.ENTRIES else "matched words"
        text = (
            f"{self.measure} lead {self.lead}x, {self.min_matches}+ {counted}, "
            f"common words: {self.common_words}, only hit: {self.only_hit}, "
            f"lead needs the digest: {'yes' if self.about else 'no'}"
        )
        if self.recency:
            text += f", else recency {self.recency:g}x"
            if self.recency_tie != math.inf:
                text += f" (only where the evidence ties within {self.recency_tie:g}x)"
        if self.prefixes is Prefixes.KNOWN:
            text += ", prefixes known"
        return text


# The library's operating point (sessionforest.search.gate), as a rule: the
# calibration's choice (zero confident-but-wrong on Bridge, LoCoMo and their
# near-duplicate variants, the most confident among those). No recency: on the
# variants every recency factor is confidently wrong about some follow-up.
RULE: Final = GateRule(counted=Counted.WORDS, only_hit=OnlyHit.BEST)


def idle_days(hit: ChatHit, now: datetime) -> float | None:
    """Days since the chat's latest activity, at least one (None: unreadable)."""
    try:
        last = parse_iso(hit.updated_at)
    except ValueError:
        return None
    return max((now - last).total_seconds() / DAY, 1.0)


def rejudge(facts: GateInput, rule: GateRule) -> tuple[bool, GateReason, str]:
    """What the gate under `rule` says of the facts one search judged."""
    return judge(
        facts.choice,
        facts.top,
        facts.runner_up,
        top_misses_dropped=facts.top_misses_dropped,
        only_hit_holds=facts.only_hit_holds,
        outside_window=facts.outside_window,
        rivals=facts.rivals,
        top_about=facts.top_about,
        best_evidence=facts.best_evidence,
        now=facts.now,
        rule=rule,
    )


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items)


def _lead(rule: GateRule, terms: Sequence[str], top: ChatHit, runner_up: ChatHit) -> float:
    if rule.measure is LeadMeasure.FUSED:
        return ratio(top.score, runner_up.score)
    if rule.measure is LeadMeasure.COVERAGE and not set(terms) <= set(runner_up.matched_terms):
        return float("inf")
    return ratio(top.evidence, runner_up.evidence)


def _newer(
    rule: GateRule,
    terms: Sequence[str],
    top: ChatHit,
    others: Sequence[ChatHit],
    now: datetime | None,
) -> bool:
    """Whether recency leads where the words do not: every chat of `others` the
    top chat (which matched every word) does not lead by `rule.lead` on the
    words holds no more evidence and has been idle `rule.recency` times as long."""
    if not rule.recency or now is None:
        return False
    top_idle = idle_days(top, now)
    if top_idle is None:
        return False
    for other in others:
        if _lead(rule, terms, top, other) >= rule.lead:
            continue
        if other.evidence > top.evidence:
            return False
        if ratio(top.evidence, other.evidence) > rule.recency_tie:
            return False
        idle = idle_days(other, now)
        if idle is None or idle < rule.recency * top_idle:
            return False
    return True


def judge(
    choice: TermChoice,
    top: ChatHit | None,
    runner_up: ChatHit | None,
    *,
    top_misses_dropped: Sequence[str] = (),
    only_hit_holds: bool = True,
    outside_window: str | None = None,
    rivals: Sequence[ChatHit] = (),
    top_about: bool = True,
    best_evidence: float = 0.0,
    now: datetime | None = None,
    rule: GateRule = RULE,
) -> tuple[bool, GateReason, str]:
    """(confident, reason, sentence) from the two best chats of the full ranking.

    `top_misses_dropped`: words beyond the rarest six the top chat does not
    contain (every typed word counts, not only the searched ones).
    `only_hit_holds`: False when being the only hit proves little: the query
    was relaxed to OR and no entry of the top chat (nor its digest) holds
    every searched word.
    `outside_window`: the window phrase, when it left no chat (the caller
    found chats only without it): never confident.
    `rivals`: the chats shown after the runner-up; none of them may hold more
    whole-chat evidence than the top chat either.
    `top_about`: whether the top chat's digest holds every searched word
    (a lead needs it under `rule.about`).
    `best_evidence`: the most whole-chat evidence any chat holds, the filters
    aside (an only hit needs as much under `OnlyHit.BEST`).
    `now`: what idle times are measured from (a recency lead needs it).
    """
    terms = [t.label for t in choice.kept]
    if outside_window is not None and (terms or choice.unknown):
        return (
            False,
            GateReason.NO_HITS,
            f"no chat matched {outside_window}; matches from any time are listed apart",
        )
    if not terms and not choice.unknown:
        return False, GateReason.NO_TERMS, "no words to search for, only filters or stopwords"
    if choice.unknown:
        return (
            False,
            GateReason.UNKNOWN_TERMS,
            f"the index has never seen {_listed(choice.unknown)}",
        )
    if top is None:
        return False, GateReason.NO_HITS, "no chat matched"
    if choice.prefixed and rule.prefixes is Prefixes.UNSURE:
        return (
            False,
            GateReason.PREFIX_TERMS,
            f"{_listed(choice.prefixed)} matched only as the start of longer words",
        )
    missing = [t for t in terms if t not in top.matched_terms]
    if rule.common_words is CommonWords.ALL:
        missing += [*top_misses_dropped, *choice.unchecked]
    if missing:
        return (
            False,
            GateReason.TOP_MISSES_TERMS,
            f"the top chat does not match {_listed(missing)}",
        )
    if runner_up is None:
        if not only_hit_holds and rule.only_hit is OnlyHit.WHOLE:
            return (
                False,
                GateReason.ONLY_HIT_RELAXED,
                "the only chat that matches, but no entry of it holds every word "
                "(found after relaxing AND to OR)",
            )
        if (
            not only_hit_holds
            and rule.only_hit is OnlyHit.BEST
            and (best_evidence <= 0 or top.evidence < best_evidence)
        ):
            return (
                False,
                GateReason.ONLY_HIT_RELAXED,
                "the only chat that matches, but no entry of it holds every word "
                "and a chat the filters left out holds more of them",
            )
        return True, GateReason.ONLY_HIT, "the only chat that matches"
    if rule.counted is Counted.WORDS and len(top.matched_terms) < rule.min_matches:
        return False, GateReason.SINGLE_MATCH, "one word cannot single out a chat among others"
    if rule.counted is Counted.ENTRIES and top.matches < rule.min_matches:
        return False, GateReason.SINGLE_MATCH, "the top chat matched only once"
    lead = _lead(rule, terms, top, runner_up)
    shown = "every word the next chat misses" if lead == float("inf") else f"{lead:.2f}x"
    newer = lead < rule.lead and _newer(rule, terms, top, (runner_up, *rivals), now)
    if newer:
        shown = f"recency (the chats as strong on the words are {rule.recency:g}x as old)"
    if lead < rule.lead and not newer:
        return (
            False,
            GateReason.NARROW_LEAD,
            f"the top chat leads the next by only {shown} (needs {rule.lead}x, "
            f"measured on {rule.measure} scores)",
        )
    if max((h.evidence for h in (runner_up, *rivals)), default=0.0) > top.evidence:
        # The lead comes from one list (say a title match) while another
        # chat's entries hold more of the words: not a clear winner.
        return (
            False,
            GateReason.CONTESTED_LEAD,
            f"the top chat leads the next by {shown}, but another chat's entries "
            "match the words more",
        )
    if rule.about and not top_about:
        return (
            False,
            GateReason.NOT_ABOUT,
            f"the top chat leads the next by {shown}, but its title, opening and summary "
            "do not hold every word",
        )
    detail = (
        "the top chat matches every word and the next chat misses some"
        if lead == float("inf")
        else f"the words do not single out the top chat, but it leads by {shown}"
        if newer
        else f"the top chat matches every word and leads the next by {shown} "
        f"({rule.measure} scores)"
    )
    return True, GateReason.CLEAR_LEAD, detail


def searched(forest: Forest, query: str, now: datetime) -> tuple[ChatSearch, GateInput]:
    """`forest.search_chats(query, now=now)` and what its gate judged: the facade's
    own search (its index, its semantic leg) through `search.find.judged`."""
    leg = forest._semantic
    forest._backend.catch_up()  # as search_chats: every append acknowledged is found
    if leg is not None and forest.readonly_why is None:
        leg.freshen()
    with forest._backend.search() as index:
        return find.judged(index, query, now, semantic=leg.ranked if leg is not None else None)
