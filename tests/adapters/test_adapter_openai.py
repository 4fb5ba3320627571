"""OpenAI Responses streams replayed into a real forest: exactly the entries expected."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter

from sessionforest import AdapterError, Forest
from sessionforest.adapters import OpenAIResponsesStreamAdapter

GPT = "gpt-4.1-2025-04-14"
ALL = sorted(p.stem for p in (Path(__file__).parent / "fixtures").glob("openai_*.jsonl"))
Events = list[dict[str, Any]]


def _usage(input_tokens: int, output_tokens: int, reasoning: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def _message(
    content: list[dict[str, Any]], usage: dict[str, Any], *, model: str = GPT, **extra: Any
) -> dict[str, Any]:
    payload = {"content": content, "provider": "openai", "model": model, "usage": usage}
    return {**payload, "stop_reason": "completed", "incomplete": False, **extra}


def _call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "input": arguments}


COMPLETE = {
    "openai_text": _message(
        [{"type": "text", "text": "Hello! The capital of France is Paris."}], _usage(37, 11)
    ),
    "openai_function_call": _message(
        [_call("call_weather_sf", "get_weather", location="San Francisco, CA", unit="fahrenheit")],
        _usage(81, 23),
    ),
    "openai_two_function_calls": _message(
        [
            _call("call_weather_sf", "get_weather", location="San Francisco"),
            _call("call_time_sf", "get_time", timezone="America/LA"),
        ],
        _usage(90, 41),
    ),
    "openai_reasoning": _message(
        [
            {
                "type": "thinking",
                "thinking": "**Multiplying**\n\n27 × 453: split 453 into 400 + 53.",
            },
            {"type": "thinking", "thinking": "**Checking**\n\n10800 + 1431 = 12231."},
            {"type": "text", "text": "27 × 453 = 12,231."},
        ],
        _usage(20, 150, reasoning=128),
        model="o4-mini-2025-04-16",
    ),
    "openai_reasoning_text": _message(
        [
            {"type": "thinking", "thinking": "The user greets me. Reply briefly."},
            {"type": "text", "text": "Hi! How can I help?"},
        ],
        _usage(12, 40, reasoning=20),
        model="gpt-oss-120b",
    ),
    # The provider ended it early (max_output_tokens): every block it sent is whole.
    "openai_incomplete": _message(
        [{"type": "text", "text": "The largest moons of Jupiter are Ganymede, Callisto"}],
        _usage(20, 16),
        stop_reason="max_output_tokens",
        incomplete=True,
    ),
}


def _not_deltas(events: Events) -> Events:
    return [e for e in events if not e["type"].endswith(".delta")]


@pytest.mark.parametrize("name", sorted(COMPLETE))
def test_ended_stream_records_one_assembled_message(
    name: str, forest: Forest, sid: str, stream: Callable[[str], Events], turn: Any
) -> None:
    events = stream(name)
    adapter = OpenAIResponsesStreamAdapter(forest, sid)
    results = [adapter.feed(e) for e in events]
    assert results[:-1] == [None] * (len(events) - 1), "nothing is recorded before the end"
    assert results[-1] is not None
    assert results[-1].complete is not COMPLETE[name]["incomplete"]
    assert adapter.close() is None
    notes, message = turn(forest, sid)
    assert message.payload == COMPLETE[name]
    assert [n.payload["event"] for n in notes] == _not_deltas(events)
    assert [n.payload["index"] for n in notes] == [
        e["sequence_number"] for e in _not_deltas(events)
    ]


@pytest.mark.parametrize("name", ALL)
def test_no_delta_reaches_the_store(
    name: str, forest: Forest, sid: str, stream: Any, replay: Any
) -> None:
    replay(OpenAIResponsesStreamAdapter(forest, sid), stream(name))
    entries = forest.entries(sid)
    assert entries
    assert ".delta" not in json.dumps([e.to_json() for e in entries])


def test_failed_response_keeps_the_error_and_no_unfinished_text(
    forest: Forest, sid: str, stream: Any, replay: Any, turn: Any
) -> None:
    events = stream("openai_failed")
    result = replay(OpenAIResponsesStreamAdapter(forest, sid, keep_notifications=False), events)
    assert result is not None and not result.complete
    notes, message = turn(forest, sid)
    assert [n.payload["event"]["type"] for n in notes] == ["error", "response.failed"]
    assert message.payload == {
        "content": [],
        "provider": "openai",
        "model": GPT,
        "stop_reason": "failed",
        "incomplete": True,
        "dropped": [{"type": "text"}],
    }


def test_interrupted_stream_keeps_only_finished_blocks(
    forest: Forest, sid: str, stream: Any, replay: Any, turn: Any
) -> None:
    adapter = OpenAIResponsesStreamAdapter(forest, sid)
    events = stream("openai_interrupted")
    assert replay(adapter, events, close=False) is None
    assert forest.entries(sid) == [], "nothing is written while the stream is open"
    result = adapter.interrupt()
    assert result is not None and not result.complete
    notes, message = turn(forest, sid)
    assert message.payload == {
        "content": [{"type": "text", "text": "I'll check the weather."}],
        "provider": "openai",
        "model": GPT,
        "stop_reason": "interrupted",
        "incomplete": True,
        "dropped": [{"type": "tool_call", "id": "call_weather_sf", "name": "get_weather"}],
    }
    assert [n.payload["event"] for n in notes] == _not_deltas(events)


def test_stopping_mid_text_keeps_the_text_shown_so_far(
    forest: Forest, sid: str, stream: Any, replay: Any, turn: Any
) -> None:
    events = stream("openai_text")
    cut = next(i for i, e in enumerate(events) if e["type"] == "response.output_text.done")
    shown = "".join(e["delta"] for e in events[:cut] if e["type"] == "response.output_text.delta")
    assert shown, "the fixture streams text before the part is done"
    adapter = OpenAIResponsesStreamAdapter(forest, sid, keep_notifications=False)
    assert replay(adapter, events[:cut], close=False) is None
    result = adapter.close()
    assert result is not None and not result.complete
    _, message = turn(forest, sid)
    assert message.payload["content"] == [{"type": "text", "text": shown}]
    assert message.payload["partial"] == [0]
    assert message.payload["incomplete"] is True and "dropped" not in message.payload


def test_sdk_event_objects_record_what_their_json_records(
    forest: Forest, stream: Any, replay: Any, turn: Any
) -> None:
    events = stream("openai_two_function_calls")
    as_objects = [TypeAdapter(ResponseStreamEvent).validate_python(e) for e in events]
    from_json, from_sdk = forest.create_session(), forest.create_session()
    replay(OpenAIResponsesStreamAdapter(forest, from_json), events)
    replay(OpenAIResponsesStreamAdapter(forest, from_sdk), as_objects)
    (notes_json, msg_json), (notes_sdk, msg_sdk) = turn(forest, from_json), turn(forest, from_sdk)
    assert msg_sdk.payload == msg_json.payload == COMPLETE["openai_two_function_calls"]
    assert [n.payload for n in notes_sdk] == [n.payload for n in notes_json]


# --- streams the adapter must refuse, leaving nothing behind -----------------------


def _without(events: Events, *positions: int) -> Events:
    return [e for i, e in enumerate(events) if i not in positions]


def _unnumbered(events: Events) -> Events:
    return [{k: v for k, v in e.items() if k != "sequence_number"} for e in events]


def _first(events: Events, etype: str) -> int:
    return next(i for i, e in enumerate(events) if e["type"] == etype)


def _bad_arguments(events: Events) -> Events:
    # Deltas and done agree, so only the JSON itself is wrong.
    edited = []
    for e in events:
        if e["type"] == "response.function_call_arguments.delta":
            e = {**e, "delta": e["delta"].replace("}", "")}
        elif e["type"] == "response.function_call_arguments.done":
            e = {**e, "arguments": e["arguments"].replace("}", "")}
        edited.append(e)
    return edited


def _web_search(events: Events) -> Events:
    item = {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}
    added = {"type": "response.output_item.added", "output_index": 0, "item": item}
    return _unnumbered([*events[:2], added, *events[2:]])


def _lost_delta(events: Events) -> Events:
    return _without(events, _first(events, "response.output_text.delta"))


REFUSED: dict[str, tuple[str, Callable[[Events], Events], str, str]] = {
    "sequence gap": (
        "openai_text",
        _lost_delta,
        "response.output_text.delta",
        "sequence_number 5 follows 3",
    ),
    "lost delta, no sequence numbers": (
        "openai_text",
        lambda e: _unnumbered(_lost_delta(e)),
        "response.output_text.done",
        "a delta was lost",
    ),
    "invalid arguments JSON": (
        "openai_function_call",
        _bad_arguments,
        "response.function_call_arguments.done",
        "not valid JSON",
    ),
    "hosted tool item": (
        "openai_text",
        _web_search,
        "response.output_item.added",
        "no forest shape",
    ),
    "completed with an item open": (
        "openai_text",
        lambda e: _unnumbered(_without(e, len(e) - 2)),
        "response.completed",
        "open",
    ),
    "lost response.created": (
        "openai_text",
        lambda e: _unnumbered(e[1:]),
        "response.in_progress",
        "before response.created",
    ),
    "two responses": (
        "openai_text",
        lambda e: _unnumbered([e[0], *e]),
        "response.created",
        "a second response.created",
    ),
    "lost output item": (
        "openai_two_function_calls",
        lambda e: _unnumbered([x for x in e if x.get("output_index") != 0]),
        "response.output_item.added",
        "item 1 added where item 0",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_stream_raises_adapter_error_and_appends_nothing(
    case: str, forest: Forest, sid: str, stream: Any
) -> None:
    name, edit, failing_type, reason = REFUSED[case]
    events = edit(stream(name))
    adapter = OpenAIResponsesStreamAdapter(forest, sid)
    with pytest.raises(AdapterError) as caught:
        for event in events:
            adapter.feed(event)
    error = caught.value
    assert error.provider == "openai"
    assert error.index is not None and events[error.index]["type"] == failing_type
    assert reason in error.reason
    assert adapter.close() is None
    assert forest.entries(sid) == []


def test_a_value_the_store_cannot_hold_is_refused_before_anything_is_written(
    forest: Forest, sid: str, stream: Any
) -> None:
    # Valid JSON, but past 64 bits: the SQLite forest's encoder cannot store it.
    huge = '{"location": 18446744073709551616}'
    events = _unnumbered(stream("openai_function_call"))
    deltas = [i for i, e in enumerate(events) if e["type"].endswith("arguments.delta")]
    events = _without(events, *deltas[1:])
    events[deltas[0]] = {**events[deltas[0]], "delta": huge}
    done = _first(events, "response.function_call_arguments.done")
    events[done] = {**events[done], "arguments": huge}
    adapter = OpenAIResponsesStreamAdapter(forest, sid)
    with pytest.raises(AdapterError, match="cannot be stored as JSON") as caught:
        for event in events:
            adapter.feed(event)
    assert events[caught.value.index]["type"] == "response.completed"
    assert forest.entries(sid) == []


# --- properties ----------------------------------------------------------------------


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in pairwise(points)]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(min_size=1, max_size=40),
    arguments=st.dictionaries(
        st.text(max_size=6), st.text(max_size=8) | st.integers(-(2**63), 2**63 - 1), max_size=4
    ),
    cuts=st.lists(st.integers(0, 200), max_size=8),
)
def test_any_split_of_the_deltas_assembles_the_same_message(
    forest: Forest, text: str, arguments: dict[str, Any], cuts: list[int]
) -> None:
    sid = forest.create_session()
    args = json.dumps(arguments)
    at0 = {"item_id": "msg_p", "output_index": 0, "content_index": 0}
    at1 = {"item_id": "fc_p", "output_index": 1}
    part = {"type": "output_text", "text": text, "annotations": []}
    call = {"id": "fc_p", "type": "function_call", "call_id": "call_p", "name": "f"}
    events: Events = [
        {"type": "response.created", "response": {"id": "resp_p", "model": GPT}},
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "message"}},
        {"type": "response.content_part.added", **at0, "part": {**part, "text": ""}},
        *({"type": "response.output_text.delta", **at0, "delta": c} for c in _split(text, cuts)),
        {"type": "response.output_text.done", **at0, "text": text},
        {"type": "response.content_part.done", **at0, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": {"type": "message"}},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {**call, "arguments": ""},
        },
        *(
            {"type": "response.function_call_arguments.delta", **at1, "delta": c}
            for c in _split(args, cuts)
        ),
        {"type": "response.function_call_arguments.done", **at1, "arguments": args},
        {"type": "response.output_item.done", "output_index": 1, "item": call},
        {"type": "response.completed", "response": {"status": "completed"}},
    ]
    events = [{**e, "sequence_number": n} for n, e in enumerate(events)]
    adapter = OpenAIResponsesStreamAdapter(forest, sid, keep_notifications=False)
    result = [adapter.feed(e) for e in events][-1]
    assert result is not None
    assert result.payload["content"] == [
        {"type": "text", "text": text},
        {"type": "tool_call", "id": "call_p", "name": "f", "input": arguments},
    ]
    assert forest.entry(sid, result.entry.id).payload == result.payload
