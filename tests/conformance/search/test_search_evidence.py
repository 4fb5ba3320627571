"""Find-a-chat refinements: possessives, chat-level evidence, the window retry,
the stricter gate, and recall snippets that skip terms which matched nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bench_modules import load
from sessionforest import Forest
from sessionforest.search import retrieve
from sessionforest.search.gate import judge
from sessionforest.search.query import parse_query, split_words
from sessionforest.search.results import ChatHit, GateReason
from sessionforest.search.terms import Term, TermChoice

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)
space = load("gate_space")  # the gate's search space (benchmarks/gate_space.py)


def judged(forest: Forest, query: str) -> Any:
    """What the gate judged in `forest.search_chats(query, now=NOW)`."""
    return space.searched(forest, query, NOW)[1]


FILLER = ["hello there", "hi, how can I help"]  # the digest's opening exchange


def found(result: Any) -> list[str]:
    return [hit.session_id for hit in result.hits]


def inside(result: Any) -> list[str]:
    """The hits inside the query's time window (those before any from outside it)."""
    outside = {h.session_id for h in result.outside_window}
    return [h.session_id for h in result.hits if h.session_id not in outside]


def _assert_or_ranks(forest: Forest, make_chat: Any, query: str, first_two: list[str]) -> None:
    """With three more chats holding only "glacier" (so AND finds too few and
    relaxes to OR), `query` ranks `first_two` first, on more evidence."""
    for i in range(3):
        make_chat(f"other {i}", [*FILLER, "glacier"])
    result = forest.search_chats(query, now=NOW)
    assert result.mode == "or"
    assert found(result)[:2] == first_two
    assert result.hits[0].evidence > result.hits[1].evidence


# --- T0: possessives -------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("Caroline's", ["caroline"]),
        ("caroline’s", ["caroline"]),  # typographic apostrophe
        ("CAROLINEʼS", ["caroline"]),  # modifier-letter apostrophe
        ("James'", ["james"]),
        ("(Mel's)", ["mel"]),
        ("o'brien", ["o'brien"]),  # an apostrophe inside a word stays
        ("it’s he's", ["it's", "he's"]),  # stopword contractions stay whole
    ],
)
def test_possessive_s_is_stripped_before_words_are_built(typed: str, words: list[str]) -> None:
    assert split_words(typed) == words


def test_a_possessive_searches_the_plain_name(forest: Forest, make_chat: Any) -> None:
    sid = make_chat("Trip", [*FILLER, "Caroline went to the lighthouse"])
    make_chat("Other", [*FILLER, "a lighthouse keeper"])
    assert parse_query("Caroline's lighthouse", NOW).words == ("caroline", "lighthouse")
    result = forest.search_chats("Caroline's lighthouse", now=NOW)
    assert result.terms == ("caroline", "lighthouse")
    assert found(result)[0] == sid


# --- T1: chat-level evidence -----------------------------------------------------


def test_evidence_spread_over_entries_beats_one_strong_entry(
    forest: Forest, make_chat: Any
) -> None:
    # No entry holds both words (OR); one chat has both, in separate entries,
    # the others repeat one word in a single dense entry.
    spread = make_chat("A", [*FILLER, "we rented a kayak", "ok", "then saw the lighthouse"])
    for i in range(4):
        make_chat(f"Dense {i}", [*FILLER, "kayak kayak kayak kayak"], age_days=0.5)
    result = forest.search_chats("kayak lighthouse", now=NOW)
    assert result.mode == "or"
    assert found(result)[0] == spread
    assert result.hits[0].evidence > result.hits[1].evidence > 0
    assert set(result.hits[0].matched_terms) == {"kayak", "lighthouse"}


def test_evidence_ties_do_not_reorder_chats(forest: Forest, make_chat: Any) -> None:
    make_chat("a", [*FILLER, "walrus"], age_days=3)
    make_chat("b", [*FILLER, "walrus"], age_days=2)
    result = forest.search_chats("walrus", now=NOW)
    first, second = result.hits
    assert first.evidence == second.evidence > 0
    # Equal evidence shares a rank: the evidence list adds the same to both. What
    # parts them is the entry list's one rank step (equal entries come newest
    # first) and a day's recency, less than a second rank step would add.
    rank_step = 1 / (retrieve.RRF_K + 1) - 1 / (retrieve.RRF_K + 2)
    day = retrieve.RECENCY_BONUS * (1 - 0.5 ** (1 / retrieve.RECENCY_HALF_LIFE))
    assert (first.title, second.title) == ("b", "a")
    assert first.score - second.score < retrieve.ENTRY_WEIGHT * rank_step + day
    assert day < retrieve.EVIDENCE_WEIGHT_AND * rank_step


# --- the window retry ------------------------------------------------------------


def test_an_empty_window_is_retried_once_without_it(forest: Forest, make_chat: Any) -> None:
    sid = make_chat("Workshop", [*FILLER, "Caroline attended a pottery workshop"], age_days=90)
    result = forest.search_chats("what workshop did Caroline attend recently?", now=NOW)
    assert result.window is not None and result.window.phrase == "recently"
    assert result.hits == result.outside_window
    assert [h.session_id for h in result.outside_window] == [sid]
    assert (result.confident, result.reason) == (False, GateReason.NO_HITS)
    assert "recently" in result.detail and "any time" in result.detail
    doc = result.to_json()
    assert doc["outside_window"][0]["session_id"] == sid


def test_a_short_window_list_is_topped_up_from_any_time_after_it(
    forest: Forest, make_chat: Any
) -> None:
    old = make_chat("Old", [*FILLER, "pottery workshop"], age_days=90)
    recent = make_chat("New", [*FILLER, "pottery workshop", "pottery"], age_days=2)
    newer = make_chat("Newer", [*FILLER, "pottery workshop"], age_days=1)
    # The chat outside the window ranks after every chat inside it, and is marked.
    result = forest.search_chats("pottery workshop recently", now=NOW)
    assert found(result)[:2] in ([recent, newer], [newer, recent])
    assert found(result)[2:] == [old]
    assert [h.session_id for h in result.outside_window] == [old]
    # The gate judges the chats inside the window only: the same as without the top-up.
    gate = judged(forest, "pottery workshop recently")
    assert gate is not None and gate.top is not None and gate.runner_up is not None
    assert {gate.top.session_id, gate.runner_up.session_id} == {recent, newer}
    assert gate.rivals == ()
    # A window holding as many chats as asked for is not topped up.
    result = forest.search_chats("pottery workshop recently", now=NOW, limit=2)
    assert len(found(result)) == 2 and old not in found(result)
    assert result.outside_window == ()


# --- the gate --------------------------------------------------------------------


def test_an_only_hit_found_by_relaxing_to_or_is_confident_when_nothing_holds_more(
    forest: Forest, make_chat: Any
) -> None:
    # No single entry holds both words; its entries hold them between them.
    sid = make_chat("A", [*FILLER, "we rented a kayak", "ok", "then saw the lighthouse"])
    result = forest.search_chats("kayak lighthouse", now=NOW)
    assert result.mode == "or" and found(result) == [sid]
    assert set(result.hits[0].matched_terms) == {"kayak", "lighthouse"}
    # The calibrated rule (only hit "best"): no chat anywhere holds more of the words.
    assert (result.confident, result.reason) == (True, GateReason.ONLY_HIT)
    # Under only hit "whole" one entry would have to hold every word.
    facts = judged(forest, "kayak lighthouse")
    whole = space.GateRule(counted=space.Counted.WORDS, only_hit=space.OnlyHit.WHOLE)
    assert space.rejudge(facts, whole)[:2] == (False, GateReason.ONLY_HIT_RELAXED)


def test_a_filtered_down_only_hit_is_unsure_when_a_chat_left_out_holds_more(
    forest: Forest, make_chat: Any
) -> None:
    # The window leaves one chat, its words spread out; an older chat holds
    # them together and more often.
    sid = make_chat("A", [*FILLER, "we rented a kayak", "ok", "then saw the lighthouse"])
    make_chat("B", [*FILLER, "the kayak by the lighthouse", "kayak", "lighthouse"], age_days=90)
    result = forest.search_chats("kayak lighthouse this week", now=NOW)
    assert result.mode == "or" and inside(result) == [sid]  # the other chat follows it
    assert (result.confident, result.reason) == (False, GateReason.ONLY_HIT_RELAXED)
    assert "left out" in result.detail
    facts = judged(forest, "kayak lighthouse this week")
    covered = space.GateRule(counted=space.Counted.WORDS, only_hit=space.OnlyHit.COVERED)
    assert space.rejudge(facts, covered)[:2] == (True, GateReason.ONLY_HIT)


def test_a_filtered_down_only_hit_is_confident_when_nothing_left_out_holds_more(
    forest: Forest, make_chat: Any
) -> None:
    sid = make_chat("A", [*FILLER, "we rented a kayak", "ok", "then saw the lighthouse"])
    make_chat("B", [*FILLER, "a kayak"], age_days=90)
    result = forest.search_chats("kayak lighthouse this week", now=NOW)
    assert result.mode == "or" and inside(result) == [sid]  # the other chat follows it
    assert (result.confident, result.reason) == (True, GateReason.ONLY_HIT)


def test_an_only_hit_matching_every_word_in_one_entry_stays_confident(
    forest: Forest, make_chat: Any
) -> None:
    sid = make_chat("A", [*FILLER, "we saw the lighthouse from a kayak"])
    result = forest.search_chats("kayak lighthouse", now=NOW)
    assert result.mode == "or"  # fewer than four chats under AND
    assert found(result) == [sid]
    assert (result.confident, result.reason) == (True, GateReason.ONLY_HIT)


def _hit(score: float, terms: tuple[str, ...], evidence: float = 0.0) -> ChatHit:
    return ChatHit("s", "t", score, "active", "", "", "", "", terms, 2, True, evidence)


def test_every_typed_word_counts_not_only_the_rarest_six() -> None:
    kept = tuple(Term(w, (w,), 1, 0) for w in "abcdef")
    extra = (Term("g", ("g",), 50, 0),)
    choice = TermChoice(kept, (), (), ("g",), extra)
    top = _hit(0.1, tuple("abcdef"))
    assert judge(choice, top, None)[:2] == (True, GateReason.ONLY_HIT)
    verdict = judge(choice, top, None, top_misses_dropped=["g"])
    assert verdict[:2] == (False, GateReason.TOP_MISSES_TERMS) and "g" in verdict[2]
    # Words beyond MAX_WORDS were never looked up: they can never be confirmed.
    unchecked = TermChoice(kept, (), (), ("g", "h"), extra)
    assert judge(unchecked, top, None)[:2] == (False, GateReason.TOP_MISSES_TERMS)


def test_the_top_chat_is_checked_against_dropped_words(forest: Forest, make_chat: Any) -> None:
    words = "alpha bravo charlie delta echo foxtrot golf"
    make_chat("A", [*FILLER, "alpha bravo charlie delta echo foxtrot"])
    for i in range(3):
        make_chat(f"G{i}", [*FILLER, "golf"])  # golf is the commonest: dropped
    result = forest.search_chats(words, now=NOW)
    assert result.dropped_terms == ("golf",)
    assert (result.confident, result.reason) == (False, GateReason.TOP_MISSES_TERMS)
    assert "golf" in result.detail


def test_a_lead_the_next_chats_entries_contest_is_not_confident() -> None:
    choice = TermChoice((Term("a", ("a",), 1, 0), Term("b", ("b",), 1, 0)), (), (), ())
    top = _hit(0.07, ("a", "b"), evidence=2.0)
    fused = space.GateRule(space.LeadMeasure.FUSED, 1.5, about=False)
    assert space.judge(choice, top, _hit(0.04, ("a", "b"), evidence=1.0), rule=fused)[:2] == (
        True,
        GateReason.CLEAR_LEAD,
    )
    verdict = space.judge(choice, top, _hit(0.04, ("a", "b"), evidence=3.0), rule=fused)
    assert verdict[:2] == (False, GateReason.CONTESTED_LEAD)


# --- T1: whole-chat evidence as a BM25F over entries and digest -------------------


def test_chat_sizes_are_the_chats_lengths_in_entries(forest: Forest, make_chat: Any) -> None:
    short = make_chat("Short", [*FILLER])
    long = make_chat("Long", [*FILLER, *(f"line {i}" for i in range(8))])
    forest._backend.catch_up()  # every append indexed first
    with forest._backend.search() as index:
        nums = {row.session_id: row.key for row in index.all_chats()}
        sizes = index.chat_sizes([nums[short], nums[long]])
    assert sizes == {nums[short]: 2, nums[long]: 10}


def test_a_short_chat_holding_a_word_as_often_beats_a_long_one(
    forest: Forest, make_chat: Any
) -> None:
    # Same matching entries, same digest; only the length differs.
    padding = [f"unrelated chatter number {i}" for i in range(40)]
    long = make_chat("L", [*FILLER, "the glacier hike", *padding, "the fjord cruise"], age_days=1)
    short = make_chat("S", [*FILLER, "the glacier hike", "the fjord cruise"], age_days=2)
    _assert_or_ranks(forest, make_chat, "glacier fjord", [short, long])


def test_a_digest_holding_a_word_counts_as_evidence_after_an_or(
    forest: Forest, make_chat: Any
) -> None:
    # No entry holds both words; the title of one chat holds the second.
    titled = make_chat("Lighthouse trip", [*FILLER, "we rented a kayak"], age_days=3)
    plain = make_chat("Trip", [*FILLER, "we rented a kayak"], age_days=1)
    for i in range(3):
        make_chat(f"other {i}", [*FILLER, "kayak"], age_days=5)
    result = forest.search_chats("kayak lighthouse", now=NOW)
    assert result.mode == "or"
    assert found(result)[0] == titled
    assert plain in found(result)
    assert result.hits[0].evidence > result.hits[1].evidence


def test_a_lead_any_shown_chats_entries_contest_is_not_confident() -> None:
    choice = TermChoice((Term("a", ("a",), 1, 0), Term("b", ("b",), 1, 0)), (), (), ())
    top = _hit(0.07, ("a", "b"), evidence=2.0)
    runner_up = _hit(0.04, ("a", "b"), evidence=1.0)
    assert judge(choice, top, runner_up, rivals=[_hit(0.03, ("a",), evidence=1.5)])[:2] == (
        True,
        GateReason.CLEAR_LEAD,
    )
    verdict = judge(choice, top, runner_up, rivals=[_hit(0.03, ("a", "b"), evidence=2.5)])
    assert verdict[:2] == (False, GateReason.CONTESTED_LEAD)


def test_entry_sequences_are_where_a_term_sits_in_the_chats_asked_about(
    forest: Forest, make_chat: Any
) -> None:
    one = make_chat("One", [*FILLER, "a kayak", "nothing", "kayak again"])
    two = make_chat("Two", [*FILLER, "kayak"])
    three = make_chat("Three", [*FILLER, "kayak"])
    forest._backend.catch_up()  # every append indexed first
    with forest._backend.search() as index:
        nums = {row.session_id: row.key for row in index.all_chats()}
        [term] = index.tokens(["kayak"])
        kayak = Term("kayak", term, *index.frequency(term[0]))
        found = index.entry_sequences(kayak, [nums[one], nums[two]], 100)
        assert index.entry_sequences(kayak, [], 100) == {}
    # Sequences count from 1; FILLER takes 1 and 2. Chat three was not asked about.
    assert found == {nums[one]: [3, 5], nums[two]: [3]}
    assert nums[three] not in found


def test_chat_evidence_and_entry_sequences_each_answer_what_each_list_answers(
    forest: Forest, make_chat: Any
) -> None:
    one = make_chat("Kayak trip", [*FILLER, "a kayak", "the fjord", "kayak again"])
    two = make_chat("Two", [*FILLER, "kayak on the fjord"])
    make_chat("Fjord notes", [*FILLER, "nothing here"])
    forest._backend.catch_up()  # every append indexed first
    with forest._backend.search() as index:
        nums = {row.session_id: row.key for row in index.all_chats()}
        terms = []
        for word in ("kayak", "fjord", "nowhereatall"):
            [stems] = index.tokens([word])
            terms.append(Term(word, stems, *index.frequency(stems[0])) if stems else None)
        asked = [t for t in terms if t is not None]
        lists = index.chat_evidence(asked, 100)
        assert lists.chats == index.chat_count()
        assert lists.entries == [index.entry_counts(t, 100) for t in asked]
        digests = [
            index.digest_matches([t], conjunctive=False, ranked=False, limit=100)
            if t.digest_df
            else []
            for t in asked
        ]
        assert [sorted(d) for d in lists.digests] == [sorted(d) for d in digests]
        matched = {n for counts in lists.entries for n in counts} | {
            n for d in lists.digests for n in d
        }
        assert lists.sizes == index.chat_sizes(matched)
        assert lists.entries[0] == {nums[one]: 2, nums[two]: 1}
        assert index.chat_evidence([], 100).entries == []
        chats = [nums[one], nums[two]]
        each = index.entry_sequences_each(asked, chats, 100)
        assert each == [index.entry_sequences(t, chats, 100) for t in asked]
        assert each[0] == {nums[one]: [3, 5], nums[two]: [3]}
        assert index.entry_sequences_each(asked, [], 100) == [{} for _ in asked]


def test_a_chat_whose_one_exchange_holds_every_word_beats_scattered_mentions(
    forest: Forest, make_chat: Any
) -> None:
    # Same words, same counts, same length: one chat says them together.
    padding = [f"unrelated chatter number {i}" for i in range(12)]
    scattered = make_chat(
        "A", [*FILLER, "the glacier", *padding, "a fjord", *padding, "the ferry"], age_days=1
    )
    together = make_chat(
        "B", [*FILLER, "the glacier", "a fjord", "the ferry", *padding, *padding], age_days=2
    )
    _assert_or_ranks(forest, make_chat, "glacier fjord ferry", [together, scattered])
