"""Rendered requests go through the real SDK clients to a local stand-in API, byte for byte."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest

from sessionforest import Forest
from sessionforest.projection import Message, project
from sessionforest.render_providers import to_anthropic, to_openai


def _session(forest: Forest) -> list[Message]:
    """A session with a system prompt, an image, parallel tool calls and a branch."""
    sid = forest.create_session()
    stamp = {"head": "STAMP-abc", "dirty_hash": "STAMP-def"}
    forest.append(sid, "system.message", {"content": [{"type": "text", "text": "be brief"}]})
    image = {"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo="}
    forest.append(
        sid,
        "user.message",
        {"content": [{"type": "text", "text": "what is this?"}, image]},
        stamp=stamp,
    )
    fork = forest.append(sid, "assistant.message", {"content": [{"type": "text", "text": "a PNG"}]})
    forest.append(sid, "user.message", {"content": [{"type": "text", "text": "ABANDONED"}]})
    forest.move_head(sid, fork.id)
    forest.append(sid, "user.message", {"content": [{"type": "text", "text": "inspect it"}]})
    forest.append(
        sid,
        "assistant.message",
        {
            "content": [
                {"type": "thinking", "thinking": "two tools", "signature": "sig"},
                {"type": "tool_call", "id": "t1", "name": "file", "input": {"p": "a.png"}},
                {"type": "tool_call", "id": "t2", "name": "size", "input": {"p": "a.png"}},
            ],
            "model": "META-model",
            "usage": {"input_tokens": 5},
        },
        stamp=stamp,
    )
    forest.append(sid, "tool.started", {"call_id": "t1", "name": "file", "input": {}})
    forest.append(sid, "tool.completed", {"call_id": "t1", "output": "PNG image"})
    forest.append(sid, "tool.completed", {"call_id": "t2", "output": "8 bytes", "is_error": False})
    messages = project(forest, sid)
    assert "ABANDONED" not in repr(messages) and "STAMP" not in repr(messages)
    return messages


def test_anthropic_sdk_sends_exactly_our_messages(forest: Forest, standin: Any) -> None:
    request = to_anthropic(_session(forest))
    client = anthropic.Anthropic(base_url=standin.url, api_key="test", max_retries=0)
    reply = client.messages.create(model="standin", max_tokens=16, **request)
    assert reply.content[0].type == "text" and reply.content[0].text == "ok"
    body = standin.last("/v1/messages")
    assert body["messages"] == request["messages"]
    assert body["system"] == request["system"] == "be brief"
    tool_results = body["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in tool_results] == ["t1", "t2"]


def test_openai_chat_sdk_sends_exactly_our_messages(forest: Forest, standin: Any) -> None:
    messages = to_openai(_session(forest), "chat")
    client = openai.OpenAI(base_url=standin.url + "/v1", api_key="test", max_retries=0)
    reply = client.chat.completions.create(model="standin", messages=messages)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "ok"
    body = standin.last("/v1/chat/completions")
    assert body["messages"] == messages
    assert [m["role"] for m in body["messages"]][-3:] == ["assistant", "tool", "tool"]


def test_openai_responses_sdk_sends_exactly_our_items(forest: Forest, standin: Any) -> None:
    items = to_openai(_session(forest), "responses")
    client = openai.OpenAI(base_url=standin.url + "/v1", api_key="test", max_retries=0)
    reply = client.responses.create(model="standin", input=items)  # type: ignore[arg-type]
    assert reply.output_text == "ok"
    body = standin.last("/v1/responses")
    assert body["input"] == items
    assert [i["type"] for i in body["input"]][-4:] == [
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]


def test_the_standin_refuses_unknown_paths(standin: Any) -> None:
    # Guards the stand-in: a request to a path it does not serve must not succeed.
    client = openai.OpenAI(base_url=standin.url + "/nope", api_key="test", max_retries=0)
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="standin", messages=[])
