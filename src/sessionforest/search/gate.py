"""The gate: whether the index alone is sure which chat was meant, and why.

Confident only when every typed word is known, the top chat matched all the
searched terms, and it leads the next chat by 1.5x with at least two matches,
or is the only chat that matched. Anything else says which condition failed.
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
    choice: TermChoice, top: ChatHit | None, runner_up: ChatHit | None
) -> tuple[bool, GateReason, str]:
    """(confident, reason, sentence) from the two best chats of the full ranking."""
    terms = [t.label for t in choice.kept]
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
    if missing:
        return (
            False,
            GateReason.TOP_MISSES_TERMS,
            f"the top chat does not match {_listed(missing)}",
        )
    if runner_up is None:
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
    return (
        True,
        GateReason.CLEAR_LEAD,
        f"the top chat matches every word and leads the next by {lead:.2f}x",
    )
