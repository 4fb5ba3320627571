"""Anthropic Messages streams replayed into a real forest: exactly the entries expected."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import RawMessageStreamEvent
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from sessionforest import AdapterError, DeltaRefused, Forest
from sessionforest.adapters import AnthropicStreamAdapter

MODEL = "claude-sonnet-4-5-20250929"
SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYdsp3uVLZ7N5PHzFT3kYqAgDt0s"
ALL = sorted(p.stem for p in (Path(__file__).parent / "fixtures").glob("anthropic_*.jsonl"))


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _message(
    content: list[dict[str, Any]], stop_reason: str, usage: dict[str, int]
) -> dict[str, Any]:
    return {
        "content": content,
        "provider": "anthropic",
        "model": MODEL,
        "stop_reason": stop_reason,
        "usage": usage,
        "incomplete": False,
    }


WEATHER_CALL = {
    "type": "tool_call",
    "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
    "name": "get_weather",
    "input": {"location": "San Francisco, CA", "unit": "fahrenheit"},
}

COMPLETE = {
    "anthropic_text": _message(
        [{"type": "text", "text": "Hello! The capital of France is Paris."}],
        "end_turn",
        _usage(25, 15),
    ),
    "anthropic_thinking": _message(
        [
            {
                "type": "thinking",
                "thinking": "Let me multiply. 27 * 453 = 27 * 400 + 27 * 53 = 12231.",
                "signature": SIGNATURE,
            },
            {
                "type": "redacted_thinking",
                "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
            },
            {"type": "text", "text": "27 × 453 = 12,231."},
        ],
        "end_turn",
        _usage(48, 120),
    ),
    "anthropic_tool_use": _message(
        [{"type": "text", "text": "I'll check the weather in San Francisco."}, WEATHER_CALL],
        "tool_use",
        _usage(472, 89),
    ),
    "anthropic_parallel_tools": _message(
        [
            {"type": "text", "text": "Checking both now."},
            {
                "type": "tool_call",
                "id": "toolu_01WeatherSF",
                "name": "get_weather",
                "input": {"location": "San Francisco, CA"},
            },
            {
                "type": "tool_call",
                "id": "toolu_01TimeSF",
                "name": "get_time",
                "input": {"timezone": "America/Los_Angeles"},
            },
        ],
        "tool_use",
        _usage(510, 131),
    ),
}


def _not_deltas(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] != "content_block_delta"]


@pytest.mark.parametrize("name", sorted(COMPLETE))
def test_complete_stream_records_one_assembled_message(
    name: str, forest: Forest, sid: str, stream: Callable[..., Any], replay: Any, turn: Any
) -> None:
    events = stream(name)
    adapter = AnthropicStreamAdapter(forest, sid)
    results = [adapter.feed(e) for e in events]
    assert results[:-1] == [None] * (len(events) - 1), "nothing is recorded before message_stop"
    assert results[-1] is not None and results[-1].complete
    assert adapter.close() is None
    notes, message = turn(forest, sid)
    assert message.payload == COMPLETE[name]
    assert results[-1].entry == message
    # Every raw event but the deltas stays inspectable, in arrival order.
    assert [n.payload["event"] for n in notes] == _not_deltas(events)
    assert [n.payload["index"] for n in notes] == [
        i for i, e in enumerate(events) if e["type"] != "content_block_delta"
    ]
    assert {n.payload["provider"] for n in notes} == {"anthropic"}


@pytest.mark.parametrize("name", ALL)
def test_no_delta_reaches_the_store(
    name: str, forest: Forest, sid: str, stream: Any, replay: Any
) -> None:
    replay(AnthropicStreamAdapter(forest, sid), stream(name))
    stored = json.dumps([e.to_json() for e in forest.entries(sid)])
    assert forest.entries(sid)
    assert "_delta" not in stored.replace("message_delta", "")
    assert not any(e.kind.endswith(".delta") for e in forest.entries(sid))


def test_the_forest_refuses_a_delta_kind(forest: Forest, sid: str) -> None:
    with pytest.raises(DeltaRefused) as caught:
        forest.append(sid, "assistant.message.delta", {"content": [{"type": "text", "text": "x"}]})
    assert caught.value.kind == "assistant.message.delta"
    assert forest.entries(sid) == []


def test_without_keep_notifications_only_ping_and_error_are_kept(
    forest: Forest, sid: str, stream: Any, replay: Any, turn: Any
) -> None:
    result = replay(
        AnthropicStreamAdapter(forest, sid, keep_notifications=False), stream("anthropic_text")
    )
    notes, message = turn(forest, sid)
    assert [n.payload["event"] for n in notes] == [{"type": "ping"}]
    assert [n.id for n in result.notifications] == [n.id for n in notes]
    assert message.payload == COMPLETE["anthropic_text"]


def test_interrupted_stream_keeps_only_finished_blocks(
    forest: Forest, sid: str, stream: Any, replay: Any, turn: Any
) -> None:
    adapter = AnthropicStreamAdapter(forest, sid)
    events = stream("anthropic_interrupted")
    assert replay(adapter, events, close=False) is None
    result = adapter.close()
    assert result is not None and not result.complete
    assert adapter.close() is None, "closing twice records nothing more"
    notes, message = turn(forest, sid)
    assert message.payload == {
        "content": [{"type": "text", "text": "I'll check the weather."}],
        "provider": "anthropic",
        "model": MODEL,
        "stop_reason": "interrupted",
        "usage": _usage(472, 1),
        "incomplete": True,
        "dropped": [
            {"type": "tool_call", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather"}
        ],
    }
    assert not any(b["type"] == "tool_call" for b in message.payload["content"])
    assert [n.payload["event"] for n in notes] == _not_deltas(events)


def test_error_event_ends_the_message_as_incomplete(
    forest: Forest, sid: str, stream: Any, replay: Any, turn: Any
) -> None:
    adapter = AnthropicStreamAdapter(forest, sid, keep_notifications=False)
    replay(adapter, stream("anthropic_error"))
    notes, message = turn(forest, sid)
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert [n.payload["event"] for n in notes] == [error]
    assert adapter.error == error["error"]
    assert message.payload["stop_reason"] == "error"
    assert message.payload["incomplete"] is True
    # What was shown is kept: the text block in progress, cut off where the error came.
    assert [b["type"] for b in message.payload["content"]] == ["thinking", "text"]
    assert message.payload["partial"] == [1]
    assert "dropped" not in message.payload


def test_stopping_mid_text_keeps_the_text_shown_so_far(
    forest: Forest, sid: str, stream: Any, replay: Any, turn: Any
) -> None:
    events = stream("anthropic_text")
    cut = next(i for i, e in enumerate(events) if e["type"] == "content_block_stop")
    shown = "".join(e["delta"]["text"] for e in events[:cut] if e["type"] == "content_block_delta")
    assert shown, "the fixture streams text before the block stops"
    adapter = AnthropicStreamAdapter(forest, sid, keep_notifications=False)
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
    events = stream("anthropic_tool_use")
    as_objects = [TypeAdapter(RawMessageStreamEvent).validate_python(e) for e in events]
    from_json, from_sdk = forest.create_session(), forest.create_session()
    replay(AnthropicStreamAdapter(forest, from_json), events)
    replay(AnthropicStreamAdapter(forest, from_sdk), as_objects)
    (notes_json, msg_json), (notes_sdk, msg_sdk) = turn(forest, from_json), turn(forest, from_sdk)
    assert msg_sdk.payload == msg_json.payload == COMPLETE["anthropic_tool_use"]
    assert [n.payload for n in notes_sdk] == [n.payload for n in notes_json]


# --- streams the adapter must refuse, leaving nothing behind -----------------------


def _break_json(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    broken = [dict(e) for e in events]
    last_json = max(
        i
        for i, e in enumerate(broken)
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"
    )
    broken[last_json] = {
        **broken[last_json],
        "delta": {"type": "input_json_delta", "partial_json": "renheit"},
    }
    return broken


def _drop_block_start(events: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    return [e for e in events if not (e["type"] == "content_block_start" and e["index"] == index)]


def _drop_block(events: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    return [e for e in events if e.get("index") != index]


def _with_block(events: list[dict[str, Any]], block: dict[str, Any]) -> list[dict[str, Any]]:
    start = {"type": "content_block_start", "index": 1, "content_block": block}
    return [*events[:7], start, {"type": "content_block_stop", "index": 1}, *events[-2:]]


def _input(
    partial_json: str, tool_id: str = "toolu_1"
) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    def edit(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        tool = {"type": "tool_use", "id": tool_id, "name": "f", "input": {}}
        delta = {"type": "input_json_delta", "partial_json": partial_json}
        start = {"type": "content_block_start", "index": 1, "content_block": tool}
        return [
            *events[:7],
            start,
            {"type": "content_block_delta", "index": 1, "delta": delta},
            {"type": "content_block_stop", "index": 1},
            *events[-2:],
        ]

    return edit


REFUSED = {
    "invalid tool JSON": (
        "anthropic_tool_use",
        _break_json,
        "content_block_stop",
        "not valid JSON",
    ),
    "tool input not an object": (
        "anthropic_text",
        _input("[1, 2]"),
        "content_block_stop",
        "must be a JSON object",
    ),
    # Caught by the forest's payload contract, checked before anything is written.
    "empty tool id": (
        "anthropic_text",
        _input("{}", tool_id=" "),
        "message_stop",
        "must not be empty",
    ),
    # Python's json reads NaN; the forest refuses it rather than store null.
    "NaN in tool input": (
        "anthropic_text",
        _input('{"x": NaN}'),
        "message_stop",
        "'content[1].input.x' is NaN",
    ),
    "lost block start": (
        "anthropic_parallel_tools",
        lambda e: _drop_block_start(e, 1),
        "content_block_delta",
        "not open",
    ),
    "lost whole block": (
        "anthropic_parallel_tools",
        lambda e: _drop_block(e, 1),
        "content_block_start",
        "events were lost",
    ),
    "lost message_start": (
        "anthropic_text",
        lambda e: e[1:],
        "content_block_start",
        "before message_start",
    ),
    "server tool": (
        "anthropic_text",
        lambda e: _with_block(
            e, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
        ),
        "content_block_start",
        "no forest shape",
    ),
    "delta of the wrong kind": (
        "anthropic_text",
        lambda e: [
            *e[:3],
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": "{"},
            },
            *e[3:],
        ],
        "content_block_delta",
        "cannot extend",
    ),
    "missing field": (
        "anthropic_text",
        lambda e: [*e[:2], {"type": "content_block_delta", "index": 0}, *e[2:]],
        "content_block_delta",
        "malformed",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_stream_raises_adapter_error_and_appends_nothing(
    case: str, forest: Forest, sid: str, stream: Any
) -> None:
    name, edit, failing_type, reason = REFUSED[case]
    events = edit(stream(name))
    adapter = AnthropicStreamAdapter(forest, sid)
    with pytest.raises(AdapterError) as caught:
        for event in events:
            adapter.feed(event)
    error = caught.value
    assert error.provider == "anthropic"
    assert error.index is not None and events[error.index]["type"] == failing_type
    assert reason in error.reason and f"(event {error.index})" in str(error)
    assert adapter.close() is None
    with pytest.raises(AdapterError, match="already broken"):
        adapter.feed({"type": "ping"})
    assert forest.entries(sid) == []


def test_events_after_message_stop_are_refused(forest: Forest, sid: str, stream: Any) -> None:
    adapter = AnthropicStreamAdapter(forest, sid)
    for event in stream("anthropic_text"):
        adapter.feed(event)
    with pytest.raises(AdapterError, match="already finished") as caught:
        adapter.feed({"type": "message_stop"})
    assert caught.value.index == 9
    assert len(forest.entries(sid)) == 7


def test_not_an_event_is_refused(forest: Forest, sid: str) -> None:
    with pytest.raises(AdapterError, match="not a stream event") as caught:
        AnthropicStreamAdapter(forest, sid).feed(["message_start"])
    assert caught.value.index == 0


def test_close_before_any_event_records_nothing(forest: Forest, sid: str) -> None:
    with AnthropicStreamAdapter(forest, sid) as adapter:
        assert adapter.state == "open"
    assert forest.entries(sid) == []


# --- properties ----------------------------------------------------------------------

JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in pairwise(points)]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(min_size=1, max_size=40),
    tool_input=st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4),
    cuts=st.lists(st.integers(0, 200), max_size=8),
)
def test_any_split_of_the_deltas_assembles_the_same_message(
    forest: Forest, text: str, tool_input: dict[str, Any], cuts: list[int]
) -> None:
    sid = forest.create_session()
    arguments = json.dumps(tool_input)
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {"id": "msg_p", "model": MODEL, "usage": {"input_tokens": 3}},
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": c}}
            for c in _split(text, cuts)
        ),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_p", "name": "f", "input": {}},
        },
        *(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": c},
            }
            for c in _split(arguments, cuts)
        ),
        {"type": "content_block_stop", "index": 1},
        {"type": "message_stop"},
    ]
    adapter = AnthropicStreamAdapter(forest, sid, keep_notifications=False)
    result = [adapter.feed(e) for e in events][-1]
    assert result is not None
    assert result.payload["content"] == [
        {"type": "text", "text": text},
        {"type": "tool_call", "id": "toolu_p", "name": "f", "input": tool_input},
    ]
    assert forest.entry(sid, result.entry.id).payload == result.payload
