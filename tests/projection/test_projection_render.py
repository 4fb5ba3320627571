"""Renderers: exact shapes for Anthropic, OpenAI Chat and Responses, checked against SDK types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sessionforest import Forest, InvalidArgument, ProjectionError
from sessionforest.projection import Message, project
from sessionforest.render_providers import OPENING_TEXT, to_anthropic, to_openai

Check = Callable[[str, Any], None]

PNG = {"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo="}
URL_IMAGE = {"type": "image", "media_type": "image/jpeg", "url": "https://example.com/a.jpg"}


def text(s: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": s}]


def call(cid: str, **input: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": cid, "name": "bash", "input": input}


def tool(cid: str, content: list[dict[str, Any]], is_error: bool = False) -> Message:
    return {"role": "tool", "tool_call_id": cid, "content": content, "is_error": is_error}


RICH: list[Message] = [
    {"role": "system", "content": text("be brief")},
    {"role": "user", "content": [*text("what is in these?"), PNG, URL_IMAGE]},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "look first", "signature": "sig-1"},
            {"type": "thinking", "thinking": "unsigned: cannot be sent back"},
            {"type": "redacted_thinking", "data": "opaque"},
            *text("checking both"),
            call("c1", cmd="ls"),
            call("c2", path="ü.txt"),
        ],
    },
    tool("c2", [*text("shot"), PNG], is_error=True),
    tool("c1", text("a.txt")),
    {"role": "system", "content": text("stay on topic")},
    {"role": "user", "content": text("and now?")},
    {"role": "assistant", "content": text("done")},
]


def test_anthropic_rendering_is_exact_and_valid(check_sdk: Check) -> None:
    request = to_anthropic(RICH)
    assert request["system"] == "be brief\n\nstay on topic"
    png_source = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    assert request["messages"] == [
        {
            "role": "user",
            "content": [
                *text("what is in these?"),
                {"type": "image", "source": png_source},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/a.jpg"}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "look first", "signature": "sig-1"},
                {"type": "redacted_thinking", "data": "opaque"},
                *text("checking both"),
                {"type": "tool_use", "id": "c1", "name": "bash", "input": {"cmd": "ls"}},
                {"type": "tool_use", "id": "c2", "name": "bash", "input": {"path": "ü.txt"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "content": [*text("shot"), {"type": "image", "source": png_source}],
                    "is_error": True,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "c1",
                    "content": text("a.txt"),
                    "is_error": False,
                },
                *text("and now?"),
            ],
        },
        {"role": "assistant", "content": text("done")},
    ]
    check_sdk("anthropic", request["messages"])
    check_sdk("anthropic.system", request["system"])


def test_openai_chat_rendering_is_exact_and_valid(check_sdk: Check) -> None:
    messages = to_openai(RICH, "chat")
    assert messages == [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [
                *text("what is in these?"),
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.jpg"}},
            ],
        },
        {
            "role": "assistant",
            "content": "checking both",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"cmd": "ls"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"path": "ü.txt"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "shot\n\n[image: image/png]"},
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "system", "content": "stay on topic"},
        {"role": "user", "content": text("and now?")},
        {"role": "assistant", "content": "done"},
    ]
    check_sdk("chat", messages)


def test_openai_responses_rendering_is_exact_and_valid(check_sdk: Check) -> None:
    items = to_openai(RICH, "responses")
    png = {
        "type": "input_image",
        "image_url": "data:image/png;base64,iVBORw0KGgo=",
        "detail": "auto",
    }
    assert items == [
        {
            "type": "message",
            "role": "system",
            "content": [{"type": "input_text", "text": "be brief"}],
        },
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "what is in these?"},
                png,
                {"type": "input_image", "image_url": "https://example.com/a.jpg", "detail": "auto"},
            ],
        },
        {"type": "message", "role": "assistant", "content": "checking both"},
        {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": '{"cmd": "ls"}'},
        {
            "type": "function_call",
            "call_id": "c2",
            "name": "bash",
            "arguments": '{"path": "ü.txt"}',
        },
        {
            "type": "function_call_output",
            "call_id": "c2",
            "output": [{"type": "input_text", "text": "shot"}, png],
        },
        {"type": "function_call_output", "call_id": "c1", "output": "a.txt"},
        {
            "type": "message",
            "role": "system",
            "content": [{"type": "input_text", "text": "stay on topic"}],
        },
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "and now?"}],
        },
        {"type": "message", "role": "assistant", "content": "done"},
    ]
    check_sdk("responses", items)


def test_parallel_tool_calls_from_the_forest_render_as_one_user_message(
    forest: Forest, check_sdk: Check
) -> None:
    sid = forest.create_session()
    forest.append(sid, "user.message", {"content": text("two things")})
    forest.append(sid, "assistant.message", {"content": [call("p1", n=1), call("p2", n=2)]})
    forest.append(sid, "tool.completed", {"call_id": "p1", "output": "one"})
    forest.append(sid, "tool.completed", {"call_id": "p2", "output": "two", "is_error": True})
    forest.append(sid, "assistant.message", {"content": text("both done")})
    request = to_anthropic(project(forest, sid), session_id=sid)
    assert "system" not in request
    assert [m["role"] for m in request["messages"]] == ["user", "assistant", "user", "assistant"]
    assert request["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "p1", "content": text("one"), "is_error": False},
        {"type": "tool_result", "tool_use_id": "p2", "content": text("two"), "is_error": True},
    ]
    check_sdk("anthropic", request["messages"])
    chat = to_openai(project(forest, sid))
    assert [m["role"] for m in chat] == ["user", "assistant", "tool", "tool", "assistant"]
    check_sdk("chat", chat)


def test_results_move_next_to_their_call() -> None:
    messages: list[Message] = [
        {"role": "user", "content": text("go")},
        {"role": "assistant", "content": [call("c1")]},
        {"role": "user", "content": text("meanwhile")},
        {"role": "assistant", "content": text("still waiting")},
        tool("c1", text("late")),
    ]
    anthropic_messages = to_anthropic(messages)["messages"]
    assert anthropic_messages[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "c1",
                "content": text("late"),
                "is_error": False,
            },
            *text("meanwhile"),
        ],
    }
    assert [m["role"] for m in to_openai(messages)] == [
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]


def test_anthropic_merges_neighbours_and_opens_with_the_user(check_sdk: Check) -> None:
    messages: list[Message] = [
        {"role": "system", "content": text("sys")},
        {"role": "assistant", "content": text("hello, I am ready")},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "unsigned only"}]},
        {"role": "assistant", "content": text("anything?")},
        {"role": "user", "content": text("yes")},
        {"role": "user", "content": text("[worker w1 succeeded] found it")},
    ]
    rendered = to_anthropic(messages)["messages"]
    assert rendered == [
        {"role": "user", "content": text(OPENING_TEXT)},
        {"role": "assistant", "content": [*text("hello, I am ready"), *text("anything?")]},
        {"role": "user", "content": [*text("yes"), *text("[worker w1 succeeded] found it")]},
    ]
    check_sdk("anthropic", rendered)
    # A turn of nothing but thinking has nothing OpenAI can take.
    assert [m["role"] for m in to_openai(messages)] == [
        "system",
        "assistant",
        "assistant",
        "user",
        "user",
    ]


BROKEN: dict[str, list[Message]] = {
    "orphan": [{"role": "user", "content": text("hi")}, tool("ghost", text("x"))],
    "answered twice": [
        {"role": "assistant", "content": [call("c1")]},
        tool("c1", text("x")),
        tool("c1", text("y")),
    ],
    "unanswered": [
        {"role": "user", "content": text("hi")},
        {"role": "assistant", "content": [call("c1")]},
    ],
    "id reused": [
        {"role": "assistant", "content": [call("c1")]},
        tool("c1", text("x")),
        {"role": "assistant", "content": [call("c1")]},
        tool("c1", text("y")),
    ],
}


@pytest.mark.parametrize("case", sorted(BROKEN))
@pytest.mark.parametrize(
    "render",
    [
        lambda m: to_anthropic(m, session_id="s1"),
        lambda m: to_openai(m, "chat", session_id="s1"),
        lambda m: to_openai(m, "responses", session_id="s1"),
    ],
    ids=["anthropic", "chat", "responses"],
)
def test_renderers_recheck_pairing(case: str, render: Callable[[list[Message]], Any]) -> None:
    with pytest.raises(ProjectionError) as err:
        render(BROKEN[case])
    assert err.value.session_id == "s1"
    assert ("ghost" if case == "orphan" else "c1") in str(err.value)


def test_unknown_openai_api_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="responses"):
        to_openai([], "completions")  # type: ignore[arg-type]


def test_renderers_do_not_share_inputs_with_the_caller() -> None:
    messages: list[Message] = [
        {"role": "assistant", "content": [call("c1", opts={"k": [1]})]},
        tool("c1", text("x")),
    ]
    rendered = to_anthropic(messages)["messages"]
    rendered[1]["content"][0]["input"]["opts"]["k"].append(2)
    assert messages[0]["content"][0]["input"] == {"opts": {"k": [1]}}


@pytest.mark.parametrize(
    ("api", "bad"),
    [
        (
            "anthropic",
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_idx": "c"}]}],
        ),
        ("anthropic", [{"role": "user", "content": [{"type": "text", "text": "x", "extra": 1}]}]),
        ("chat", [{"role": "tool", "content": "x"}]),
        (
            "responses",
            [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "x"}],
                }
            ],
        ),
    ],
)
def test_the_sdk_check_itself_rejects_bad_shapes(check_sdk: Check, api: str, bad: Any) -> None:
    with pytest.raises((AssertionError, ValueError)):
        check_sdk(api, bad)
