"""Finding a chat: T0 terms, T1 retrieval and fusion, filters and status marks."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import Forest, InvalidArgument
from sessionforest.search import retrieve

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)
FILLER = ["let me check the logs", "running the tests now", "the build is green"]


def found(result: Any) -> list[str]:
    return [h.session_id for h in result.hits]


def inside(result: Any) -> list[str]:
    """The hits inside the query's time window (those before any from outside it)."""
    outside = {h.session_id for h in result.outside_window}
    return [h.session_id for h in result.hits if h.session_id not in outside]


def test_results_are_chats_with_title_status_harness_and_times(
    forest: Forest, make_chat: Any
) -> None:
    sid = make_chat(
        "Kanji flashcards",
        ["build a kanji deck", "stroke order", *FILLER],
        harness="claude",
        age_days=3,
    )
    result = forest.search_chats("kanji", now=NOW)
    [hit] = result.hits
    assert (hit.session_id, hit.title, hit.status, hit.harness) == (
        sid,
        "Kanji flashcards",
        "active",
        "claude",
    )
    assert hit.created_at == "2026-09-27T15:00:00.000Z"
    assert hit.updated_at == "2026-09-27T15:00:04.000Z"
    assert hit.snippet == "build a **kanji** deck"
    assert hit.matched_terms == ("kanji",)
    assert hit.entry_matches == 1 and hit.digest_match
    assert result.terms == ("kanji",)
    assert result.window is None and result.unknown_terms == ()


def test_ended_and_archived_chats_are_included_and_marked(forest: Forest, make_chat: Any) -> None:
    a = make_chat("Otter notes", ["otters hold hands"])
    b = make_chat("More otters", ["otters sleep"])
    c = make_chat("Otter archive", ["otters eat"])
    forest.set_status(b, "ended")
    forest.set_status(c, "archived")
    statuses = {h.session_id: h.status for h in forest.search_chats("otters", now=NOW).hits}
    assert statuses == {a: "active", b: "ended", c: "archived"}


def test_hidden_and_quarantined_chats_are_never_found(
    forest: Forest, harness: Harness, make_chat: Any
) -> None:
    visible = make_chat("Visible", ["walrus facts"])
    make_chat("Worker", ["walrus facts"], visibility="hidden")
    damaged = make_chat("Damaged", ["walrus facts"])
    harness.set_quarantine(forest, damaged, "cycle")
    assert found(forest.search_chats("walrus", now=NOW)) == [visible]


def test_titles_and_opening_messages_weigh_more_than_later_entries(
    forest: Forest, make_chat: Any
) -> None:
    late = make_chat("Misc", [*FILLER, "by the way the tauri window", "ok"])
    titled = make_chat("Tauri window focus", ["set focus on the tauri window", *FILLER])
    assert found(forest.search_chats("tauri window", now=NOW)) == [titled, late]


def test_and_first_then_or_below_four_chats(forest: Forest, make_chat: Any) -> None:
    both = [make_chat(f"c{i}", ["alpha beta together"]) for i in range(4)]
    only = make_chat("alpha only", ["alpha alone"])
    result = forest.search_chats("alpha beta", now=NOW)
    assert result.mode == "and"
    assert set(found(result)[:4]) == set(both)
    # Fewer AND chats than asked for: the OR's other chats follow every AND chat.
    assert found(result)[4:] == [only]
    assert set(found(forest.search_chats("alpha beta", now=NOW, limit=4))) == set(both)
    # Three chats with both words are too few: OR also brings the partial one.
    forest2 = [make_chat(f"d{i}", ["gamma delta together"]) for i in range(3)]
    partial = make_chat("gamma only", ["gamma alone"])
    result = forest.search_chats("gamma delta", now=NOW)
    assert result.mode == "or"
    assert set(found(result)) == {*forest2, partial}
    assert found(result)[-1] == partial  # covering every term ranks higher
    assert forest.search_chats("gamma delta", now=NOW).hits[-1].matched_terms == ("gamma",)
    assert only not in found(forest.search_chats("gamma delta", now=NOW))


def test_stopwords_are_not_searched(forest: Forest, make_chat: Any) -> None:
    make_chat("Other", ["the the the of and"])
    sid = make_chat("Llama", ["the llama"])
    result = forest.search_chats("what was the llama about", now=NOW)
    assert result.terms == ("llama",)
    assert found(result) == [sid]


def test_quoted_text_is_searched_as_a_phrase(forest: Forest, make_chat: Any) -> None:
    exact = make_chat("a", ["the refresh token rotated"])
    make_chat("b", ["rotated the token, refresh later"])
    result = forest.search_chats('"refresh token"', now=NOW)
    assert result.terms == ('"refresh token"',)
    assert found(result) == [exact]


def test_unknown_words_are_counted_reported_and_not_searched(
    forest: Forest, make_chat: Any
) -> None:
    sid = make_chat("Kanji", ["kanji deck"])
    result = forest.search_chats("kanji blorptastic zq", now=NOW)
    assert result.unknown_terms == ("blorptastic", "zq")
    assert result.terms == ("kanji",)
    assert found(result) == [sid]
    assert not result.confident


def test_unknown_words_of_four_letters_retry_as_a_prefix(forest: Forest, make_chat: Any) -> None:
    sid = make_chat("Kubernetes", ["kubernetes liveness probe"])
    result = forest.search_chats("kube", now=NOW)
    assert result.prefix_terms == ("kube",) and result.terms == ("kube*",)
    assert found(result) == [sid]
    short = forest.search_chats("kub", now=NOW)
    assert short.unknown_terms == ("kub",) and short.hits == ()


def test_only_the_six_rarest_words_are_kept(forest: Forest, make_chat: Any) -> None:
    words = ["one", "two", "three", "four", "five", "six", "seven", "eight"]
    # word i appears in i+1 chats, so "one" is rarest and "eight" most common.
    for i in range(len(words)):
        make_chat(f"c{i}", [" ".join(words[i:])])
    result = forest.search_chats(" ".join(reversed(words)), now=NOW)
    assert set(result.terms) == set(words[:6])
    assert result.terms == tuple(w for w in reversed(words) if w in words[:6])  # typed order
    assert set(result.dropped_terms) == {"seven", "eight"}


def test_stemming_finds_other_forms_of_a_word(forest: Forest, make_chat: Any) -> None:
    sid = make_chat("Flaky", ["snapshot test fails on timezones"])
    result = forest.search_chats("failing tests", now=NOW)
    assert found(result) == [sid]
    assert result.terms == ("failing", "tests")  # known through their stems, not as prefixes
    assert result.unknown_terms == () and result.prefix_terms == ()


def test_harness_words_filter_and_fall_back_to_a_word(forest: Forest, make_chat: Any) -> None:
    codex = make_chat("Kanji a", ["kanji deck"], harness="codex")
    claude = make_chat("Kanji b", ["kanji deck"], harness="claude")
    result = forest.search_chats("kanji codex", now=NOW)
    assert result.harness == ("codex",) and result.terms == ("kanji",)
    assert found(result) == [codex]
    assert found(forest.search_chats("kanji", now=NOW, harness="Claude")) == [claude]
    # No claude chat mentions a sidecar: "claude" was a topic, not a filter.
    sidecar = make_chat("Sidecar", ["the claude sidecar exits"], harness="opencode")
    result = forest.search_chats("claude sidecar", now=NOW)
    assert found(result) == [sidecar] and result.harness == ()
    # An explicit harness is never dropped.
    assert forest.search_chats("sidecar", now=NOW, harness="codex").hits == ()


def test_a_time_window_keeps_only_chats_active_in_it(forest: Forest, make_chat: Any) -> None:
    recent = make_chat("Plugins catalog stall", ["plugins catalog stalls"], age_days=1)
    older = make_chat("Plugins catalog stall (earlier)", ["plugins catalog stalls"], age_days=45)
    assert set(found(forest.search_chats("plugins catalog", now=NOW))) == {recent, older}
    result = forest.search_chats("plugins catalog yesterday", now=NOW)
    assert inside(result) == [recent]
    assert result.window is not None and result.window.phrase == "yesterday"
    # Fewer chats than asked for: the others follow, marked as outside the window.
    assert found(result) == [recent, older]
    assert [h.session_id for h in result.outside_window] == [older]
    assert found(forest.search_chats("plugins catalog yesterday", now=NOW, limit=1)) == [recent]
    assert inside(forest.search_chats("plugins catalog in august", now=NOW)) == [older]
    assert inside(forest.search_chats("plugins catalog today", now=NOW)) == []


def test_a_chat_active_across_the_window_counts(forest: Forest, make_chat: Any) -> None:
    sid = make_chat("Long chat", ["moose migration"], age_days=30)
    forest.append(
        sid,
        "user.message",
        {"content": [{"type": "text", "text": "still here"}]},
        created_at="2026-09-30T10:00:00.000Z",
        stamp=None,
    )
    assert inside(forest.search_chats("moose today", now=NOW)) == [sid]
    assert inside(forest.search_chats("moose last month", now=NOW)) == [sid]
    assert inside(forest.search_chats("moose in june", now=NOW)) == []


def test_filters_without_words_list_chats_by_latest_activity(
    forest: Forest, make_chat: Any
) -> None:
    old = make_chat("Old", ["x"], age_days=20, harness="claude")
    new = make_chat("New", ["x"], age_days=2, harness="claude")
    mid = make_chat("Mid", ["x"], age_days=5, harness="codex")
    assert found(forest.search_chats("the past week", now=NOW)) == [new, mid]
    # Monday the 28th is this week; Friday the 25th was last week.
    assert found(forest.search_chats("last week", now=NOW)) == [mid]
    assert found(forest.search_chats("claude", now=NOW)) == [new, old]
    result = forest.search_chats("the", now=NOW)
    assert result.hits == () and result.mode == "none"


def test_more_recent_chats_win_ties(forest: Forest, make_chat: Any) -> None:
    old = make_chat("Heron", ["heron"], age_days=90)
    new = make_chat("Heron", ["heron"], age_days=1)
    assert found(forest.search_chats("heron", now=NOW)) == [new, old]


def test_limit_caps_the_hits_but_not_the_judgement(forest: Forest, make_chat: Any) -> None:
    for i in range(10):
        make_chat(f"Ibis {i}", ["ibis"])
    assert len(forest.search_chats("ibis", now=NOW).hits) == 8
    result = forest.search_chats("ibis", now=NOW, limit=1)
    assert len(result.hits) == 1 and not result.confident  # ten equal chats: no lead


def test_the_store_clock_is_the_default_now(forest: Forest, make_chat: Any) -> None:
    sid = make_chat("Gecko", ["gecko"], age_days=0.5)
    assert found(forest.search_chats("gecko today")) == [sid]  # the fixture's clock is NOW


@pytest.mark.parametrize("limit", [0, -3, True, 2.5])
def test_a_limit_below_one_is_refused(forest: Forest, make_chat: Any, limit: Any) -> None:
    make_chat("Gecko", ["gecko"])
    with pytest.raises(InvalidArgument, match="limit") as caught:
        forest.search_chats("gecko", now=NOW, limit=limit)
    assert caught.value.argument == "limit"
    assert len(forest.search_chats("gecko", now=NOW, limit=1).hits) == 1


def test_terms_too_common_to_rank_take_the_newest_matches(
    forest: Forest, make_chat: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    dense = make_chat("a", ["x", "y", "walrus walrus walrus"], age_days=2)
    sparse = make_chat(
        "b", ["x", "y", "a walrus among many other words in a long line"], age_days=1.9
    )
    # Ranked, bm25 prefers the dense entry.
    assert found(forest.search_chats("walrus", now=NOW)) == [dense, sparse]
    # Past the budget, matches are taken newest first without ranking.
    monkeypatch.setattr(retrieve, "RANK_BUDGET", 1)
    assert found(forest.search_chats("walrus", now=NOW)) == [sparse, dense]


# --- -word -------------------------------------------------------------------------


def test_a_hyphenated_word_excludes_chats_holding_it(forest: Forest, make_chat: Any) -> None:
    crash = make_chat("Sidecar crash", ["the sidecar exits with EOF", "we saw a crash"])
    quiet = make_chat("Sidecar logs", ["the sidecar logs are noisy"])
    titled = make_chat("Crash report", ["the sidecar again"])  # the word only in the title
    result = forest.search_chats("sidecar -crash", now=NOW)
    assert found(result) == [quiet]
    assert result.excluded_terms == ("crash",) and result.terms == ("sidecar",)
    assert result.to_json()["excluded_terms"] == ["crash"]
    assert result.confident  # about the one chat left, which lacks the word
    # Word forms count ("crashes" stems to "crash"), and the gate never
    # speaks for a chat holding an excluded word.
    assert crash not in found(forest.search_chats("sidecar -crashes", now=NOW))
    assert titled not in found(forest.search_chats("sidecar -crashes", now=NOW))
    # Today's behaviour kept for the rest: without the hyphen the word is searched.
    assert set(found(forest.search_chats("sidecar crash", now=NOW))) >= {crash, titled}


def test_exclusions_apply_to_the_window_retry_and_to_filters_alone(
    forest: Forest, make_chat: Any
) -> None:
    old = make_chat("Old", ["heron sighting", "by the lake"], age_days=60)
    make_chat("Older", ["heron sighting", "by the sea"], age_days=90)
    result = forest.search_chats("heron yesterday -sea", now=NOW)
    assert result.hits == result.outside_window
    assert [h.session_id for h in result.outside_window] == [old]
    recent = make_chat("Recent", ["egret"], age_days=1, harness="claude")
    make_chat("Recent sea", ["egret at sea"], age_days=1, harness="claude")
    assert found(forest.search_chats("claude -sea", now=NOW)) == [recent]


def test_an_excluded_word_found_only_in_many_entries_is_probed(
    forest: Forest, make_chat: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    keep = make_chat("Keep", ["puffin colony"])
    drop = make_chat("Drop", ["puffin colony", "a storm came"])
    monkeypatch.setattr(retrieve, "EVIDENCE_BUDGET", 0)  # every word is "common"
    assert found(forest.search_chats("puffin -storm", now=NOW)) == [keep]
    assert drop in found(forest.search_chats("puffin", now=NOW))


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("pytest -v failing", ("pytest", "v", "failing")),
        ("git push --force", ("git", "push", "force")),
        ("offset -10", ("offset", "10")),
        ('kanji "-deck"', ("kanji",)),
    ],
)
def test_flags_options_and_numbers_stay_plain_words(
    forest: Forest, make_chat: Any, query: str, words: tuple[str, ...]
) -> None:
    make_chat("Chat", ["pytest -v was failing", "git push --force", "offset -10 kanji -deck"])
    result = forest.search_chats(query, now=NOW)
    assert result.excluded_terms == ()
    assert set(words) <= {t.strip('"') for t in result.terms} | set(result.dropped_terms)
    assert len(result.hits) == 1


def test_an_excluded_cjk_word_leaves_out_chats_holding_it(forest: Forest, make_chat: Any) -> None:
    slow = make_chat("A", ["我们的数据库很慢"])
    fast = make_chat("B", ["我们的数据库很快"])
    assert found(forest.search_chats("数据库 -很慢", now=NOW)) == [fast]
    assert slow in found(forest.search_chats("数据库", now=NOW))
