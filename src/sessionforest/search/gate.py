"""The gate: whether the index alone is sure which chat was meant, and why.

Confident only when every typed word is known, the top chat matched all of
them (the searched terms and the common words dropped from the search), and
it leads the next chat by 1.5x with at least two matches (and no other shown
chat's entries hold more of the words), or is the only chat
that matched and one of its entries (or its digest) holds every searched word.
Never when the time window had to be dropped. Anything else says which
condition failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .results import ChatHit, GateReason
from .terms import TermChoice

LEAD: Final = 1.5
MIN_MATCHES: Final = 2


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items)


def judge(
    choice: TermChoice,
    top: ChatHit | None,
    runner_up: ChatHit | None,
    *,
    top_misses_dropped: Sequence[str] = (),
    only_hit_holds: bool = True,
    outside_window: str | None = None,
    rivals: Sequence[ChatHit] = (),
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
        if not only_hit_holds:
            return (
                False,
                GateReason.ONLY_HIT_RELAXED,
                "the only chat that matches, but no entry of it holds every word "
                "(found after relaxing AND to OR)",
            )
        return True, GateReason.ONLY_HIT, "the only chat that matches"
    if top.matches < MIN_MATCHES:
        return False, GateReason.SINGLE_MATCH, "the top chat matched only once"
    lead = top.score / runner_up.score if runner_up.score > 0 else float("inf")
    if lead < LEAD:
        return (
            False,
            GateReason.NARROW_LEAD,
            f"the top chat leads the next by only {lead:.2f}x (needs {LEAD}x)",
        )
    if max((h.evidence for h in (runner_up, *rivals)), default=0.0) > top.evidence:
        # The lead comes from one list (say a title match) while another
        # chat's entries hold more of the words: not a clear winner.
        return (
            False,
            GateReason.CONTESTED_LEAD,
            f"the top chat leads the next by {lead:.2f}x, but another chat's entries "
            "match the words more",
        )
    return (
        True,
        GateReason.CLEAR_LEAD,
        f"the top chat matches every word and leads the next by {lead:.2f}x",
    )
