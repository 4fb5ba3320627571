"""Renderers: provider-neutral messages (see projection.py) -> provider requests.

Anthropic Messages, OpenAI Chat Completions and OpenAI Responses, as plain
dicts shaped like each SDK's request types (no SDK import needed). Every
renderer re-checks tool pairing and moves results next to their call.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict

from .errors import InvalidArgument, ProjectionError
from .projection import Block, Message

__all__ = ["OPENING_TEXT", "AnthropicRequest", "to_anthropic", "to_openai"]

# Anthropic requires the first message to be the user's; when a context opens
# with an assistant turn (a greeting, say) this stands in front of it.
OPENING_TEXT = "(conversation start)"
_JOIN = "\n\n"

Json = dict[str, Any]


class AnthropicRequest(TypedDict):
    """Keyword arguments for `client.messages.create(model=..., max_tokens=..., **request)`."""

    system: NotRequired[str]
    messages: list[Json]


@dataclass(slots=True)
class _Turn:
    message: Message
    results: list[Message] = field(default_factory=list)  # answers to this turn's tool calls


def _turns(messages: Sequence[Message], session_id: str) -> list[_Turn]:
    """Non-tool messages in order, each assistant turn holding the results of its calls."""
    turns: list[_Turn] = []
    owner: dict[str, _Turn] = {}  # open call id -> the assistant turn that made it
    answered: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            call_id = message.get("tool_call_id", "")
            turn = owner.pop(call_id, None)
            if turn is None:
                why = "was already answered" if call_id in answered else "matches no earlier call"
                raise ProjectionError(
                    session_id, None, f"orphan tool result: call {call_id!r} {why}"
                )
            answered.add(call_id)
            turn.results.append(message)
            continue
        turn = _Turn(message)
        if message["role"] == "assistant":
            for block in message["content"]:
                if block["type"] != "tool_call":
                    continue
                if block["id"] in owner or block["id"] in answered:
                    raise ProjectionError(
                        session_id, None, f"tool call id {block['id']!r} is used twice"
                    )
                owner[block["id"]] = turn
        turns.append(turn)
    if owner:
        raise ProjectionError(
            session_id, None, f"tool call {next(iter(owner))!r} has no result to send with it"
        )
    return turns


def _texts(blocks: Sequence[Block]) -> list[str]:
    return [b["text"] for b in blocks if b["type"] == "text"]


# --- Anthropic Messages ------------------------------------------------------------


def to_anthropic(messages: Sequence[Message], *, session_id: str = "") -> AnthropicRequest:
    """Render for the Anthropic Messages API.

    System messages, wherever they stand, join into `system` (the API has one).
    Tool results become `tool_result` blocks leading the user message right
    after their tool_use; same-role neighbours merge so roles alternate.
    Thinking blocks without a signature are dropped: the API refuses them.
    """
    system: list[str] = []
    out: list[Json] = []
    for turn in _turns(messages, session_id):
        message = turn.message
        if message["role"] == "system":
            system.extend(_texts(message["content"]))
            continue
        blocks = [b for b in map(_anthropic_block, message["content"]) if b is not None]
        _emit(out, message["role"], blocks)
        _emit(out, "user", [_anthropic_result(r) for r in turn.results])
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": OPENING_TEXT}]})
    request: AnthropicRequest = {"messages": out}
    if system:
        request["system"] = _JOIN.join(system)
    return request


def _emit(out: list[Json], role: str, blocks: list[Json]) -> None:
    if not blocks:
        return
    # Results are emitted right after their assistant turn, so a merge only ever
    # appends after them: tool_result blocks always lead their user message.
    if out and out[-1]["role"] == role:
        out[-1]["content"] = out[-1]["content"] + blocks
    else:
        out.append({"role": role, "content": blocks})


def _anthropic_image(block: Block) -> Json:
    if "data" in block:
        source = {"type": "base64", "media_type": block["media_type"], "data": block["data"]}
    else:
        source = {"type": "url", "url": block["url"]}
    return {"type": "image", "source": source}


def _anthropic_block(block: Block) -> Json | None:
    btype = block["type"]
    if btype == "text":
        return {"type": "text", "text": block["text"]}
    if btype == "image":
        return _anthropic_image(block)
    if btype == "thinking":
        if "signature" not in block:
            return None
        return {"type": "thinking", "thinking": block["thinking"], "signature": block["signature"]}
    if btype == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block["data"]}
    if btype == "tool_call":
        return {
            "type": "tool_use",
            "id": block["id"],
            "name": block["name"],
            "input": copy.deepcopy(block["input"]),
        }
    return None


def _anthropic_result(result: Message) -> Json:
    content = [
        _anthropic_image(b) if b["type"] == "image" else {"type": "text", "text": b["text"]}
        for b in result["content"]
    ]
    return {
        "type": "tool_result",
        "tool_use_id": result.get("tool_call_id", ""),
        "content": content,
        "is_error": bool(result.get("is_error", False)),
    }


# --- OpenAI --------------------------------------------------------------------------


def to_openai(
    messages: Sequence[Message],
    api: Literal["chat", "responses"] = "chat",
    *,
    session_id: str = "",
) -> list[Json]:
    """Render for OpenAI: Chat Completions `messages` or Responses `input` items.

    Thinking and redacted thinking are dropped (OpenAI cannot take them back),
    and so is `is_error`, which neither API has a field for. Each tool result
    follows its assistant turn directly, as both APIs require.
    """
    turns = _turns(messages, session_id)
    if api == "chat":
        return [m for turn in turns for m in _chat(turn)]
    if api == "responses":
        return [item for turn in turns for item in _responses(turn)]
    raise InvalidArgument("api", f"expected chat or responses; got {api!r}")


def _image_url(block: Block) -> str:
    if "data" in block:
        return f"data:{block['media_type']};base64,{block['data']}"
    return str(block["url"])


def _arguments(block: Block) -> str:
    return json.dumps(block["input"], ensure_ascii=False)


def _chat(turn: _Turn) -> list[Json]:
    message = turn.message
    role = message["role"]
    if role == "system":
        return [{"role": "system", "content": _JOIN.join(_texts(message["content"]))}]
    if role == "user":
        parts = [
            {"type": "text", "text": b["text"]}
            if b["type"] == "text"
            else {"type": "image_url", "image_url": {"url": _image_url(b)}}
            for b in message["content"]
        ]
        return [{"role": "user", "content": parts}]
    text = _JOIN.join(_texts(message["content"]))
    calls = [
        {
            "id": b["id"],
            "type": "function",
            "function": {"name": b["name"], "arguments": _arguments(b)},
        }
        for b in message["content"]
        if b["type"] == "tool_call"
    ]
    if not text and not calls:
        return []  # nothing but thinking
    assistant: Json = {"role": "assistant", "content": text or None}
    if calls:
        assistant["tool_calls"] = calls
    tool_messages = [
        {
            "role": "tool",
            "tool_call_id": r.get("tool_call_id", ""),
            # Chat tool messages are text only; an image is named, not sent.
            "content": _JOIN.join(
                b["text"] if b["type"] == "text" else f"[image: {b['media_type']}]"
                for b in r["content"]
            ),
        }
        for r in turn.results
    ]
    return [assistant, *tool_messages]


def _responses(turn: _Turn) -> list[Json]:
    message = turn.message
    role = message["role"]
    if role in ("system", "user"):
        parts = [
            {"type": "input_text", "text": b["text"]}
            if b["type"] == "text"
            else {"type": "input_image", "image_url": _image_url(b), "detail": "auto"}
            for b in message["content"]
        ]
        return [{"type": "message", "role": role, "content": parts}]
    items: list[Json] = []
    pending_text: list[str] = []

    def flush() -> None:
        # Plain-string content: the SDK's output_text form needs an id and a
        # status that only the API can mint.
        if pending_text:
            items.append(
                {"type": "message", "role": "assistant", "content": _JOIN.join(pending_text)}
            )
            pending_text.clear()

    for block in message["content"]:
        if block["type"] == "text":
            pending_text.append(block["text"])
        elif block["type"] == "tool_call":
            flush()
            items.append(
                {
                    "type": "function_call",
                    "call_id": block["id"],
                    "name": block["name"],
                    "arguments": _arguments(block),
                }
            )
    flush()
    for result in turn.results:
        items.append(
            {
                "type": "function_call_output",
                "call_id": result.get("tool_call_id", ""),
                "output": _responses_output(result),
            }
        )
    return items


def _responses_output(result: Message) -> str | list[Json]:
    blocks = result["content"]
    if all(b["type"] == "text" for b in blocks):
        return _JOIN.join(_texts(blocks))
    return [
        {"type": "input_text", "text": b["text"]}
        if b["type"] == "text"
        else {"type": "input_image", "image_url": _image_url(b), "detail": "auto"}
        for b in blocks
    ]
