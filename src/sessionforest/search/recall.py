"""Recall inside one chat: every lookup is scoped to the session, nothing crosses chats.

Each term's matching entries come from the backend's SessionIndex (newest
first, unranked); hits are scored here by how rare their terms are within this
chat, newest first on ties. A word no entry holds retries as a prefix; `-word`
leaves out the entries holding it. Ended chats stay searchable like any other.
"""

from __future__ import annotations

import math
from typing import Final

from ..deadline import checkpoint
from ..errors import InvalidArgument
from ..model import LEGACY_KINDS
from ..store.base import SearchIndex, Term
from .query import STOPWORDS, split_exclusions, split_phrases, split_words
from .results import EntryHit
from .terms import MIN_PREFIX_LETTERS

MAX_RECALL_TERMS: Final = 8
TERM_ROWS: Final = 5_000  # per term, newest first: enough to rank any real chat


def check_limit(limit: int) -> None:
    """Refuse a limit that is not a whole number of at least 1 (InvalidArgument)."""
    # bool is an int: `limit=True` is a caller's mistake, not "one hit".
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidArgument("limit", f"must be a whole number of at least 1, got {limit!r}")


def recall_terms(index: SearchIndex, query: str) -> list[tuple[str, tuple[str, ...]]]:
    """Phrases and words to look for, with their stems; stopwords only when nothing
    else was typed."""
    phrases, rest = split_phrases(query)
    _, rest = split_exclusions(rest)
    words = split_words(rest)
    content = [w for w in words if w not in STOPWORDS]
    texts = list(dict.fromkeys([*phrases, *(content or words)]))[: MAX_RECALL_TERMS * 4]
    tokens = index.tokens(texts)
    return [(t, toks) for t, toks in zip(texts, tokens, strict=True) if toks][:MAX_RECALL_TERMS]


def search_session_entries(
    index: SearchIndex, session_id: str, query: str, limit: int = 10
) -> list[EntryHit]:
    """Entries of this one session matching `query`, best first.

    The caller has checked that the session exists and is readable; `limit`
    must be at least 1 (InvalidArgument otherwise).
    """
    check_limit(limit)
    return recall(index, session_id, query, limit)


def recall(index: SearchIndex, session_id: str, query: str, limit: int) -> list[EntryHit]:
    """The session's entries matching `query`, best first (the caller checked the session)."""
    terms = recall_terms(index, query)
    scope = index.session(session_id) if terms and limit > 0 else None
    if scope is None:
        return []
    texts = [text for text, _ in terms]
    found: dict[int, set[int]] = {}
    counts: list[int] = []
    used: list[Term] = []
    for i, (text, tokens) in enumerate(terms):
        checkpoint()
        term = Term(text, tokens, 0, 0)
        rows = scope.matches(text, prefix=False, limit=TERM_ROWS)
        if not rows and len(text) >= MIN_PREFIX_LETTERS and " " not in text:
            term = Term(text, tokens, 0, 0, prefix=True)
            rows = scope.matches(text, prefix=True, limit=TERM_ROWS)
        if rows:
            used.append(term)  # a term that matched nothing must not cost the snippets
        counts.append(len(rows))
        for sequence in rows:
            found.setdefault(sequence, set()).add(i)
    for text in dict.fromkeys(split_exclusions(split_phrases(query)[1])[0]):
        # `-word`: entries holding it are left out, whatever else they match.
        for sequence in scope.matches(text, prefix=False, limit=TERM_ROWS):
            found.pop(sequence, None)
    if not found:
        return []
    size = scope.size()
    # idf within this chat: a word the chat rarely uses says more than a common one.
    idf = [math.log(1 + (size - n + 0.5) / (n + 0.5)) for n in counts]
    every = [r for r, hit in found.items() if len(hit) == len(texts)]
    pool = every or list(found)
    best = sorted(pool, key=lambda r: (sum(idf[i] for i in found[r]), r), reverse=True)[:limit]
    scores = {r: sum(idf[i] for i in found[r]) for r in best}
    checkpoint()
    shown = scope.hits(best, used, texts)
    if not shown:
        return []
    oldest = min(row.sequence for row in shown)
    active = scope.active(oldest)
    return [
        EntryHit(
            entry_id=row.entry_id,
            session_id=session_id,
            sequence=row.sequence,
            kind=LEGACY_KINDS.get(row.kind, row.kind),
            snippet=row.snippet,
            created_at=row.created_at,
            on_active_branch=row.sequence in active,
            score=scores[row.sequence],
        )
        for row in shown
    ]
