"""NaN and ±Infinity are refused with their field path by every writer, never stored as null.

orjson writes them as `null`, so before this rule a payload came back saying
something it never said. Each case checks the store is exactly as it was.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import Forest, ImportRejected, InvalidArgument, InvalidPayload, Session
from sessionforest.model import ChatSpec

NONFINITE = [
    pytest.param(math.nan, "NaN", id="nan"),
    pytest.param(math.inf, "Infinity", id="inf"),
    pytest.param(-math.inf, "-Infinity", id="-inf"),
]


def tool_call(x: Any) -> dict[str, Any]:
    call = {"type": "tool_call", "id": "c1", "name": "f", "input": {"ok": None, "x": x}}
    return {"content": [call]}


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


@pytest.mark.parametrize(("number", "name"), NONFINITE)
def test_append_names_kind_and_field(
    forest: Forest, harness: Harness, number: float, name: str
) -> None:
    sid = forest.create_session()
    forest.append(sid, "user.message", user("before"))
    before = harness.dump(forest)
    with pytest.raises(InvalidPayload) as err:
        forest.append(sid, "assistant.message", tool_call(number))
    assert (err.value.kind, err.value.field) == ("assistant.message", "content[0].input.x")
    assert name in err.value.reason and "null" in err.value.reason
    assert harness.dump(forest) == before


def test_append_many_writes_none_of_the_chain(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    before = harness.dump(forest)
    items = [
        ("user.message", user("fine"), None),
        ("provider.notification", {"provider": "p", "event": {"deep": [1.0, [math.nan]]}}, None),
    ]
    with pytest.raises(InvalidPayload) as err:
        forest.append_many(sid, items)
    assert (err.value.kind, err.value.field) == ("provider.notification", "event.deep[1][0]")
    assert harness.dump(forest) == before


def test_a_stamp_given_by_the_caller_is_refused_too(forest: Forest) -> None:
    sid = forest.create_session()
    with pytest.raises(InvalidArgument, match=r"stamp: field 'dirty\.ratio' is NaN"):
        forest.append(sid, "user.message", user("x"), stamp={"dirty": {"ratio": math.nan}})
    assert forest.session(sid).entry_count == 0


def test_nulls_and_the_word_null_still_store_exactly(forest: Forest) -> None:
    # Text holding `null` takes the slow path and must come out unchanged.
    sid = forest.create_session()
    payload = tool_call(1.5)
    payload["content"].append({"type": "text", "text": "null NaN Infinity"})
    entry = forest.append(sid, "assistant.message", payload)
    assert forest.entry(sid, entry.id).payload == payload


def test_the_bulk_import_writer_refuses_before_queueing(forest: Forest, harness: Harness) -> None:
    spec = ChatSpec("chat", "t", "test", "2025-01-01T00:00:00.000Z", "test", "/src", "s1")
    before = harness.dump(forest)
    with pytest.raises(InvalidPayload) as err, forest.bulk_chat(spec, Path("/src")) as chat:
        chat.add("a", None, "user.message", user("fine"), "2025-01-01T00:00:00.000Z")
        chat.add("b", "a", "assistant.message", tool_call(math.inf), "2025-01-01T00:00:00.000Z")
    assert err.value.field == "content[0].input.x"
    assert harness.dump(forest) == before


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_native_import_refuses_with_file_and_line(
    forest: Forest, harness: Harness, tmp_path: Path, number: str
) -> None:
    # orjson refuses these literals (and overflowing numbers) while parsing: a
    # native file cannot smuggle a non-finite number in.
    header = (
        '{"type":"session","format":"sessionforest","format_version":1,"id":"s",'
        '"title":"","harness":"","cwd":null,"status":"active","visibility":"top-level",'
        '"created_at":"2025-01-01T00:00:00.000Z","head":"e1"}'
    )
    entry = (
        '{"type":"entry","id":"e1","parent_id":null,"sequence":1,"kind":"provider.notification",'
        '"semantic_schema_version":2,"payload":{"provider":"p","event":{"x":NUMBER}},'
        '"context_visibility":"hidden","created_at":"2025-01-01T00:00:00.000Z","stamp":null}'
    ).replace("NUMBER", number)
    path = tmp_path / "s.jsonl"
    path.write_text(header + "\n" + entry + "\n")
    before = harness.dump(forest)
    with pytest.raises(ImportRejected) as err:
        forest.import_jsonl(path)
    assert (err.value.path, err.value.line) == (str(path), 2)
    assert harness.dump(forest) == before


def test_a_worker_policy_is_refused_with_its_field(forest: Forest, harness: Harness) -> None:
    orchestrator = forest.add_orchestrator(forest.create_session())
    before = harness.dump(forest)
    with pytest.raises(InvalidArgument) as err:
        forest.add_worker(orchestrator, forest.create_session(), {"budget": {"max": math.inf}})
    assert err.value.argument == "policy"
    assert "'budget.max' is Infinity" in err.value.reason
    assert harness.dump(forest)["agents"] == before["agents"]


def test_the_in_memory_session_refuses_what_its_jsonl_would_turn_into_null() -> None:
    session = Session(clock=lambda: 0)
    session.append({"role": "user", "content": "hi"})
    with pytest.raises(InvalidPayload) as err:
        session.append({"role": "assistant", "content": [{"arguments": {"x": math.nan}}]})
    assert err.value.field == "content[0].arguments.x"
    assert len(session.path_messages()) == 1
    with pytest.raises(InvalidPayload):
        session.append_new([*session.path_messages(), {"role": "user", "n": math.inf}])
    assert len(session.path_messages()) == 1
