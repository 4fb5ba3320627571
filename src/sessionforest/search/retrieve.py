"""T1: one list of matching entries and one of chats ranked by whole-chat evidence, fused.

AND first, relaxed to OR below four chats; an AND that finds fewer chats than
asked for is topped up by the OR's other chats, ranked after it. Chats are
fused by reciprocal rank (weight / (60 + rank): entries 1, digests 2 under AND
(after an OR their chats join as candidates only), and a list ranking chats by
whole-chat evidence (`evidence`): a BM25F over how many of their entries match
each term, the chat digest counting as one more entry, length-normalised by
the chat's size, plus, for the chats it ranks first, the score of their best
passage of a few consecutive entries; every typed word the budget affords
counts, not only the rarest six: 1 under AND, 16 after an OR, where no single
entry holds every word and the chat-level evidence decides) plus small bonuses
for several matching entries, for covering every term and for recency; a
chat one entry of which holds the whole typed line (an error, a command: four
tokens or more, as one phrase) ranks above the rest. Equal scores: the latest
activity, then the chat key, so the order is the same every time. Only
top-level chats and a harness's imported subagent chats (ranked a step below)
count, never quarantined ones; ended and archived ones are included and
marked. Every list comes from the search backend's primitives
(store/base.SearchIndex); a further leg (say a semantic one) is one more
ranked list with its own weight in `_base_score`.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Final

import msgspec

from ..deadline import checkpoint
from ..ids import parse_iso
from ..store.base import ChatEvidence, ChatKey, ChatRow, EntryKey, Landing, SearchIndex, Term
from .query import TimeWindow
from .results import ChatHit

MIN_AND_CHATS: Final = 4
RRF_K: Final = 60
ENTRY_WEIGHT: Final = 1.0
# Under AND every candidate holds every word, so a digest (title) match
# settles it. After an OR the digest is only one field of the chat-level
# evidence (DIGEST_TF): ranked as a list of its own there, a greeting that
# names someone ("Hey Caroline!") outvoted the chats whose entries hold the
# question's words (LoCoMo r@1 0.55 with it, 0.65 without); its chats still
# join as candidates.
DIGEST_WEIGHT_AND: Final = 2.0
DIGEST_WEIGHT_OR: Final = 0.0
# Bonuses are small next to one list's top score (2/61 ~ 0.033) but larger
# than a few rank steps (~0.0003 each), so they settle near ties.
MULTI_BONUS: Final = 0.003  # reached at five matching entries
COVER_BONUS: Final = 0.006
# After an OR, a chat where one entry (or the digest) holds every term (what
# the AND found, too few to stand alone) ranks above every chat holding only
# some of them in different entries: more than any fused score can add up to.
AND_BONUS: Final = 1.0
# A chat one entry (or the digest) of which holds the typed text as a phrase
# (search/terms.typed_line: the error line, the command as typed) ranks above
# every chat holding the words apart: a line pasted from a terminal is that line.
LINE_BONUS: Final = 1.0
# Up to this many chats are probed for the line one by one; more are read from
# one phrase query of its LINE_ROWS newest entries and digests (a probe seeks
# into one chat's rows: cheap for a few; a line that many entries hold tells
# few chats apart, and reading every one cost a common line ~20 ms at 100k).
LINE_PROBES: Final = 16
LINE_ROWS: Final = 200
RECENCY_BONUS: Final = 0.003  # halves every RECENCY_HALF_LIFE days of inactivity
RECENCY_HALF_LIFE: Final = 30.0
# Ranking costs per matching entry (~2 us on SQLite, plus a walk of each
# term's posting list): past this many estimated matches a ranked list would
# blow the latency budget, so the newest matches are taken unranked instead.
RANK_BUDGET: Final = 5_000
# After an OR the entry list only adds candidates and a light vote (the
# chat-level evidence leads), so FTS5 ranks at most this many matches there:
# bm25 reads every matching row's size, ~3 us a row.
OR_RANK_BUDGET: Final = 2_000
ENTRY_ROWS: Final = 1_000
DIGEST_ROWS: Final = 500
# Chat-level evidence: every matching entry of the rarer terms is read unranked
# (~1 us a row) while their summed document frequencies stay under this, and
# each chat scores like one BM25 document whose "term frequency" is how many of
# its entries match (saturating, so a chat-wide name cannot outvote a rare word).
EVIDENCE_BUDGET: Final = 10_000
EVIDENCE_CHATS: Final = 200  # chats the evidence list may add after an OR
# After an OR no entry holds every word, so the chat-level list leads; under
# AND it only reorders chats that already matched every word in one entry (and
# must not flatten the lead the gate measures).
EVIDENCE_WEIGHT_AND: Final = 1.0
EVIDENCE_WEIGHT_OR: Final = 16.0
# A digest (title, project, opening exchange, latest summary) holding a term
# counts as this many of the chat's entries holding it: BM25F with the digest
# as a field.
DIGEST_TF: Final = 1
# Saturation of a chat's matching-entry count: chosen by measurement on LoCoMo
# (docs/benchmarks.md section 6; 1.2, 1.6, 2.0 and 3.0 tried: 1.6 keeps recall@1
# and @5 at or above whole-chat BM25 in every category with the gate unchanged).
EVIDENCE_K1: Final = 1.6
# Length normalisation against the mean size of the chats scored: mild,
# since a chat is a conversation on a topic, not a bag of independent pages.
EVIDENCE_B: Final = 0.3
# The passage list: the chats the BM25F ranks first get their best run of this
# many consecutive entries scored (where one exchange holds most of the words).
PASSAGE_CHATS: Final = 20
PASSAGE_SPAN: Final = 3
PASSAGE_WEIGHT: Final = 1.0  # its share next to the BM25F's (each scaled to its best chat)
PROBED_CHATS: Final = 16  # at least this many chats get their term coverage checked after an OR
# The semantic leg (search/semantic.py, the `[semantic]` extra): chats ranked by
# their windows' closeness to the query's meaning, one more fused list. Its
# chats join as candidates; the gate never counts it (search/find.py). It
# weighs as the entry list does: at 4 after an OR it pushed chats the words
# ranked first down on LoCoMo (r@1 0.691 against 0.711 without the leg, on a
# third of the questions; 0.716 at 1), and 2 or more cost a vague Bridge query
# (docs/semantic.md).
# A harness's subagent chat (ChatRow.worker) repeats what its parent chat's task
# call and result hold: it loses what first place in the entry list gives, so on
# a near tie the top-level chat comes first (coding-search r@1 66 -> 69 of 77 at
# 0.005..0.05 alike, r@5 75 either way; 0.02 and 0.05 measured the same).
WORKER_PENALTY: Final = ENTRY_WEIGHT / (RRF_K + 1)
SEMANTIC_WEIGHT_AND: Final = 1.0
SEMANTIC_WEIGHT_OR: Final = 1.0


class Filters(msgspec.Struct, frozen=True):
    window: TimeWindow | None
    harnesses: frozenset[str]  # lower-case; empty: any harness
    excluded: tuple[Term, ...] = ()  # `-word`s: chats holding any are left out


class Candidate(msgspec.Struct):
    """A chat being scored by T1 (mutable until `retrieve` returns it)."""

    key: ChatKey
    session_id: str
    title: str
    harness: str
    status: str
    created_at: str
    active_from: datetime | None
    active_to: datetime | None
    updated_at: str
    entry_rank: int | None = None
    entry_matches: int = 0
    best_entry: EntryKey | None = None
    digest_rank: int | None = None
    digest_weight: float = DIGEST_WEIGHT_AND
    evidence_rank: int | None = None
    evidence_weight: float = EVIDENCE_WEIGHT_AND
    evidence: float = 0.0
    semantic_rank: int | None = None
    semantic_weight: float = SEMANTIC_WEIGHT_AND
    and_match: bool = False  # one entry, or the digest, matched every term
    line_match: bool = False  # one entry, or the digest, holds the typed text as a phrase
    worker: bool = False  # a harness's subagent chat (ChatRow.worker)
    covered: set[int] = msgspec.field(default_factory=set)
    score: float = 0.0


def _when(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return parse_iso(text)
    except ValueError:
        return None


def _chat(row: ChatRow) -> Candidate:
    created, first, last = row.created_at, row.first_at, row.last_at
    moments = [m for m in (_when(created), _when(first), _when(last)) if m is not None]
    updated = max((t for t in (created, last) if t), default=created)
    first_seen, last_seen = min(moments, default=None), max(moments, default=None)
    return Candidate(
        row.key,
        row.session_id,
        row.title,
        row.harness,
        row.status,
        created,
        first_seen,
        last_seen,
        updated,
        worker=bool(row.worker),
    )


def _passes(chat: Candidate, filters: Filters) -> bool:
    if filters.harnesses and chat.harness.lower() not in filters.harnesses:
        return False
    window = filters.window
    if window is None:
        return True
    if chat.active_from is None or chat.active_to is None:
        return False
    return chat.active_from <= window.end and chat.active_to >= window.start


def _load(
    index: SearchIndex, keys: Iterable[ChatKey], filters: Filters
) -> dict[ChatKey, Candidate]:
    chats = (_chat(row) for row in index.chats(keys))
    kept = {c.key: c for c in chats if _passes(c, filters)}
    return _without_excluded(index, kept, filters.excluded)


def _without_excluded(
    index: SearchIndex, chats: dict[ChatKey, Candidate], excluded: Sequence[Term]
) -> dict[ChatKey, Candidate]:
    """`chats` less those holding an excluded term in any entry or their digest.

    A term cheap enough to read is read once (its chats, from both lists);
    a common one is probed chat by chat instead.
    """
    for term in excluded:
        if not chats:
            break
        substring_digests = term.spaceless.digest_df if term.spaceless is not None else 0
        if term.entries + term.digest_df + substring_digests > EVIDENCE_BUDGET:
            held = index.contains_each([(n, term) for n in chats])
            chats = {n: c for (n, c), h in zip(chats.items(), held, strict=True) if not h}
            continue
        holding = set(index.entry_counts(term, EVIDENCE_BUDGET))
        holding.update(
            index.digest_matches([term], conjunctive=False, ranked=False, limit=EVIDENCE_BUDGET)
        )
        chats = {n: c for n, c in chats.items() if n not in holding}
    return chats


def _entry_query(terms: Sequence[Term], conjunctive: bool) -> tuple[Sequence[Term], bool]:
    """The terms to match entries by, and whether ranking them is affordable."""
    if conjunctive:
        return terms, min(t.entry_df for t in terms) <= RANK_BUDGET
    # OR: rarest first while the summed matches stay affordable; the terms
    # left out are too common to change which chats come first.
    chosen: list[Term] = []
    total = 0
    for term in sorted(terms, key=lambda t: t.entry_df):
        if chosen and total + term.entry_df > OR_RANK_BUDGET:
            break
        chosen.append(term)
        total += term.entry_df
    if total > OR_RANK_BUDGET:
        return terms, False
    return chosen, True


class Evidence(msgspec.Struct, frozen=True):
    """Chat-level lexical evidence, for the terms cheap enough to read."""

    scores: dict[ChatKey, float]
    covered: dict[ChatKey, set[int]]  # chat -> indexes of the searched terms it matches
    counted: frozenset[int]  # indexes of the terms that were read


def _bm25f(
    per_term: Sequence[tuple[float, dict[ChatKey, int]]], sizes: dict[ChatKey, int]
) -> dict[ChatKey, float]:
    """Whole-chat BM25F: idf x saturated count of matching entries (the digest
    counting as DIGEST_TF more), normalised by the chat's length in entries."""
    mean = (sum(sizes.values()) / len(sizes) if sizes else 0.0) or 1.0
    scores: dict[ChatKey, float] = {}
    for idf, counts in per_term:
        for num, tf in counts.items():
            norm = EVIDENCE_K1 * (1 - EVIDENCE_B + EVIDENCE_B * sizes.get(num, mean) / mean)
            scores[num] = scores.get(num, 0.0) + idf * tf * (EVIDENCE_K1 + 1) / (tf + norm)
    return scores


def _best_passage(hits: Sequence[tuple[int, float]]) -> float:
    """The best run of PASSAGE_SPAN consecutive entries: per term, idf x saturated
    count of its entries in the run. `hits` are (sequence, term) pairs sorted by
    sequence, the term given by its idf (equal idfs count as one term: rare)."""
    best = 0.0
    low = 0
    for high in range(len(hits)):
        while hits[high][0] - hits[low][0] >= PASSAGE_SPAN:
            low += 1
        counts: dict[float, int] = {}
        for _, idf in hits[low : high + 1]:
            counts[idf] = counts.get(idf, 0) + 1
        score = sum(idf * n * (EVIDENCE_K1 + 1) / (n + EVIDENCE_K1) for idf, n in counts.items())
        best = max(best, score)
    return best


def _passages(
    index: SearchIndex,
    terms: Sequence[Term],
    idfs: dict[int, float],
    chats: Sequence[ChatKey],
) -> dict[ChatKey, float]:
    """Per chat, the score of its best passage (PASSAGE_SPAN consecutive entries)."""
    hits: dict[ChatKey, list[tuple[int, float]]] = {}
    read = [terms[i] for i in idfs]  # every term's sequences asked at once
    found = index.entry_sequences_each(read, chats, EVIDENCE_BUDGET) if read else []
    for (i, idf), sequences in zip(idfs.items(), found, strict=True):
        for num, seqs in sequences.items():
            # A tiny per-term offset keeps two terms of equal idf apart.
            hits.setdefault(num, []).extend((seq, idf + i * 1e-9) for seq in seqs)
    return {num: _best_passage(sorted(found)) for num, found in hits.items()}


def _normalised(scores: dict[ChatKey, float]) -> dict[ChatKey, float]:
    top = max(scores.values(), default=0.0)
    return {num: value / top for num, value in scores.items()} if top > 0 else {}


def evidence(index: SearchIndex, terms: Sequence[Term], extra: Sequence[Term] = ()) -> Evidence:
    """Two whole-chat lists in one: a BM25F over how many of a chat's entries
    match each term (`_bm25f`), and, for the PASSAGE_CHATS chats it ranks first,
    the best passage of a few consecutive entries holding the most of the
    words (`_best_passage`); each scaled to its best chat and summed, so a chat
    that talks about the words throughout and one whose single exchange holds
    them all both rise.

    Terms are read rarest first while their document frequencies fit
    EVIDENCE_BUDGET, the searched ones and then the `extra` words beyond the
    rarest six (so a long question's every word can count); the common ones
    left out barely move BM25 anyway.
    """
    everything = [*terms, *extra]
    covered: dict[ChatKey, set[int]] = {}
    counted: set[int] = set()
    total = 0
    order = sorted(range(len(everything)), key=lambda i: everything[i].entries)
    read: list[int] = []  # the terms whose lists fit the budget, rarest first
    for i in order:
        term = everything[i]
        if not term.entries and not term.digest_df:
            continue
        if total + term.entries > EVIDENCE_BUDGET:
            break
        total += term.entries
        read.append(i)
    checkpoint()
    # Every read term's lists, the chat count and the chats' sizes asked at once.
    lists = ChatEvidence(0, [], [], {})
    if read:
        lists = index.chat_evidence([everything[i] for i in read], EVIDENCE_BUDGET)
    chats = lists.chats or 1
    per_term: list[tuple[float, dict[ChatKey, int]]] = []
    idfs: dict[int, float] = {}
    for i, found, digests in zip(read, lists.entries, lists.digests, strict=True):
        # Chats in key order, those only a digest holds after: equal evidence keeps
        # this order (the evidence list's cut below), whatever order a backend reads.
        counts = dict(sorted(found.items()))
        for num in sorted(digests):
            counts[num] = counts.get(num, 0) + DIGEST_TF
        if i < len(terms):
            counted.add(i)
        if not counts:
            continue
        idf = math.log(1 + (chats - len(counts) + 0.5) / (len(counts) + 0.5))
        per_term.append((idf, counts))
        idfs[i] = idf
        if i < len(terms):
            for num in counts:
                covered.setdefault(num, set()).add(i)
    whole = _bm25f(per_term, lists.sizes)
    # Equal scores: the later-indexed (newer) chat first, as the final ranking breaks ties.
    first = sorted(whole, key=lambda n: (-whole[n], -n))[:PASSAGE_CHATS]
    passage = _normalised(_passages(index, everything, idfs, first)) if first else {}
    scores = {
        num: value + PASSAGE_WEIGHT * passage.get(num, 0.0)
        for num, value in _normalised(whole).items()
    }
    return Evidence(scores, covered, frozenset(counted))


def _collect(
    index: SearchIndex,
    terms: Sequence[Term],
    conjunctive: bool,
    filters: Filters,
    proof: Evidence,
) -> dict[ChatKey, Candidate]:
    matched, ranked = _entry_query(terms, conjunctive)
    rows = index.entry_matches(matched, conjunctive=conjunctive, ranked=ranked, limit=ENTRY_ROWS)
    digest = index.digest_matches(terms, conjunctive=conjunctive, ranked=True, limit=DIGEST_ROWS)
    keys = [chat for chat, _ in rows] + digest
    if not conjunctive:
        # After an OR, chats whose entries together hold the most evidence join too.
        best = sorted(proof.scores, key=proof.scores.__getitem__, reverse=True)
        keys += best[:EVIDENCE_CHATS]
    chats = _load(index, keys, filters)
    rank = 0
    for key, entry in rows:
        chat = chats.get(key)
        if chat is None:
            continue
        if chat.entry_rank is None:
            rank += 1
            chat.entry_rank = rank
            chat.best_entry = entry
        chat.entry_matches += 1
    rank = 0
    for num in digest:
        if num in chats:
            rank += 1
            chats[num].digest_rank = rank
            chats[num].digest_weight = DIGEST_WEIGHT_AND if conjunctive else DIGEST_WEIGHT_OR
    # Equal evidence, equal rank: a tie must not be broken by list order.
    better = sorted(-proof.scores[n] for n in chats if n in proof.scores)
    weight = EVIDENCE_WEIGHT_AND if conjunctive else EVIDENCE_WEIGHT_OR
    for num, chat in chats.items():
        if num in proof.scores:
            chat.evidence = proof.scores[num]
            chat.evidence_rank = 1 + bisect.bisect_left(better, -proof.scores[num])
            chat.evidence_weight = weight
    for chat in chats.values():
        if conjunctive:
            chat.covered = set(range(len(terms)))
            chat.and_match = True
        else:
            chat.covered = set(proof.covered.get(chat.key, ()))
    return chats


def _mark_line(index: SearchIndex, line: Term, chats: Sequence[Candidate]) -> None:
    """Mark the chats holding the typed line (`line_match`): a few are probed (a
    seek into each chat's rows, the probes asked together), more are read from
    one phrase query of the newest entries and digests holding it."""
    if len(chats) <= LINE_PROBES:
        holding = index.contains_each([(chat.key, line) for chat in chats])
        for chat, holds in zip(chats, holding, strict=True):
            chat.line_match = holds
        return
    by_key = {c.key: c for c in chats}
    held = {
        key
        for key, _ in index.entry_matches([line], conjunctive=True, ranked=False, limit=LINE_ROWS)
    }
    held.update(index.digest_matches([line], conjunctive=True, ranked=False, limit=LINE_ROWS))
    for key in held & by_key.keys():
        by_key[key].line_match = True


def _probe(index: SearchIndex, chats: Sequence[Candidate], terms: Sequence[Term]) -> None:
    """Mark in each chat's `covered` the terms it holds, all probes asked at once."""
    wanted = [(chat, i) for chat in chats for i in range(len(terms)) if i not in chat.covered]
    held = index.contains_each([(chat.key, terms[i]) for chat, i in wanted])
    for (chat, i), holds in zip(wanted, held, strict=True):
        if holds:
            chat.covered.add(i)


def _stamp(chat: Candidate) -> float:
    return chat.active_to.timestamp() if chat.active_to is not None else 0.0


def _order(chat: Candidate, score: float | None = None) -> tuple[float, float, ChatKey]:
    """The final ranking's key, highest first: the score, then (equal scores) the
    latest activity, then the chat key (newest chat): find's order never depends
    on the order in which a backend handed the chats over."""
    return chat.score if score is None else score, _stamp(chat), chat.key


def _base_score(chat: Candidate, now: datetime) -> float:
    score = 0.0
    if chat.entry_rank is not None:
        score += ENTRY_WEIGHT / (RRF_K + chat.entry_rank)
    if chat.digest_rank is not None:
        score += chat.digest_weight / (RRF_K + chat.digest_rank)
    if chat.evidence_rank is not None:
        score += chat.evidence_weight / (RRF_K + chat.evidence_rank)
    if chat.semantic_rank is not None:
        score += chat.semantic_weight / (RRF_K + chat.semantic_rank)
    if chat.entry_matches > 1:
        score += MULTI_BONUS * min(chat.entry_matches - 1, 4) / 4
    if chat.active_to is not None:
        idle = max((now - chat.active_to).total_seconds() / 86400, 0.0)
        score += RECENCY_BONUS * 0.5 ** (idle / RECENCY_HALF_LIFE)
    return score


def _hit(chat: Candidate, terms: Sequence[Term], snippet: str, landing: Landing | None) -> ChatHit:
    return ChatHit(
        session_id=chat.session_id,
        title=chat.title,
        score=chat.score,
        status=chat.status,
        snippet=snippet,
        harness=chat.harness,
        created_at=chat.created_at,
        updated_at=chat.updated_at,
        matched_terms=tuple(t.label for i, t in enumerate(terms) if i in chat.covered),
        entry_matches=chat.entry_matches,
        digest_match=chat.digest_rank is not None,
        evidence=chat.evidence,
        entry_id=landing.entry_id if landing is not None else None,
        sequence=landing.sequence if landing is not None else None,
        active=landing.active if landing is not None else None,
    )


def _ranked(
    index: SearchIndex,
    chats: dict[ChatKey, Candidate],
    terms: Sequence[Term],
    mode: str,
    now: datetime,
    shown: int,
) -> list[Candidate]:
    """`chats` best first: fused score, then the bonus for covering every term
    (after an OR, the best `shown` chats, at least PROBED_CHATS, are probed for
    the terms their entries hold)."""
    ranked = sorted(chats.values(), key=lambda c: _base_score(c, now), reverse=True)
    checkpoint()
    if mode == "or":
        _probe(index, ranked[: max(shown, PROBED_CHATS)], terms)
    for chat in ranked:
        chat.score = _base_score(chat, now)
        if len(terms) > 1 and len(chat.covered) == len(terms):
            chat.score += COVER_BONUS
        if mode == "or" and chat.and_match:
            chat.score += AND_BONUS
        if chat.line_match:
            chat.score += LINE_BONUS
        if chat.worker:
            chat.score -= WORKER_PENALTY
    ranked.sort(key=_order, reverse=True)
    return ranked


class Retrieved(msgspec.Struct, frozen=True):
    """T1's chats, best first: the `core` ones the query's mode found (what the
    gate judges), then, when they are fewer than asked for, the chats the
    relaxed query adds (`topped_up`), ranked after every core chat."""

    core: list[Candidate]
    mode: str  # "and" or "or": how the core chats were found
    topped_up: list[Candidate] = msgspec.field(default_factory=list)
    # The whole-chat evidence of the terms (filter-free: a second retrieve of
    # the same words under other filters reuses it) and the most any chat
    # holds (what the gate weighs a filtered-down only hit against).
    proof: Evidence | None = None
    best_evidence: float = 0.0

    @property
    def chats(self) -> list[Candidate]:
        return [*self.core, *self.topped_up]


def retrieve(
    index: SearchIndex,
    terms: Sequence[Term],
    filters: Filters,
    now: datetime,
    shown: int = PROBED_CHATS,
    extra: Sequence[Term] = (),
    semantic: Sequence[ChatKey] = (),
    proof: Evidence | None = None,
    line: Term | None = None,
) -> Retrieved:
    """Every matching chat, best first, the mode ("and" or "or") that found them,
    and the most whole-chat evidence any chat holds, the filters aside.

    AND first, relaxed to OR below MIN_AND_CHATS chats. When AND finds at
    least that many but fewer than `shown`, the chats only the OR finds top
    the list up, ranked among themselves after every AND chat (a short list
    would otherwise end where a chat holding the words in different entries
    could follow). After an OR, the best `shown` chats (at least
    PROBED_CHATS) learn which terms they match; that decides the bonus for
    covering every term. `semantic`: the semantic leg's chats, closest first
    (empty: no such leg). `proof`: the evidence of these `terms` and `extra`
    from an earlier retrieve (it does not depend on the filters). `line`: the
    typed text as one phrase (terms.typed_line); the chats holding it rank first.
    """
    if proof is None:
        proof = evidence(index, terms, extra)
    chats = _collect(index, terms, True, filters, proof)
    mode = "and"
    wider: dict[ChatKey, Candidate] = {}
    if len(terms) > 1 and len(chats) < max(shown, MIN_AND_CHATS):
        found_all = set(chats)
        wider = _collect(index, terms, False, filters, proof)
        for num in found_all & set(wider):
            wider[num].and_match = True
        if len(chats) < MIN_AND_CHATS:
            chats, wider, mode = wider, {}, "or"
        else:
            wider = {num: chat for num, chat in wider.items() if num not in found_all}
    if line is not None:
        # Only a chat one entry (or the digest) of which holds every word can hold the line.
        whole = [c for c in (*chats.values(), *wider.values()) if c.and_match]
        if whole:
            _mark_line(index, line, whole)
    if semantic:
        weight = SEMANTIC_WEIGHT_AND if mode == "and" else SEMANTIC_WEIGHT_OR
        chats.update(near(index, semantic, filters, {**wider, **chats}, weight))
    core = _ranked(index, chats, terms, mode, now, shown)
    room = max(shown - len(core), 0)
    more = _ranked(index, wider, terms, "or", now, room)[:room] if room and wider else []
    return Retrieved(core, mode, more, proof, max(proof.scores.values(), default=0.0))


def near(
    index: SearchIndex,
    semantic: Sequence[ChatKey],
    filters: Filters,
    chats: dict[ChatKey, Candidate] | None = None,
    weight: float = SEMANTIC_WEIGHT_AND,
) -> dict[ChatKey, Candidate]:
    """The semantic leg's chats the filters allow, ranked in its order: those in
    `chats` get their rank there, the others are new candidates (returned)."""
    known = chats if chats is not None else {}
    new = _load(index, [key for key in semantic if key not in known], filters)
    rank = 0
    for key in semantic:
        chat = known.get(key) or new.get(key)
        if chat is None:
            continue
        rank += 1
        chat.semantic_rank = rank
        chat.semantic_weight = weight
    return new


def lexical_order(chats: Sequence[Candidate]) -> list[Candidate]:
    """The chats the words found, ranked without the semantic list: the order the
    gate judges (the fused score less the semantic list's share)."""
    found = [
        c
        for c in chats
        if c.entry_rank is not None or c.digest_rank is not None or c.evidence_rank is not None
    ]

    def words_only(chat: Candidate) -> tuple[float, float, ChatKey]:
        share = 0.0
        if chat.semantic_rank is not None:
            share = chat.semantic_weight / (RRF_K + chat.semantic_rank)
        return _order(chat, chat.score - share)

    return sorted(found, key=words_only, reverse=True)


def meaning_only(
    index: SearchIndex, semantic: Sequence[ChatKey], filters: Filters, now: datetime
) -> list[Candidate]:
    """When no typed word is in the index: the semantic leg's chats alone, scored
    like any fused list (with the recency bonus), best first."""
    chats = list(near(index, semantic, filters, weight=SEMANTIC_WEIGHT_OR).values())
    for chat in chats:
        chat.score = _base_score(chat, now)
    chats.sort(key=_order, reverse=True)
    return chats


def hits(index: SearchIndex, chats: Sequence[Candidate], terms: Sequence[Term]) -> list[ChatHit]:
    """Chat hits with snippets (one snippet per returned chat) and the entry each
    snippet shows, where the chat opens (none: only the digest matched)."""
    shown = index.shown([(c.key, c.best_entry) for c in chats], terms) if chats else []
    return [
        _hit(c, terms, snippet, landing) for c, (snippet, landing) in zip(chats, shown, strict=True)
    ]


def recent(index: SearchIndex, filters: Filters) -> list[Candidate]:
    """With nothing to match: the chats the filters allow, latest activity first."""
    kept = {c.key: c for c in map(_chat, index.all_chats()) if _passes(c, filters)}
    chats = list(_without_excluded(index, kept, filters.excluded).values())
    chats.sort(key=lambda c: (_stamp(c), c.key), reverse=True)
    return chats
