"""The forest's tree semantics: append, branch, head, checkpoints, traversal."""

from __future__ import annotations

import random
from typing import Any

import pytest

from conformance.backends import Harness, Refused
from sessionforest import (
    ForeignEntry,
    Forest,
    HeadMoved,
    UnknownCheckpoint,
    UnknownEntry,
    UnknownSession,
)


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "model": "test-model"}


def test_linear_chain(forest: Forest) -> None:
    sid = forest.create_session(title="plan", harness="test")
    a = forest.append(sid, "user.message", user("draft a plan"))
    b = forest.append(sid, "assistant.message", assistant("here is a plan"))
    assert (a.parent_id, b.parent_id) == (None, a.id)
    assert (a.sequence, b.sequence) == (1, 2)
    assert a.semantic_schema_version == 2
    assert forest.head(sid) == b.id
    assert [e.id for e in forest.active_path(sid)] == [a.id, b.id]
    assert forest.entry(sid, b.id).payload == assistant("here is a plan")


def test_append_after_move_head_branches_and_keeps_old_branch(forest: Forest) -> None:
    sid = forest.create_session()
    root = forest.append(sid, "user.message", user("q"))
    old = forest.append(sid, "assistant.message", assistant("first answer"))
    forest.move_head(sid, root.id)
    assert forest.head(sid) == root.id
    new = forest.append(sid, "assistant.message", assistant("second answer"))
    assert new.parent_id == root.id
    assert [e.id for e in forest.tips(sid)] == [old.id, new.id]
    assert [e.id for e in forest.children(sid, root.id)] == [old.id, new.id]
    assert [e.id for e in forest.active_path(sid)] == [root.id, new.id]
    assert [e.id for e in forest.entries(sid)] == [root.id, old.id, new.id]


def test_explicit_parent_appends_below_it_and_moves_head(forest: Forest) -> None:
    sid = forest.create_session()
    root = forest.append(sid, "user.message", user("q"))
    forest.append(sid, "assistant.message", assistant("a"))
    edit = forest.append(sid, "user.message", user("q, edited"), parent=None)
    other = forest.append(sid, "assistant.message", assistant("b"), parent=root.id)
    assert other.parent_id == root.id
    assert forest.head(sid) == other.id
    assert edit.parent_id != root.id


def test_two_hundred_appends_with_rewinds_keep_sequence_gap_free(forest: Forest) -> None:
    rng = random.Random(7)
    sid = forest.create_session()
    ids: list[str] = []
    for i in range(200):
        if ids and rng.random() < 0.2:
            forest.move_head(sid, rng.choice(ids))
        ids.append(forest.append(sid, "user.message", user(f"turn {i}")).id)
    entries = forest.entries(sid)
    assert [e.sequence for e in entries] == list(range(1, 201))
    position = {e.id: e.sequence for e in entries}
    assert all(e.parent_id is None or position[e.parent_id] < e.sequence for e in entries)
    assert forest.check().ok


def test_sequences_are_per_session(forest: Forest) -> None:
    a, b = forest.create_session(), forest.create_session()
    forest.append(a, "user.message", user("1"))
    forest.append(b, "user.message", user("1"))
    forest.append(a, "user.message", user("2"))
    assert [e.sequence for e in forest.entries(a)] == [1, 2]
    assert [e.sequence for e in forest.entries(b)] == [1]


def test_unknown_and_foreign_parents_are_refused_and_store_unchanged(
    forest: Forest, harness: Harness
) -> None:
    a, b = forest.create_session(), forest.create_session()
    forest.append(a, "user.message", user("mine"))
    theirs = forest.append(b, "user.message", user("theirs"))
    before = harness.dump(forest)
    with pytest.raises(UnknownEntry) as unknown:
        forest.append(a, "user.message", user("x"), parent="no-such-entry")
    assert unknown.value.entry_id == "no-such-entry"
    with pytest.raises(ForeignEntry) as foreign:
        forest.append(a, "user.message", user("x"), parent=theirs.id)
    assert (foreign.value.entry_id, foreign.value.owner_session_id) == (theirs.id, b)
    with pytest.raises(ForeignEntry):
        forest.move_head(a, theirs.id)
    with pytest.raises(UnknownSession):
        forest.append("no-such-session", "user.message", user("x"))
    assert harness.dump(forest) == before


def test_expect_head_refuses_when_the_head_moved(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    first = forest.append(sid, "user.message", user("q"), expect_head=None)
    seen = forest.head(sid)
    forest.append(sid, "assistant.message", assistant("another writer"))
    before = harness.dump(forest)
    with pytest.raises(HeadMoved) as moved:
        forest.append(sid, "user.message", user("stale"), expect_head=seen)
    assert moved.value.expected == first.id
    assert moved.value.actual == forest.head(sid)
    assert harness.dump(forest) == before
    ok = forest.append(sid, "user.message", user("fresh"), expect_head=forest.head(sid))
    assert forest.head(sid) == ok.id


def test_checkpoints_are_entries_and_latest_label_wins(forest: Forest) -> None:
    sid = forest.create_session()
    forest.append(sid, "user.message", user("q"))
    first = forest.checkpoint(sid, "draft", summary="first draft")
    assert first.kind == "checkpoint"
    assert first.payload == {"label": "draft", "summary": "first draft"}
    assert first.context_visibility == "hidden"
    forest.append(sid, "assistant.message", assistant("more"))
    second = forest.checkpoint(sid, "draft")
    forest.append(sid, "user.message", user("later"))
    found = forest.seek_checkpoint(sid, "draft")
    assert found.id == second.id
    assert forest.head(sid) == second.id
    branch = forest.append(sid, "user.message", user("from the checkpoint"))
    assert branch.parent_id == second.id
    assert [c.id for c in forest.checkpoints(sid)] == [first.id, second.id]
    with pytest.raises(UnknownCheckpoint) as missing:
        forest.seek_checkpoint(sid, "nope")
    assert missing.value.label == "nope"


def test_navigation_never_mutates_entries(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    ids = [forest.append(sid, "user.message", user(str(i))).id for i in range(5)]
    forest.checkpoint(sid, "end")
    before = harness.dump(forest, "session_entries")
    for target in (ids[0], ids[3], ids[1]):
        forest.move_head(sid, target)
    forest.seek_checkpoint(sid, "end")
    forest.active_path(sid)
    forest.tips(sid)
    assert harness.dump(forest, "session_entries") == before


@pytest.mark.needs("database_guards")
def test_entries_are_immutable_at_the_database_level(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    entry = forest.append(sid, "user.message", user("keep me"))
    with pytest.raises(Refused, match="immutable"):
        harness.update_row(forest, "session_entries", entry.id, payload="{}")
    with pytest.raises(Refused, match="immutable"):
        harness.delete_row(forest, "session_entries", entry.id)
    assert forest.entry(sid, entry.id).payload == user("keep me")


@pytest.mark.needs("statement_trace")
def test_ten_thousand_deep_branch_loads_in_one_query(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    parent = None
    rows = []
    for i in range(1, 10_001):
        rows.append((f"d{i}", sid, parent, i, 2, "user.message", {"content": []}))
        parent = f"d{i}"
    harness.add_entries(forest, rows)
    harness.point_head(forest, sid, "d10000")
    with harness.statements(forest) as statements:
        path = forest.active_path(sid)
    assert len(path) == 10_000
    assert path[0].id == "d1" and path[-1].id == "d10000"
    # One recursive query for the path, plus constant bookkeeping (the head, the
    # read transaction's BEGIN and its end): never one per parent.
    queries = [s for s in statements if s.split()[0].upper() not in ("BEGIN", "COMMIT", "ROLLBACK")]
    assert len(queries) <= 3
    assert len(forest.skeleton(sid)) == 10_000


def test_skeleton_has_shape_without_payloads(forest: Forest) -> None:
    sid = forest.create_session()
    a = forest.append(sid, "user.message", user("q"))
    b = forest.append(sid, "assistant.message", assistant("a"))
    nodes = forest.skeleton(sid)
    assert [(n.id, n.parent_id, n.sequence, n.kind) for n in nodes] == [
        (a.id, None, 1, "user.message"),
        (b.id, a.id, 2, "assistant.message"),
    ]
    assert not hasattr(nodes[0], "payload")


def test_created_at_is_kept_for_importers(forest: Forest) -> None:
    sid = forest.create_session()
    entry = forest.append(sid, "user.message", user("old"), created_at="2024-03-01T10:00:00.000Z")
    assert forest.entry(sid, entry.id).created_at == "2024-03-01T10:00:00.000Z"


def test_session_listing_and_status(forest: Forest) -> None:
    sid = forest.create_session(title="t", harness="claude-code", cwd="/tmp/x")
    forest.append(sid, "user.message", user("q"))
    info = forest.session(sid)
    assert (info.title, info.harness, info.cwd, info.status, info.entry_count) == (
        "t",
        "claude-code",
        "/tmp/x",
        "active",
        1,
    )
    forest.set_status(sid, "ended")
    assert forest.session(sid).status == "ended"
    hidden = forest.create_session(title="worker", visibility="hidden")
    assert [s.id for s in forest.sessions(include_hidden=False)] == [sid]
    assert {s.id for s in forest.sessions()} == {sid, hidden}


def test_sessions_list_in_creation_order(forest: Forest) -> None:
    made = [forest.create_session(title=str(i)) for i in range(30)]
    assert [s.id for s in forest.sessions()] == made


def test_a_page_of_sessions_is_that_slice_of_the_whole_listing(forest: Forest) -> None:
    made = [forest.create_session(title=str(i), visibility="hidden" if i % 4 == 0 else "top-level")
            for i in range(23)]  # fmt: skip
    for n, sid in enumerate(made[::3]):  # some activity, so "updated" differs from "created"
        forest.append(sid, "user.message", user(f"line {n}"))
    for order in ("created", "updated"):
        for hidden in (True, False):
            whole = forest.sessions(include_hidden=hidden, order=order)
            assert forest.count_sessions(include_hidden=hidden) == len(whole)
            for offset, limit in ((0, 5), (5, 5), (20, 10), (0, None), (7, None), (40, 3)):
                end = None if limit is None else offset + limit
                page = forest.sessions(include_hidden=hidden, order=order, limit=limit,
                                       offset=offset)  # fmt: skip
                assert page == whole[offset:end], (order, hidden, offset, limit)


def test_entries_are_immutable_values(forest: Forest) -> None:
    sid = forest.create_session()
    entry = forest.append(sid, "user.message", user("q"))
    loaded = forest.entry(sid, entry.id)
    assert loaded == entry and hash(loaded) == hash(entry)
    with pytest.raises(AttributeError, match="immutable"):
        loaded.kind = "assistant.message"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del loaded.payload
    assert forest.entry(sid, entry.id).kind == "user.message"


def test_append_many_writes_one_chain_atomically(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    first = forest.append(sid, "user.message", user("q"))
    made = forest.append_many(
        sid,
        [
            ("provider.notification", {"provider": "p", "event": {"type": "ping"}}, None),
            ("assistant.message", assistant("a"), None),
        ],
    )
    assert [e.parent_id for e in made] == [first.id, made[0].id]
    assert [e.sequence for e in made] == [2, 3]
    assert made[0].context_visibility == "hidden"
    assert forest.head(sid) == made[1].id
    before = harness.dump(forest)
    from sessionforest import InvalidPayload

    with pytest.raises(InvalidPayload) as err:
        forest.append_many(
            sid,
            [("assistant.message", assistant("ok"), None), ("user.message", {"content": []}, None)],
        )
    assert err.value.kind == "user.message"
    assert harness.dump(forest) == before
    with pytest.raises(HeadMoved):
        forest.append_many(sid, [("user.message", user("x"), None)], expect_head=first.id)
    assert harness.dump(forest) == before
    assert forest.append_many(sid, []) == []


def test_payloads_json_cannot_hold_are_refused_cleanly(forest: Forest) -> None:
    from sessionforest import InvalidPayload

    sid = forest.create_session()
    with pytest.raises(InvalidPayload, match="cannot be stored as JSON"):
        forest.append(sid, "tool.started", {"call_id": "c", "name": "n", "input": {"n": 2**70}})
    assert forest.entries(sid) == []
