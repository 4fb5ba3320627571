"""The gate: confident only for a clear winner that matched every word, and
each way of not being confident says so."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from bench_modules import load
from sessionforest import Forest
from sessionforest.search.gate import LEAD
from sessionforest.search.results import ChatHit, GateReason
from sessionforest.search.terms import Term, TermChoice

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)
space = load("gate_space")  # the gate's search space (benchmarks/gate_space.py)


def judged(forest: Forest, query: str) -> Any:
    """What the gate judged in `forest.search_chats(query, now=NOW)`."""
    return space.searched(forest, query, NOW)[1]


def test_the_only_chat_that_matches_is_confident(forest: Forest, make_chat: Any) -> None:
    sid = make_chat("Recipe scaler", ["scale a recipe to eleven servings"])
    make_chat("Other", ["nothing to see"])
    result = forest.search_chats("recipe scaler", now=NOW)
    assert result.confident
    assert result.reason == GateReason.ONLY_HIT
    assert result.top is not None and result.top.session_id == sid
    assert "only chat" in result.detail


def test_a_clear_leader_matching_every_word_twice_is_confident(
    forest: Forest, make_chat: Any
) -> None:
    # The leader matches in its digest and its entries; the others lack the rarest word.
    leader = make_chat("Postgres vacuum bloat", ["postgres vacuum bloat again", "tune vacuum"])
    for i in range(3):
        make_chat(f"Misc {i}", ["a", "b", "c", "d", "some postgres vacuum notes"])
    result = forest.search_chats("postgres vacuum bloat", now=NOW)
    assert result.top is not None and result.top.session_id == leader
    assert result.top.matches >= 2
    # The lead is measured on chat-level evidence (search.gate.RULE), not fused scores.
    assert result.hits[0].evidence >= 2 * result.hits[1].evidence
    assert (result.confident, result.reason) == (True, GateReason.CLEAR_LEAD)


def test_an_equal_spread_of_the_words_is_no_lead(forest: Forest, make_chat: Any) -> None:
    # Every chat holds every word about as often, in its title and its entries:
    # a shorter chat ranks first, but that is no lead.
    leader = make_chat("Postgres vacuum bloat", ["postgres vacuum bloat again", "tune vacuum"])
    for i in range(3):
        make_chat(
            f"Postgres vacuum bloat notes {i}",
            ["a", "postgres vacuum bloat again", "b", "tune vacuum", "c"],
        )
    result = forest.search_chats("postgres vacuum bloat", now=NOW)
    assert result.top is not None and result.top.session_id == leader
    assert (result.confident, result.reason) == (False, GateReason.NARROW_LEAD)
    assert "evidence" in result.detail


def test_a_lead_needs_the_top_chat_to_be_about_the_words(forest: Forest, make_chat: Any) -> None:
    # The leader holds every word, but deep inside, not in its title or opening.
    make_chat("Database chores", ["hello", "x", "y", "postgres vacuum bloat", "vacuum again"])
    for i in range(3):
        make_chat(f"Misc {i}", ["a", "b", "c", "d", "some postgres vacuum notes"])
    result = forest.search_chats("postgres vacuum bloat", now=NOW)
    assert (result.confident, result.reason) == (False, GateReason.NOT_ABOUT)
    facts = judged(forest, "postgres vacuum bloat")
    assert space.rejudge(facts, space.GateRule(about=False))[:2] == (True, GateReason.CLEAR_LEAD)


def test_each_lead_measure_reads_its_own_scores() -> None:
    choice = TermChoice((Term("a", ("a",), 1, 0), Term("b", ("b",), 1, 0)), (), (), ())
    top = ChatHit("s", "t", 0.032, "active", "", "", "", "", ("a", "b"), 2, True, 4.0)
    # Fused scores 1.03x apart; evidence 4x; the next chat misses "b".
    nxt = ChatHit("n", "t", 0.031, "active", "", "", "", "", ("a",), 2, True, 1.0)
    fused = space.GateRule(space.LeadMeasure.FUSED, about=False)
    assert space.judge(choice, top, nxt, rule=fused)[:2] == (False, GateReason.NARROW_LEAD)
    evidence = space.GateRule(space.LeadMeasure.EVIDENCE, 2.0, about=False)
    assert space.judge(choice, top, nxt, rule=evidence)[:2] == (True, GateReason.CLEAR_LEAD)
    equal = ChatHit("n", "t", 0.031, "active", "", "", "", "", ("a",), 2, True, 4.0)
    assert space.judge(choice, top, equal, rule=evidence)[:2] == (False, GateReason.NARROW_LEAD)
    coverage = space.GateRule(space.LeadMeasure.COVERAGE, 2.0, about=False)
    verdict = space.judge(choice, top, equal, rule=coverage)
    assert verdict[:2] == (True, GateReason.CLEAR_LEAD) and "misses" in verdict[2]


def test_twins_of_one_age_are_a_narrow_lead(forest: Forest, make_chat: Any) -> None:
    make_chat("Kanji flashcards", ["build a kanji deck"], age_days=3)
    make_chat("Kanji flashcards (earlier)", ["build a kanji deck"], age_days=4)
    result = forest.search_chats("kanji flashcards", now=NOW)
    assert (result.confident, result.reason) == (False, GateReason.NARROW_LEAD)
    assert f"{LEAD}x" in result.detail


def test_twins_equal_on_the_words_are_not_settled_by_recency(
    forest: Forest, make_chat: Any
) -> None:
    # Equal on the words, the older one idle far longer: an earlier attempt, or
    # the original of a follow-up; the words cannot say which was meant.
    newer = make_chat("Kanji flashcards", ["build a kanji deck"], age_days=3)
    make_chat("Kanji flashcards (earlier)", ["build a kanji deck"], age_days=40)
    result = forest.search_chats("kanji flashcards", now=NOW)
    assert result.top is not None and result.top.session_id == newer
    assert (result.confident, result.reason) == (False, GateReason.NARROW_LEAD)
    # A rule of the search space with recency would be sure of the newer.
    facts = judged(forest, "kanji flashcards")
    with_recency = replace(space.RULE, recency=2.0)
    sure = space.rejudge(facts, with_recency)
    assert sure[:2] == (True, GateReason.CLEAR_LEAD) and "recency" in sure[2]


def _dated(sid: str, terms: tuple[str, ...], evidence: float, days: float) -> ChatHit:
    at = (NOW - timedelta(days=days)).isoformat()
    return ChatHit(sid, "t", 0.03, "active", "", "", at, at, terms, 2, True, evidence)


def test_a_recency_lead_needs_every_chat_as_strong_on_the_words_to_be_older() -> None:
    choice = TermChoice((Term("a", ("a",), 1, 0), Term("b", ("b",), 1, 0)), (), (), ())
    rule = replace(space.RULE, recency=2.0)
    top = _dated("s", ("a", "b"), 2.0, 1)
    old = _dated("o", ("a", "b"), 2.0, 30)
    sure = space.judge(choice, top, old, now=NOW, rule=rule)
    assert sure[:2] == (True, GateReason.CLEAR_LEAD) and "recency" in sure[2]
    # No clock, no recency.
    assert space.judge(choice, top, old, rule=rule)[:2] == (False, GateReason.NARROW_LEAD)
    # A rival shown further down, as strong and as new, spoils it.
    young = _dated("y", ("a", "b"), 2.0, 1.5)
    spoilt = space.judge(choice, top, old, rivals=(young,), now=NOW, rule=rule)
    assert spoilt[:2] == (False, GateReason.NARROW_LEAD)
    # A rival the words lead by 1.5x does not.
    weak = _dated("w", ("a",), 1.0, 1.5)
    assert space.judge(choice, top, old, rivals=(weak,), now=NOW, rule=rule)[0]
    # An older chat holding more evidence is never led by recency.
    stronger = _dated("o", ("a", "b"), 2.2, 30)
    assert space.judge(choice, top, stronger, now=NOW, rule=rule)[:2] == (
        False,
        GateReason.NARROW_LEAD,
    )
    # Nor is anything when a date cannot be read.
    undated = ChatHit("s", "t", 0.03, "active", "", "", "", "", ("a", "b"), 2, True, 2.0)
    assert space.judge(choice, undated, old, now=NOW, rule=rule)[:2] == (
        False,
        GateReason.NARROW_LEAD,
    )


def test_a_top_chat_with_a_single_match_is_not_enough(forest: Forest, make_chat: Any) -> None:
    make_chat("a", ["x", "y", "penguin"], age_days=1)
    make_chat("b", ["x", "y", "penguin"], age_days=2)
    result = forest.search_chats("penguin", now=NOW)
    assert result.top is not None and result.top.matches == 1
    assert (result.confident, result.reason) == (False, GateReason.SINGLE_MATCH)


def test_an_unknown_word_is_never_confident(forest: Forest, make_chat: Any) -> None:
    make_chat("Recipe scaler", ["scale a recipe"])
    result = forest.search_chats("recipe frobnicator", now=NOW)
    assert len(result.hits) == 1
    assert (result.confident, result.reason) == (False, GateReason.UNKNOWN_TERMS)
    assert "frobnicator" in result.detail


def test_a_prefix_match_is_never_confident(forest: Forest, make_chat: Any) -> None:
    make_chat("Kubernetes", ["kubernetes probes"])
    result = forest.search_chats("kube", now=NOW)
    assert len(result.hits) == 1
    assert (result.confident, result.reason) == (False, GateReason.PREFIX_TERMS)


def test_a_top_chat_missing_a_word_is_not_confident(forest: Forest, make_chat: Any) -> None:
    make_chat("Kanji flashcards", ["kanji deck", "kanji strokes"])
    make_chat("Sushi", ["sushi rice"])
    result = forest.search_chats("kanji sushi", now=NOW)
    assert result.mode == "or"
    assert (result.confident, result.reason) == (False, GateReason.TOP_MISSES_TERMS)
    assert result.top is not None
    [missing] = {"kanji", "sushi"} - set(result.top.matched_terms)
    assert result.detail == f"the top chat does not match {missing}"


def test_no_hits_and_no_terms_say_so(forest: Forest, make_chat: Any) -> None:
    make_chat("Kanji", ["kanji deck"], age_days=40)
    result = forest.search_chats("kanji yesterday", now=NOW)
    assert (result.confident, result.reason) == (False, GateReason.NO_HITS)
    assert result.hits == result.outside_window  # only chats from outside the window
    result = forest.search_chats("the and of", now=NOW)
    assert (result.confident, result.reason) == (False, GateReason.NO_TERMS)
    result = forest.search_chats("last month", now=NOW)
    assert len(result.hits) == 1  # filters alone list chats, but never confidently
    assert (result.confident, result.reason) == (False, GateReason.NO_TERMS)


def _hit(score: float, terms: tuple[str, ...], entries: int, digest: bool) -> ChatHit:
    return ChatHit("s", "t", score, "active", "", "", "", "", terms, entries, digest)


def _choice(*words: str) -> TermChoice:
    return TermChoice(tuple(Term(w, (w,), 1, 0) for w in words), (), (), ())


def test_the_literal_fused_rule_leads_by_one_and_a_half() -> None:
    fused = space.GateRule(space.LeadMeasure.FUSED, 1.5, about=False)
    choice = _choice("a", "b")
    top = _hit(0.03, ("a", "b"), 2, False)
    assert space.judge(choice, top, _hit(0.02, ("a",), 1, False), rule=fused)[:2] == (
        True,
        GateReason.CLEAR_LEAD,
    )
    assert space.judge(choice, top, _hit(0.0201, ("a",), 1, False), rule=fused)[:2] == (
        False,
        GateReason.NARROW_LEAD,
    )
    assert space.judge(choice, top, None, rule=fused)[:2] == (True, GateReason.ONLY_HIT)
    one_match = _hit(0.03, ("a", "b"), 0, True)
    assert (
        space.judge(choice, one_match, _hit(0.001, (), 1, False), rule=fused)[1]
        == GateReason.SINGLE_MATCH
    )
    assert space.judge(choice, one_match, None, rule=fused)[1] == GateReason.ONLY_HIT


def test_one_word_never_singles_out_a_chat_when_matched_words_are_counted() -> None:
    # Two chats about different people called John: the top one mentions him
    # twelve times and leads on evidence, but one word is all either matched.
    john = _choice("john")
    top = ChatHit("s", "t", 0.068, "active", "", "", "", "", ("john",), 12, True, 2.0)
    other = ChatHit("n", "t", 0.067, "active", "", "", "", "", ("john",), 7, True, 0.9)
    by_entries = space.GateRule(counted=space.Counted.ENTRIES)
    assert space.judge(john, top, other, rule=by_entries)[:2] == (True, GateReason.CLEAR_LEAD)
    by_words = space.GateRule(counted=space.Counted.WORDS)
    assert space.RULE.counted is space.Counted.WORDS
    assert space.judge(john, top, other, rule=by_words)[:2] == (False, GateReason.SINGLE_MATCH)
    # Two matched words and the same lead: sure under both ways of counting.
    two = _choice("john", "hiking")
    top2 = ChatHit("s", "t", 0.068, "active", "", "", "", "", ("john", "hiking"), 12, True, 2.0)
    assert space.judge(two, top2, other, rule=by_words)[:2] == (True, GateReason.CLEAR_LEAD)
    # Being the only chat that matched still needs no second word.
    assert space.judge(john, top, None, rule=by_words)[:2] == (True, GateReason.ONLY_HIT)


def test_result_json_carries_the_verdict(forest: Forest, make_chat: Any) -> None:
    sid = make_chat("Recipe scaler", ["scale a recipe"])
    doc = forest.search_chats("recipe", now=NOW).to_json()
    assert doc["confident"] is True and doc["reason"] == "only-hit"
    assert doc["hits"][0]["session_id"] == sid
    assert set(doc) >= {"confident", "reason", "detail", "hits", "unknown_terms", "window"}


# --- the library's gate is the calibrated point of the benchmark's search space -----

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_WORDS = ("a", "b", "c")
_words = st.lists(st.sampled_from(_WORDS), unique=True, max_size=3).map(tuple)
_evidence = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0])
_age = st.sampled_from([0.5, 1, 2, 3, 5, 30, None])


@st.composite
def _chat(draw: st.DrawFn) -> ChatHit:
    days = draw(_age)
    at = "" if days is None else (NOW - timedelta(days=days)).isoformat()
    return ChatHit(
        draw(st.sampled_from(["s", "n", "o"])), "t", draw(st.floats(0, 0.05)), "active",
        "", "", at, at, draw(_words), draw(st.integers(0, 3)), draw(st.booleans()),
        draw(_evidence),
    )  # fmt: skip


@st.composite
def _facts(draw: st.DrawFn) -> Any:
    kept = tuple(Term(w, (w,), 1, 0) for w in draw(_words))
    unknown = draw(st.sampled_from([(), ("zz",)]))
    prefixed = draw(st.sampled_from([(), ("pre",)]))
    dropped = draw(st.sampled_from([(), ("d",)]))
    extra = tuple(Term(d, (d,), 1, 0) for d in dropped if draw(st.booleans()))
    return space.GateInput(
        TermChoice(kept, unknown, prefixed, dropped, extra),
        draw(st.none() | _chat()),
        draw(st.none() | _chat()),
        top_misses_dropped=draw(st.sampled_from([(), ("d",)])),
        only_hit_holds=draw(st.booleans()),
        outside_window=draw(st.sampled_from([None, "this week"])),
        rivals=tuple(draw(st.lists(_chat(), max_size=2))),
        top_about=draw(st.booleans()),
        best_evidence=draw(_evidence),
        now=draw(st.sampled_from([None, NOW])),
    )


@settings(max_examples=600, deadline=None)
@given(_facts())
def test_the_librarys_gate_says_what_the_search_space_says_under_its_rule(facts: Any) -> None:
    assert facts.judge() == space.rejudge(facts, space.RULE)
