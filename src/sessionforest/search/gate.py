"""The gate: whether the index alone is sure which chat was meant, and why.

Confident only when every typed word is known, the top chat matched all of
them (the searched terms and, under `CommonWords.ALL`, the common words
dropped from the search), and it leads the next chat by `GateRule.lead` with
at least two matches (counted as matched words under `RULE`: one word alone
never singles out a chat among others; and no other shown chat's entries hold
more of the words), or is the only chat that matched (under `only_hit="whole"` one of
its entries, or its digest, must hold every searched word). Never when the
time window had to be dropped. Anything else says which condition failed.

How the lead is measured is a parameter (`LeadMeasure`), because a
reciprocal-rank-fused score compresses leads: rank 1 over rank 2 of one list
is 61/62, so a fused ratio of 1.5x is almost never reached.
`benchmarks/gate_calibration.py` measures every variant on the labelled
corpora and `RULE` is the operating point it chose (docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from .results import ChatHit, GateReason
from .terms import TermChoice

LEAD: Final = 1.5
MIN_MATCHES: Final = 2


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


@dataclass(frozen=True, slots=True)
class GateRule:
    """One operating point of the gate (see `benchmarks/gate_calibration.py`)."""

    measure: LeadMeasure = LeadMeasure.EVIDENCE
    lead: float = 1.5
    min_matches: int = MIN_MATCHES
    common_words: CommonWords = CommonWords.ALL
    only_hit: OnlyHit = OnlyHit.WHOLE
    # A lead also needs the top chat to be about the words: its digest (title,
    # opening exchange, latest summary) holds every searched word.
    about: bool = True
    counted: Counted = Counted.ENTRIES

    @property
    def name(self) -> str:
        counted = "matches" if self.counted is Counted.ENTRIES else "matched words"
        return (
            f"{self.measure} lead {self.lead}x, {self.min_matches}+ {counted}, "
            f"common words: {self.common_words}, only hit: {self.only_hit}, "
            f"lead needs the digest: {'yes' if self.about else 'no'}"
        )


# The operating point: the calibration's choice (zero confident-but-wrong on
# Bridge and LoCoMo, the most confident among those).
RULE: Final = GateRule(counted=Counted.WORDS)


@dataclass(frozen=True, slots=True)
class GateInput:
    """What the gate judges, kept on the search result so any rule can re-judge it."""

    choice: TermChoice
    top: ChatHit | None
    runner_up: ChatHit | None
    top_misses_dropped: tuple[str, ...] = ()
    only_hit_holds: bool = True
    outside_window: str | None = None
    rivals: tuple[ChatHit, ...] = ()  # the chats shown after the runner-up
    top_about: bool = True  # the top chat's digest holds every searched word

    def judge(self, rule: GateRule = RULE) -> tuple[bool, GateReason, str]:
        return judge(
            self.choice,
            self.top,
            self.runner_up,
            top_misses_dropped=self.top_misses_dropped,
            only_hit_holds=self.only_hit_holds,
            outside_window=self.outside_window,
            rivals=self.rivals,
            top_about=self.top_about,
            rule=rule,
        )


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items)


def _ratio(top: float, other: float) -> float:
    if other > 0:
        return top / other
    return float("inf") if top > 0 else 1.0


def _lead(rule: GateRule, terms: Sequence[str], top: ChatHit, runner_up: ChatHit) -> float:
    if rule.measure is LeadMeasure.FUSED:
        return _ratio(top.score, runner_up.score)
    if rule.measure is LeadMeasure.COVERAGE and not set(terms) <= set(runner_up.matched_terms):
        return float("inf")
    return _ratio(top.evidence, runner_up.evidence)


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
    if choice.prefixed:
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
        return True, GateReason.ONLY_HIT, "the only chat that matches"
    if rule.counted is Counted.WORDS and len(top.matched_terms) < rule.min_matches:
        return False, GateReason.SINGLE_MATCH, "one word cannot single out a chat among others"
    if rule.counted is Counted.ENTRIES and top.matches < rule.min_matches:
        return False, GateReason.SINGLE_MATCH, "the top chat matched only once"
    lead = _lead(rule, terms, top, runner_up)
    shown = "every word the next chat misses" if lead == float("inf") else f"{lead:.2f}x"
    if lead < rule.lead:
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
        else f"the top chat matches every word and leads the next by {shown} "
        f"({rule.measure} scores)"
    )
    return True, GateReason.CLEAR_LEAD, detail
