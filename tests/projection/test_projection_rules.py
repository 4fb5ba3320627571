"""Projection rules on a real SQLite forest: visibility, stripping, compaction, pairing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sessionforest import Entry, Forest, ProjectionError, UnsupportedSchemaVersion
from sessionforest.projection import (
    BRANCH_PREAMBLE,
    COMPACTION_PREAMBLE,
    Message,
    project,
    project_entries,
)
from sessionforest.render_providers import to_anthropic, to_openai


def text(s: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": s}]


def call(cid: str, name: str = "bash", **input: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": cid, "name": name, "input": input}


def say(forest: Forest, sid: str, kind: str, s: str, **kw: Any) -> Entry:
    return forest.append(sid, kind, {"content": text(s)}, **kw)


def result(forest: Forest, sid: str, cid: str, output: Any = "done", **kw: Any) -> Entry:
    return forest.append(sid, "tool.completed", {"call_id": cid, "output": output, **kw})


def u(s: str) -> Message:
    return {"role": "user", "content": text(s)}


def a(s: str) -> Message:
    return {"role": "assistant", "content": text(s)}


def test_each_kind_maps_to_its_role(forest: Forest) -> None:
    sid = forest.create_session()
    say(forest, sid, "system.message", "be brief")
    say(forest, sid, "user.message", "list files")
    forest.append(
        sid,
        "assistant.message",
        {
            "content": [
                {"type": "thinking", "thinking": "ls", "signature": "s"},
                call("c1", cmd="ls"),
            ]
        },
    )
    result(forest, sid, "c1", [{"type": "text", "text": "a.txt"}], is_error=True)
    forest.append(
        sid, "worker.result", {"worker_session_id": "w7", "status": "failed", "summary": "no luck"}
    )
    forest.append(sid, "branch.summary", {"summary": "tried X"})
    assert project(forest, sid) == [
        {"role": "system", "content": text("be brief")},
        u("list files"),
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "ls", "signature": "s"},
                call("c1", cmd="ls"),
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": text("a.txt"), "is_error": True},
        u("[worker w7 failed] no luck"),
        u(f"{BRANCH_PREAMBLE} tried X"),
    ]


def test_hidden_entries_never_appear(forest: Forest) -> None:
    sid = forest.create_session()
    say(forest, sid, "user.message", "hi")
    forest.append(sid, "tool.started", {"call_id": "HIDDEN-c", "name": "bash", "input": {}})
    forest.append(sid, "provider.notification", {"provider": "x", "event": {"HIDDEN": 1}})
    forest.checkpoint(sid, "HIDDEN-label", "HIDDEN-summary")
    forest.append(sid, "approval.requested", {"request_id": "r", "summary": "HIDDEN-approval"})
    forest.append(sid, "model.changed", {"model": "HIDDEN-model"})
    forest.append(sid, "session.status", {"status": "idle"})
    say(forest, sid, "user.message", "HIDDEN-user", visibility="hidden")
    # Context visibility on a kind a model has no use for still keeps it out.
    forest.append(
        sid,
        "tool.started",
        {"call_id": "HIDDEN-c2", "name": "x", "input": {}},
        visibility="context",
    )
    say(forest, sid, "assistant.message", "hello")
    projected = project(forest, sid)
    assert projected == [u("hi"), a("hello")]
    assert "HIDDEN" not in json.dumps(projected)
    assert len(forest.active_path(sid)) == 10


def test_stamps_and_controller_metadata_are_stripped(forest: Forest) -> None:
    sid = forest.create_session()
    stamp = {"head": "STAMP-HEAD-1f3a", "dirty_hash": "STAMP-DIRTY-9c2e", "repo": "STAMP-REPO"}
    say(forest, sid, "user.message", "hi", stamp=stamp)
    forest.append(
        sid,
        "assistant.message",
        {
            "content": [*text("running"), call("c1", cmd="ls")],
            "model": "META-MODEL",
            "provider": "META-PROVIDER",
            "usage": {"input_tokens": 987654},
            "stop_reason": "META-STOP",
            "incomplete": False,
        },
        stamp=stamp,
    )
    forest.append(sid, "tool.completed", {"call_id": "c1", "output": "a.txt"}, stamp=stamp)
    path = forest.active_path(sid)
    assert path[0].stamp == stamp  # the stamp is really stored...
    projected = project(forest, sid)
    rendered = [
        projected,
        to_anthropic(projected),
        to_openai(projected),
        to_openai(projected, "responses"),
    ]
    dumped = json.dumps(rendered)
    for marker in ("STAMP", "META", "987654", "incomplete", "stamp", "usage"):
        assert marker not in dumped  # ...and never projected or rendered
    assert projected[1] == {
        "role": "assistant",
        "content": [*text("running"), call("c1", cmd="ls")],
    }


def test_projection_copies_payloads(forest: Forest) -> None:
    sid = forest.create_session()
    say(forest, sid, "user.message", "go")
    forest.append(sid, "assistant.message", {"content": [call("c1", cmd="ls", opts={"a": [1]})]})
    result(forest, sid, "c1")
    path = forest.active_path(sid)
    first = project_entries(sid, path)
    first[1]["content"][0]["input"]["opts"]["a"].append(2)
    first[1]["content"][0]["id"] = "changed"
    first[0]["content"][0]["text"] = "changed"
    assert path[1].payload["content"][0] == call("c1", cmd="ls", opts={"a": [1]})
    assert project_entries(sid, path) == [
        u("go"),
        {"role": "assistant", "content": [call("c1", cmd="ls", opts={"a": [1]})]},
        {"role": "tool", "tool_call_id": "c1", "content": text("done"), "is_error": False},
    ]


def test_v1_entries_are_upgraded(forest: Forest, raw_insert: Any) -> None:
    sid = forest.create_session()
    raw_insert(forest, sid, "u1", None, 1, 1, "user.prompt", '{"text":"run ls"}')
    raw_insert(
        forest,
        sid,
        "a1",
        "u1",
        2,
        1,
        "assistant.message",
        '{"text":"ok","tool_calls":[{"id":"t1","name":"bash","arguments":{"cmd":"ls"}}],'
        '"model":"old-model"}',
    )
    raw_insert(
        forest, sid, "r1", "a1", 3, 1, "tool.result", '{"tool_use_id":"t1","result":"a.txt"}'
    )
    say(forest, sid, "user.message", "thanks")
    assert project(forest, sid) == [
        u("run ls"),
        {"role": "assistant", "content": [*text("ok"), call("t1", cmd="ls")]},
        {"role": "tool", "tool_call_id": "t1", "content": text("a.txt"), "is_error": False},
        u("thanks"),
    ]


def test_unknown_schema_version_fails_closed(forest: Forest, raw_insert: Any) -> None:
    sid = forest.create_session()
    ok = say(forest, sid, "user.message", "fine")
    raw_insert(forest, sid, "future", ok.id, 2, 3, "user.message", '{"content":"?"}')
    # A readable child below it, as stores written before append refused that hold:
    # the unreadable entry is only an ancestor of the head.
    after = '{"content":[{"type":"text","text":"after"}]}'
    raw_insert(forest, sid, "after", "future", 3, 2, "assistant.message", after)
    outcome: list[Message] | None = None
    with pytest.raises(UnsupportedSchemaVersion) as err:
        outcome = project(forest, sid)
    assert (err.value.entry_id, err.value.version) == ("future", 3)
    assert outcome is None


def test_project_entries_checks_versions_itself() -> None:
    good = Entry("e1", "s", None, 1, "user.message", {"content": text("x")}, "context", 2, "t")
    future = Entry("e2", "s", "e1", 2, "user.message", {"content": text("y")}, "context", 9, "t")
    with pytest.raises(UnsupportedSchemaVersion) as err:
        project_entries("s", [good, future])
    assert err.value.entry_id == "e2"
    assert project_entries("s", [good]) == [u("x")]


def _long_session(forest: Forest, sid: str) -> dict[str, Entry]:
    e: dict[str, Entry] = {}
    e["sys"] = say(forest, sid, "system.message", "system prompt")
    e["u1"] = say(forest, sid, "user.message", "first question")
    e["a1"] = forest.append(sid, "assistant.message", {"content": [call("c1")]})
    e["r1"] = result(forest, sid, "c1")
    e["u2"] = say(forest, sid, "user.message", "second question")
    e["a2"] = say(forest, sid, "assistant.message", "second answer")
    return e


def test_compaction_keeps_from_first_kept_entry(forest: Forest) -> None:
    sid = forest.create_session()
    e = _long_session(forest, sid)
    forest.append(sid, "compaction", {"summary": "asked twice", "first_kept_entry_id": e["u2"].id})
    say(forest, sid, "user.message", "third question")
    assert project(forest, sid) == [
        {"role": "system", "content": text("system prompt")},
        u(f"{COMPACTION_PREAMBLE}\nasked twice"),
        u("second question"),
        a("second answer"),
        u("third question"),
    ]


def test_compaction_without_first_kept_replaces_everything_but_system(forest: Forest) -> None:
    sid = forest.create_session()
    _long_session(forest, sid)
    forest.append(sid, "compaction", {"summary": "all of it", "first_kept_entry_id": None})
    say(forest, sid, "user.message", "next")
    assert project(forest, sid) == [
        {"role": "system", "content": text("system prompt")},
        u(f"{COMPACTION_PREAMBLE}\nall of it"),
        u("next"),
    ]


def test_a_later_compaction_replaces_the_earlier_summary(forest: Forest) -> None:
    sid = forest.create_session()
    e = _long_session(forest, sid)
    forest.append(sid, "compaction", {"summary": "one", "first_kept_entry_id": e["u2"].id})
    u3 = say(forest, sid, "user.message", "third")
    forest.append(sid, "compaction", {"summary": "two", "first_kept_entry_id": u3.id})
    assert project(forest, sid) == [
        {"role": "system", "content": text("system prompt")},
        u(f"{COMPACTION_PREAMBLE}\ntwo"),
        u("third"),
    ]


def test_compaction_keeping_an_entry_off_the_path_fails(forest: Forest) -> None:
    sid = forest.create_session()
    e = _long_session(forest, sid)
    forest.move_head(sid, e["u1"].id)
    other = say(forest, sid, "assistant.message", "other branch")
    forest.move_head(sid, e["a2"].id)
    bad = forest.append(sid, "compaction", {"summary": "s", "first_kept_entry_id": other.id})
    with pytest.raises(ProjectionError) as err:
        project(forest, sid)
    assert err.value.entry_id == bad.id and other.id in str(err.value)


def test_compaction_cutting_a_call_from_its_result_fails(forest: Forest) -> None:
    sid = forest.create_session()
    e = _long_session(forest, sid)
    forest.append(sid, "compaction", {"summary": "s", "first_kept_entry_id": e["r1"].id})
    with pytest.raises(ProjectionError) as err:
        project(forest, sid)
    assert err.value.entry_id == e["r1"].id


def test_projection_follows_the_active_branch_only(forest: Forest) -> None:
    sid = forest.create_session()
    say(forest, sid, "user.message", "shared question")
    say(forest, sid, "assistant.message", "shared answer")
    forest.checkpoint(sid, "fork")
    say(forest, sid, "user.message", "OLD branch question")
    old_tip = say(forest, sid, "assistant.message", "OLD branch answer")
    forest.seek_checkpoint(sid, "fork")
    say(forest, sid, "user.message", "NEW branch question")
    assert project(forest, sid) == [
        u("shared question"),
        a("shared answer"),
        u("NEW branch question"),
    ]
    forest.move_head(sid, old_tip.id)
    on_old = json.dumps(project(forest, sid))
    assert "OLD branch answer" in on_old and "NEW" not in on_old


def test_orphan_tool_result_names_the_entry(forest: Forest) -> None:
    sid = forest.create_session()
    say(forest, sid, "user.message", "hi")
    orphan = result(forest, sid, "nobody-called-me")
    with pytest.raises(ProjectionError) as err:
        project(forest, sid)
    assert err.value.entry_id == orphan.id and err.value.session_id == sid
    assert orphan.id in str(err.value) and "nobody-called-me" in str(err.value)


def test_second_result_for_one_call_is_an_orphan(forest: Forest) -> None:
    sid = forest.create_session()
    say(forest, sid, "user.message", "hi")
    forest.append(sid, "assistant.message", {"content": [call("c1")]})
    result(forest, sid, "c1")
    again = result(forest, sid, "c1")
    with pytest.raises(ProjectionError, match="already answered") as err:
        project(forest, sid)
    assert err.value.entry_id == again.id


def test_duplicate_tool_call_ids_fail(forest: Forest) -> None:
    sid = forest.create_session()
    say(forest, sid, "user.message", "hi")
    forest.append(sid, "assistant.message", {"content": [call("c1")]})
    result(forest, sid, "c1")
    dup = forest.append(sid, "assistant.message", {"content": [call("c1")]})
    with pytest.raises(ProjectionError, match="used twice") as err:
        project(forest, sid)
    assert err.value.entry_id == dup.id


def test_unanswered_tool_call_fails_unless_pending_is_allowed(forest: Forest) -> None:
    sid = forest.create_session()
    say(forest, sid, "user.message", "hi")
    asked = forest.append(
        sid, "assistant.message", {"content": [*text("checking"), call("c1"), call("c2")]}
    )
    result(forest, sid, "c1")
    with pytest.raises(ProjectionError, match="no result") as err:
        project(forest, sid)
    assert err.value.entry_id == asked.id
    # The open call is not in the final message, so allow_pending does not help.
    with pytest.raises(ProjectionError):
        project(forest, sid, allow_pending=True)


def test_allow_pending_drops_open_calls_of_the_final_message(forest: Forest) -> None:
    sid = forest.create_session()
    say(forest, sid, "user.message", "hi")
    forest.append(sid, "assistant.message", {"content": [*text("checking"), call("c1")]})
    assert project(forest, sid, allow_pending=True) == [u("hi"), a("checking")]
    forest.append(
        sid, "assistant.message", {"content": [call("c2")]}, parent=forest.active_path(sid)[0].id
    )
    assert project(forest, sid, allow_pending=True) == [u("hi")]
    with pytest.raises(ProjectionError):
        project(forest, sid)


def test_incomplete_assistant_tool_calls_are_dropped(forest: Forest) -> None:
    sid = forest.create_session()
    say(forest, sid, "user.message", "hi")
    forest.append(
        sid, "assistant.message", {"content": [*text("about to"), call("c1")], "incomplete": True}
    )
    forest.append(sid, "assistant.message", {"content": [call("c2")], "incomplete": True})
    assert project(forest, sid) == [u("hi"), a("about to")]
    ghost = result(forest, sid, "c1")
    with pytest.raises(ProjectionError) as err:
        project(forest, sid)
    assert err.value.entry_id == ghost.id


def test_blank_text_is_dropped_and_tool_output_keeps_images(forest: Forest) -> None:
    sid = forest.create_session()
    say(forest, sid, "user.message", "  ")
    say(forest, sid, "user.message", "look")
    forest.append(sid, "assistant.message", {"content": [*text(""), call("c1")]})
    image = {"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo="}
    result(forest, sid, "c1", [*text("shot"), image])
    assert project(forest, sid) == [
        u("look"),
        {"role": "assistant", "content": [call("c1")]},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": [*text("shot"), image],
            "is_error": False,
        },
    ]


def test_unknown_kind_in_context_fails_closed(forest: Forest, raw_insert: Any) -> None:
    sid = forest.create_session()
    ok = say(forest, sid, "user.message", "hi")
    raw_insert(forest, sid, "odd", ok.id, 2, 2, "mystery.kind", '{"x":1}')
    with pytest.raises(ProjectionError, match=r"mystery\.kind") as err:
        project(forest, sid)
    assert err.value.entry_id == "odd"


def test_v1_user_message_cannot_smuggle_a_tool_call(forest: Forest, raw_insert: Any) -> None:
    sid = forest.create_session()
    raw_insert(
        forest,
        sid,
        "u1",
        None,
        1,
        1,
        "user.message",
        '{"text":"hi","tool_calls":[{"id":"t","name":"x","arguments":{}}]}',
    )
    with pytest.raises(ProjectionError, match="tool_call") as err:
        project(forest, sid)
    assert err.value.entry_id == "u1"
