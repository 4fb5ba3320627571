"""Recall inside one chat: scoped to its session, ranked, branch-aware, and still
there after the chat has ended."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import Forest, InvalidArgument, SessionQuarantined, UnknownSession


def text(body: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": body}]}


def ids(hits: list[Any]) -> list[str]:
    return [h.entry_id for h in hits]


def test_recall_never_returns_another_sessions_entries(forest: Forest) -> None:
    # Two direct chats with no workspace at all and identical text: each is its own bucket.
    a = forest.create_session("a")
    b = forest.create_session("b")
    ea = forest.append(a, "user.message", text("the deploy key rotated"))
    eb = forest.append(b, "user.message", text("the deploy key rotated"))
    assert forest.session(a).cwd is None and forest.session(b).cwd is None
    assert ids(forest.search_session_entries(a, "deploy key")) == [ea.id]
    assert ids(forest.search_session_entries(b, "deploy key")) == [eb.id]
    assert {h.session_id for h in forest.search_session_entries(a, "deploy")} == {a}


def test_recall_scoping_holds_for_many_neighbouring_sessions(forest: Forest) -> None:
    sids = [forest.create_session(f"s{i}") for i in range(30)]
    for sid in sids:
        for n in range(3):
            forest.append(sid, "user.message", text(f"shared words number {n} of {sid}"))
    for sid in sids[::7]:
        hits = forest.search_session_entries(sid, "shared words", limit=50)
        assert len(hits) == 3
        assert {h.session_id for h in hits} == {sid}
        assert {forest.entry(sid, h.entry_id).session_id for h in hits} == {sid}


def test_ended_and_archived_chats_are_still_searchable(forest: Forest) -> None:
    sid = forest.create_session("t")
    entry = forest.append(sid, "user.message", text("pelican brief"))
    forest.set_status(sid, "ended")
    assert ids(forest.search_session_entries(sid, "pelican")) == [entry.id]
    forest.set_status(sid, "archived")
    assert ids(forest.search_session_entries(sid, "pelican")) == [entry.id]


def test_hits_carry_id_kind_snippet_time_and_active_branch(forest: Forest) -> None:
    sid = forest.create_session("t")
    root = forest.append(
        sid, "user.message", text("start with the parser"), created_at="2026-01-01T00:00:00.000Z"
    )
    old = forest.append(sid, "assistant.message", text("the parser uses regex"))
    forest.move_head(sid, root.id)  # rewind: `old` is now on an abandoned branch
    new = forest.append(sid, "assistant.message", text("the parser uses a grammar"))
    hits = {h.entry_id: h for h in forest.search_session_entries(sid, "parser")}
    assert set(hits) == {root.id, old.id, new.id}
    assert hits[root.id].on_active_branch and hits[new.id].on_active_branch
    assert not hits[old.id].on_active_branch
    assert hits[root.id].kind == "user.message"
    assert hits[new.id].kind == "assistant.message"
    assert hits[root.id].created_at == "2026-01-01T00:00:00.000Z"
    assert hits[root.id].sequence == 1
    assert hits[new.id].snippet == "the **parser** uses a grammar"
    json = hits[old.id].to_json()
    assert json["entry_id"] == old.id and json["on_active_branch"] is False


def test_an_entry_matching_every_word_comes_first(forest: Forest) -> None:
    sid = forest.create_session("t")
    both = forest.append(sid, "user.message", text("flaky snapshot test"))
    for i in range(5):
        forest.append(sid, "assistant.message", text(f"another test run {i}"))
    forest.append(sid, "user.message", text("snapshot only"))
    hits = forest.search_session_entries(sid, "snapshot test")
    assert ids(hits) == [both.id]  # AND found something: no OR hits mixed in


def test_or_when_nothing_has_every_word_rarer_words_rank_higher(forest: Forest) -> None:
    sid = forest.create_session("t")
    for i in range(6):
        forest.append(sid, "user.message", text(f"common word {i}"))
    rare = forest.append(sid, "assistant.message", text("a zebra appears"))
    hits = forest.search_session_entries(sid, "zebra common")
    assert hits[0].entry_id == rare.id
    assert len(hits) == 7
    # Ties go to the newest entry.
    assert [h.sequence for h in hits[1:]] == [6, 5, 4, 3, 2, 1]


def test_limit_and_empty_queries(forest: Forest) -> None:
    sid = forest.create_session("t")
    for i in range(12):
        forest.append(sid, "user.message", text(f"line {i} of the log"))
    assert len(forest.search_session_entries(sid, "log")) == 10
    assert len(forest.search_session_entries(sid, "log", limit=3)) == 3
    for bad in (0, -1):
        with pytest.raises(
            InvalidArgument, match="invalid limit: must be a whole number of at least 1"
        ):
            forest.search_session_entries(sid, "log", limit=bad)
    assert forest.search_session_entries(sid, "") == []
    assert forest.search_session_entries(sid, "  ...  ") == []


def test_stopwords_are_dropped_unless_nothing_else_was_typed(forest: Forest) -> None:
    sid = forest.create_session("t")
    the = forest.append(sid, "user.message", text("the"))
    cat = forest.append(sid, "user.message", text("a cat"))
    assert ids(forest.search_session_entries(sid, "the cat")) == [cat.id]
    assert ids(forest.search_session_entries(sid, "the")) == [the.id]


def test_phrases_match_in_order_and_stemming_matches_word_forms(forest: Forest) -> None:
    sid = forest.create_session("t")
    ordered = forest.append(sid, "user.message", text("the tests were failing randomly"))
    forest.append(sid, "user.message", text("randomly, the tests were failing"))
    assert ids(forest.search_session_entries(sid, '"failing randomly"')) == [ordered.id]
    # "failing" is not a prefix of "fails": only stemming can match them.
    assert len(forest.search_session_entries(sid, "fails")) == 2
    other = forest.append(sid, "user.message", text("it fails every time"))
    assert ids(forest.search_session_entries(sid, "failing time")) == [other.id]


def test_an_unknown_word_of_four_letters_retries_as_a_prefix(forest: Forest) -> None:
    sid = forest.create_session("t")
    entry = forest.append(sid, "user.message", text("kubernetes liveness probe"))
    assert ids(forest.search_session_entries(sid, "kube")) == [entry.id]
    assert forest.search_session_entries(sid, "kub") == []  # three letters: no prefix retry


def test_legacy_kinds_read_as_their_successors(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session("t")
    harness.add_entry(
        forest,
        sid,
        "old",
        None,
        1,
        version=1,
        kind="user.prompt",
        payload={"text": "legacy words"},
        created_at="2020-01-01T00:00:00.000Z",
    )
    [hit] = forest.search_session_entries(sid, "legacy")
    assert (hit.entry_id, hit.kind) == ("old", "user.message")


def test_unknown_and_quarantined_sessions_are_refused(forest: Forest, harness: Harness) -> None:
    with pytest.raises(UnknownSession):
        forest.search_session_entries("nope", "anything")
    sid = forest.create_session("t")
    forest.append(sid, "user.message", text("hidden words"))
    harness.set_quarantine(forest, sid, "damaged")
    with pytest.raises(SessionQuarantined):
        forest.search_session_entries(sid, "hidden")


def test_hidden_worker_sessions_are_recalled_inside_themselves(forest: Forest) -> None:
    worker = forest.create_session("w", visibility="hidden")
    entry = forest.append(worker, "user.message", text("worker private notes"))
    assert ids(forest.search_session_entries(worker, "private")) == [entry.id]


def test_a_hyphenated_word_leaves_out_entries_holding_it(forest: Forest) -> None:
    sid = forest.create_session("t")
    forest.append(sid, "user.message", text("the redis fix was a timeout"))
    forest.append(sid, "user.message", text("the redis fix broke the cache"))
    forest.append(sid, "user.message", text("数据库很慢，redis 也慢"))
    assert [h.sequence for h in forest.search_session_entries(sid, "redis -cache")] == [3, 1]
    assert [h.sequence for h in forest.search_session_entries(sid, "redis -很慢")] == [2, 1]
    # Not searched for either: "-cache" alone finds nothing.
    assert forest.search_session_entries(sid, "-cache") == []


def test_a_committed_append_is_searchable_at_once_from_another_handle(
    forest: Forest, harness: Harness
) -> None:
    sid = forest.create_session("t")
    other = harness.another(forest)
    assert other.search_session_entries(sid, "marmalade") == []
    entry = forest.append(sid, "user.message", text("orange marmalade recipe"))
    [hit] = other.search_session_entries(sid, "marmalade")
    assert hit.entry_id == entry.id
