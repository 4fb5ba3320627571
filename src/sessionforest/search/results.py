"""What the two searches return: frozen values with a stable JSON shape.

Snippets mark matched words with `**` and cut text with `…`; they are short
excerpts chosen by the search backend, never whole entry bodies.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

import msgspec

from ..scripts import ELLIPSIS, MARK
from .query import TimeWindow

if TYPE_CHECKING:
    # TypedDicts for annotations only: wire.py builds ~30 of them at import.
    from ..wire import ChatHitJson, ChatSearchJson, EntryHitJson

__all__ = ["ELLIPSIS", "MARK", "ChatHit", "ChatSearch", "EntryHit", "GateReason"]


class EntryHit(msgspec.Struct, frozen=True):
    """One entry of one session that matched a recall query."""

    entry_id: str
    session_id: str
    sequence: int
    kind: str
    snippet: str
    created_at: str
    on_active_branch: bool
    score: float

    def to_json(self) -> EntryHitJson:
        return {
            "entry_id": self.entry_id,
            "session_id": self.session_id,
            "sequence": self.sequence,
            "kind": self.kind,
            "snippet": self.snippet,
            "created_at": self.created_at,
            "on_active_branch": self.on_active_branch,
            "score": round(self.score, 6),
        }


class ChatHit(msgspec.Struct, frozen=True):
    """One chat that matched a find query (a chat, never its entries' bodies)."""

    session_id: str
    title: str
    score: float
    status: str  # active | ended | archived
    snippet: str
    harness: str
    created_at: str
    updated_at: str  # the chat's latest activity
    matched_terms: tuple[str, ...]
    entry_matches: int  # matching entries seen in the entry list
    digest_match: bool  # title, first user message or latest summary matched
    # Whole-chat evidence: its BM25F and best passage, each scaled to the best chat
    # (0: not measured).
    evidence: float = 0.0
    # Where the chat opens: the entry the snippet comes from (its best-matching
    # passage) and whether it is on the active branch; None when only the digest
    # (title, opening exchange, summary) matched, or nothing was searched for.
    entry_id: str | None = None
    sequence: int | None = None
    active: bool | None = None

    @property
    def matches(self) -> int:
        return self.entry_matches + int(self.digest_match)

    def to_json(self) -> ChatHitJson:
        return {
            "session_id": self.session_id,
            "title": self.title,
            "score": round(self.score, 6),
            "status": self.status,
            "snippet": self.snippet,
            "harness": self.harness,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "matched_terms": list(self.matched_terms),
            "entry_matches": self.entry_matches,
            "digest_match": self.digest_match,
            "entry_id": self.entry_id,
            "sequence": self.sequence,
            "active": self.active,
        }


class GateReason(StrEnum):
    """Why the index is, or is not, confident about its top chat."""

    ONLY_HIT = "only-hit"
    CLEAR_LEAD = "clear-lead"
    NO_TERMS = "no-terms"
    NO_HITS = "no-hits"
    UNKNOWN_TERMS = "unknown-terms"
    PREFIX_TERMS = "prefix-terms"
    TOP_MISSES_TERMS = "top-misses-terms"
    SINGLE_MATCH = "single-match"
    NARROW_LEAD = "narrow-lead"
    CONTESTED_LEAD = "contested-lead"  # another shown chat's entries hold more evidence
    ONLY_HIT_RELAXED = "only-hit-relaxed"  # the only hit, but its words are spread out
    NOT_ABOUT = "not-about"  # a lead, but the top chat's digest lacks a word


class ChatSearch(msgspec.Struct, frozen=True):
    """The answer of `search_chats`: ranked chats and whether the index is sure."""

    query: str
    confident: bool
    reason: GateReason
    detail: str  # the reason as a sentence
    hits: tuple[ChatHit, ...]
    terms: tuple[str, ...]  # the words and phrases searched for (at most six)
    unknown_terms: tuple[str, ...]  # typed words the index has never seen
    prefix_terms: tuple[str, ...]  # unknown words that matched only as a prefix
    dropped_terms: tuple[str, ...]  # known but too common to keep
    window: TimeWindow | None
    harness: tuple[str, ...]
    mode: str  # "and", "or", "none" (no terms: filters only), "semantic" (meaning only)
    # When the time window left fewer chats than asked for: the matches from
    # any time that follow them in `hits` (a tail of it, after every chat
    # inside the window). The gate judges only the chats inside the window,
    # and is never confident when there are none.
    outside_window: tuple[ChatHit, ...] = ()
    # `-word`s: no chat holding one (in an entry or its digest) is listed.
    excluded_terms: tuple[str, ...] = ()

    @property
    def top(self) -> ChatHit | None:
        return self.hits[0] if self.hits else None

    def to_json(self) -> ChatSearchJson:
        return {
            "query": self.query,
            "confident": self.confident,
            "reason": str(self.reason),
            "detail": self.detail,
            "hits": [hit.to_json() for hit in self.hits],
            "terms": list(self.terms),
            "unknown_terms": list(self.unknown_terms),
            "prefix_terms": list(self.prefix_terms),
            "dropped_terms": list(self.dropped_terms),
            "window": self.window.to_json() if self.window else None,
            "harness": list(self.harness),
            "mode": self.mode,
            "outside_window": [hit.to_json() for hit in self.outside_window],
            "excluded_terms": list(self.excluded_terms),
        }
