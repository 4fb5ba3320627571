"""Finding a chat: T0 parse, term choice, T1 retrieval and the gate, over one SearchIndex.

`search_chats` is the entry point the facade calls with an index bound to one
read snapshot; it reads through the index only and writes nothing. No model
is involved here: the deep-search tier (deep.py) runs after the gate,
only when it is unsure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from ..store.base import ChatKey, SearchIndex, Term
from .gate import GateInput
from .query import parse_query
from .recall import check_limit
from .results import ChatSearch, GateReason
from .retrieve import (
    DIGEST_ROWS,
    Candidate,
    Filters,
    hits,
    lexical_order,
    meaning_only,
    recent,
    retrieve,
)
from .terms import MAX_WORDS, Vocabulary, choose_terms, exclusions, typed_line


def search_chats(
    index: SearchIndex,
    query: str,
    now: datetime,
    limit: int = 8,
    harness: str | None = None,
    semantic: Semantic | None = None,
) -> ChatSearch:
    """Top-level chats matching `query`, best first, and whether the index is sure.

    Time phrases resolve against `now` (UTC when it carries no zone); `harness`
    restricts the chats to one harness, as a harness word does; `limit` must
    be at least 1 (InvalidArgument otherwise); `semantic` ranks chats by
    meaning (search/semantic.py: the text searched for in, chat keys closest
    first out; None: no semantic leg).
    """
    return judged(index, query, now, limit, harness, semantic)[0]


def judged(
    index: SearchIndex,
    query: str,
    now: datetime,
    limit: int = 8,
    harness: str | None = None,
    semantic: Semantic | None = None,
) -> tuple[ChatSearch, GateInput]:
    """`search_chats`, and what its gate judged (a calibration re-judges those facts
    under other rules without searching again: benchmarks/gate_calibration.py)."""
    check_limit(limit)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    known = index.harnesses()
    found = _find(index, query, now, known, harness, limit, semantic)
    if not found[0].hits and found[0].harness and harness is None:
        # A harness name can also be a topic ("the claude sidecar"):
        # with nothing found under the filter, search it as a word.
        found = _find(index, query, now, [], None, limit, semantic)
    return found


Semantic = Callable[[str], Sequence[ChatKey]]


def _about(index: SearchIndex, top: Candidate, terms: Sequence[Term]) -> bool:
    """Whether the top chat's digest (title, opening exchange, latest summary) holds
    every term: among the best-ranked digests holding them all (a cut list errs
    toward False, which only makes the gate less sure)."""
    if not terms:
        return False
    held = index.digest_matches(terms, conjunctive=True, ranked=True, limit=DIGEST_ROWS)
    return top.key in held


def _misses(index: SearchIndex, top: Candidate | None, extra: Sequence[Term]) -> tuple[str, ...]:
    """The dropped words the top chat holds nowhere (its probes asked at once)."""
    if top is None or not extra:
        return ()
    held = index.contains_each([(top.key, t) for t in extra])
    return tuple(t.label for t, holds in zip(extra, held, strict=True) if not holds)


def _find(
    index: SearchIndex,
    query: str,
    now: datetime,
    known: list[str],
    harness: str | None,
    limit: int,
    semantic: Semantic | None = None,
) -> tuple[ChatSearch, GateInput]:
    parsed = parse_query(query, now, known)
    wanted = set(parsed.harnesses) | ({harness.lower()} if harness else set())
    vocab = Vocabulary(index)
    # The typed text as the line it may be (an error, a command): not when part
    # of it is a time phrase or an exclusion, which no line holds, nor when no
    # word is left to search for.
    typed = None
    if parsed.window is None and not parsed.excluded and (parsed.phrases or parsed.words):
        typed = query.replace('"', " ")
    # Every text the choice of terms and the line tokenize, asked of the index at once.
    vocab.learn(
        [*parsed.excluded, *parsed.phrases, *parsed.words[:MAX_WORDS], *([typed] if typed else [])]
    )
    excluded = exclusions(vocab, parsed.excluded)
    filters = Filters(parsed.window, frozenset(wanted), excluded)
    choice = choose_terms(vocab, parsed.phrases, parsed.words)
    line = typed_line(vocab, typed, choice.kept) if typed is not None and choice.kept else None
    mode = "none"
    core: list[Candidate] = []  # what the gate judges: the query's own chats
    chats: list[Candidate] = []  # what is listed: `core`, then any top-up
    outside: list[Candidate] = []
    best_evidence = 0.0
    meaning = " ".join((*parsed.phrases, *parsed.words))
    closest = semantic(meaning) if semantic is not None and meaning else ()
    if choice.kept:
        found = retrieve(
            index,
            choice.kept,
            filters,
            now,
            shown=limit,
            extra=choice.extra,
            semantic=closest,
            line=line,
        )
        core, chats, mode = found.core, found.chats, found.mode
        best_evidence = found.best_evidence
        if len(chats) < limit and filters.window is not None:
            # The words may date the events talked about, not the chat ("what
            # did she attend recently?"): when the window leaves fewer chats
            # than asked for, the matches from any time follow them, after
            # every chat inside it, and are marked (`outside_window`).
            anytime = Filters(None, filters.harnesses, excluded)
            inside = {c.key for c in chats}
            wider = retrieve(
                index,
                choice.kept,
                anytime,
                now,
                shown=limit,
                extra=choice.extra,
                semantic=closest,
                proof=found.proof,  # the words' evidence does not depend on the window
            )
            outside = [c for c in wider.chats if c.key not in inside][: limit - len(chats)]
    elif closest and choice.unknown:
        # No typed word is in the index: only the meaning can find a chat.
        core = chats = meaning_only(index, closest, filters, now)
        mode = "semantic"
    elif not choice.unknown and (filters.window or filters.harnesses or parsed.excluded):
        core = chats = recent(index, filters)
    listed = [*chats, *outside]
    shown = hits(index, listed[: max(limit, 2)], choice.kept)
    made = {h.session_id: h for h in shown}
    # The gate weighs words only: it judges the chats the words found (inside
    # the window, before any top-up), in the order the words alone give them,
    # so the semantic leg adds no evidence, no rival and no lead; and it is
    # sure only of a top chat both orders agree on.
    judged_chats = lexical_order(core) if closest and mode in ("and", "or") else core
    cut = judged_chats[: max(limit, 2)]
    missing = [c for c in cut if c.session_id not in made]
    made.update((h.session_id, h) for h in hits(index, missing, choice.kept))
    judged = [made[c.session_id] for c in cut]
    top = judged_chats[0] if judged_chats else None
    facts = GateInput(
        choice,
        judged[0] if judged else None,
        judged[1] if len(judged) > 1 else None,
        top_misses_dropped=_misses(index, top, choice.extra),
        only_hit_holds=top is not None and (mode != "or" or top.and_match),
        outside_window=parsed.window.phrase if outside and not chats and parsed.window else None,
        rivals=tuple(judged[2:]),
        top_about=top is not None and len(judged) > 1 and _about(index, top, choice.kept),
        best_evidence=best_evidence,
        now=now,
    )
    confident, reason, detail = facts.judge()
    if confident and top is not None and top is not core[0]:
        confident, reason = False, GateReason.CONTESTED_LEAD
        detail = f"the words pick {top.title!r}, but by meaning another chat ranks first"
    result = ChatSearch(
        query=query,
        confident=confident,
        reason=reason,
        detail=detail,
        hits=tuple(shown[:limit]),
        terms=tuple(t.label for t in choice.kept),
        unknown_terms=choice.unknown,
        prefix_terms=choice.prefixed,
        dropped_terms=choice.dropped,
        window=parsed.window,
        harness=tuple(sorted(wanted)),
        mode=mode,
        outside_window=tuple(made[c.session_id] for c in outside if c.session_id in made),
        excluded_terms=parsed.excluded,
    )
    return result, facts
