"""The gate: whether the index alone is sure which chat was meant, and why.

Confident only when every typed word is known (a word the index knows only as
the start of longer words is not), the top chat matched all of them (the
searched terms and the common words dropped from the search), matched at least
two of them (one word alone never singles out a chat among others), and leads
the next chat by `LEAD` on whole-chat evidence (BM25F and best passage) with no
other shown chat's entries holding more of the words and its own digest
(title, opening exchange, latest summary) holding every searched word; or is
the only chat that matched (when the query was relaxed to OR, its entries may
hold the words together only if no chat the filters left out, a time window or
a harness, holds more whole-chat evidence). Never when the time window had to
be dropped. Anything else says which condition failed.

Where the words tie (a lead short of `LEAD`), nothing else leads, recency
neither: an older chat as strong on the words may be an earlier attempt at the
topic (the newer chat wanted) or the original that a newer follow-up repeats,
often with more of the words (the older chat wanted). The words cannot tell the
two apart, so a near-duplicate pair is left to a model or to the user (issue 26;
the near-duplicate variants of both corpora in benchmarks/gate_calibration.py).

This is one operating point: `benchmarks/gate_calibration.py` measures the
whole space of such rules (`benchmarks/gate_space.py`: other lead measures,
thresholds, ways of counting) on the labelled corpora, and chose this one
(docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

import msgspec

from .results import ChatHit, GateReason
from .terms import TermChoice

LEAD: Final = 1.5  # the top chat's evidence over the next chat's
MIN_WORDS: Final = 2  # searched words the top chat must match to lead others


class GateInput(msgspec.Struct, frozen=True):
    """What the gate judges of one search (`search.find.judged` returns it too)."""

    choice: TermChoice
    top: ChatHit | None
    runner_up: ChatHit | None
    top_misses_dropped: tuple[str, ...] = ()
    only_hit_holds: bool = True
    outside_window: str | None = None
    rivals: tuple[ChatHit, ...] = ()  # the chats shown after the runner-up
    top_about: bool = True  # the top chat's digest holds every searched word
    # The most whole-chat evidence any chat holds, the filters aside (0: unknown).
    best_evidence: float = 0.0
    # When the search ran: the calibration's recency rules (benchmarks/gate_space.py)
    # measure idle times from it; this operating point has none.
    now: datetime | None = None

    def judge(self) -> tuple[bool, GateReason, str]:
        return judge(
            self.choice,
            self.top,
            self.runner_up,
            top_misses_dropped=self.top_misses_dropped,
            only_hit_holds=self.only_hit_holds,
            outside_window=self.outside_window,
            rivals=self.rivals,
            top_about=self.top_about,
            best_evidence=self.best_evidence,
        )


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items)


def ratio(top: float, other: float) -> float:
    if other > 0:
        return top / other
    return float("inf") if top > 0 else 1.0


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
    `top_about`: whether the top chat's digest holds every searched word (a
    lead needs it).
    `best_evidence`: the most whole-chat evidence any chat holds, the filters
    aside (a relaxed only hit needs as much).
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
    missing += [*top_misses_dropped, *choice.unchecked]
    if missing:
        return (
            False,
            GateReason.TOP_MISSES_TERMS,
            f"the top chat does not match {_listed(missing)}",
        )
    if runner_up is None:
        if not only_hit_holds and (best_evidence <= 0 or top.evidence < best_evidence):
            return (
                False,
                GateReason.ONLY_HIT_RELAXED,
                "the only chat that matches, but no entry of it holds every word "
                "and a chat the filters left out holds more of them",
            )
        return True, GateReason.ONLY_HIT, "the only chat that matches"
    if len(top.matched_terms) < MIN_WORDS:
        return False, GateReason.SINGLE_MATCH, "one word cannot single out a chat among others"
    lead = ratio(top.evidence, runner_up.evidence)
    shown = "every word the next chat misses" if lead == float("inf") else f"{lead:.2f}x"
    if lead < LEAD:
        return (
            False,
            GateReason.NARROW_LEAD,
            f"the top chat leads the next by only {shown} (needs {LEAD}x, "
            "measured on evidence scores)",
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
    if not top_about:
        return (
            False,
            GateReason.NOT_ABOUT,
            f"the top chat leads the next by {shown}, but its title, opening and summary "
            "do not hold every word",
        )
    detail = (
        "the top chat matches every word and the next chat misses some"
        if lead == float("inf")
        else f"the top chat matches every word and leads the next by {shown} (evidence scores)"
    )
    return True, GateReason.CLEAR_LEAD, detail
