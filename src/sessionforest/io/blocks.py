"""Messages and content blocks in the camelCase agent shape (pi, yoagent) <-> the forest's.

Both agents tag blocks by `type` (`text`, `image`, `thinking`, `toolCall`),
images carry `data` + `mimeType` and tool calls `arguments`; the forest uses
`media_type`, `input` and `tool_call` (see kinds.py). Their user, assistant
and toolResult messages map to entries alike (`from_agent_message`).
"""

from __future__ import annotations

from typing import Any

import orjson

Mapped = tuple[str, dict[str, Any], list[Any]]  # (kind, payload, unsupported blocks)


def text(value: Any) -> dict[str, Any]:
    return {
        "type": "text",
        "text": value if isinstance(value, str) else orjson.dumps(value).decode(),
    }


def tool_call(call_id: Any, name: Any, args: Any) -> dict[str, Any]:
    """A forest tool_call block; non-object arguments are wrapped, never dropped."""
    return {
        "type": "tool_call",
        "id": call_id,
        "name": name,
        "input": args if isinstance(args, dict) else {"value": args},
    }


def object_blocks(content: Any, what: str) -> list[dict[str, Any]]:
    """`content` (not a string) as the list of block objects it must be; a ValueError
    names `what` otherwise."""
    if not isinstance(content, list):
        raise ValueError(f"{what} must be a string or a list of blocks")
    for block in content:
        if not isinstance(block, dict):
            raise ValueError(f"{what} holds a block that is not an object")
    return content


def from_agent(content: Any, role: str) -> tuple[list[dict[str, Any]], list[Any]]:
    """(forest blocks, blocks with no forest equivalent) for a message of `role`.

    A plain string is one text block. Images are kept for user and tool
    messages; thinking and tool calls for assistant messages only.
    """
    if isinstance(content, str):
        return [text(content)], []
    out: list[dict[str, Any]] = []
    other: list[Any] = []
    for block in object_blocks(content, "content"):
        btype = block.get("type")
        if btype == "text":
            out.append(text(block.get("text", "")))
        elif btype == "image" and role != "assistant" and isinstance(block.get("data"), str):
            media = block.get("mimeType")
            out.append(
                {
                    "type": "image",
                    "data": block["data"],
                    "media_type": media if isinstance(media, str) else "image/png",
                }
            )
        elif btype == "thinking" and role == "assistant":
            redacted = block.get("redacted")
            if isinstance(redacted, str) and not block.get("thinking"):
                out.append({"type": "redacted_thinking", "data": redacted})
                continue
            thinking = {"type": "thinking", "thinking": block.get("thinking", "")}
            signature = block.get("signature", block.get("thinkingSignature"))
            if isinstance(signature, str):
                thinking["signature"] = signature
            out.append(thinking)
        elif btype == "toolCall" and role == "assistant":
            out.append(tool_call(block.get("id"), block.get("name"), block.get("arguments")))
        else:
            other.append(block)
    return out, other


def from_agent_message(role: Any, message: dict[str, Any]) -> Mapped | None:
    """(kind, payload, blocks with no forest equivalent) for a message of `role` (user,
    assistant or toolResult); None for any other role.

    Each format adds what it carries besides, then `unsupported_blocks`: payload
    keys keep that order, because the stored text is what a re-import compares.
    """
    payload: dict[str, Any]
    if role == "user":
        return user_message(message.get("content"))
    if role == "assistant":
        content, other = from_agent(message.get("content"), "assistant")
        payload = {"content": content}
        for key in ("model", "provider"):
            if isinstance(message.get(key), str):
                payload[key] = message[key]
        if isinstance(message.get("stopReason"), str):
            payload["stop_reason"] = message["stopReason"]
        if isinstance(message.get("usage"), dict):
            payload["usage"] = message["usage"]
        return "assistant.message", payload, other
    if role == "toolResult":
        content, other = from_agent(message.get("content"), "tool")
        payload = {
            "call_id": message.get("toolCallId"),
            "output": content,
            "is_error": message.get("isError") is True,
        }
        if isinstance(message.get("toolName"), str):
            payload["name"] = message["toolName"]
        return "tool.completed", payload, other
    return None


def user_message(content: Any) -> Mapped:
    """A user message of `content` (never empty: a model needs a block to see)."""
    blocks, other = from_agent(content, "user")
    return "user.message", {"content": blocks or [text("")]}, other


def to_agent(blocks: Any) -> list[dict[str, Any]]:
    """Forest blocks as yoagent `Content` (serde field order: type first)."""
    if isinstance(blocks, str):
        return [{"type": "text", "text": blocks}]
    out: list[dict[str, Any]] = []
    for block in blocks if isinstance(blocks, list) else ():
        btype = block.get("type") if isinstance(block, dict) else None
        if btype == "text":
            out.append({"type": "text", "text": block.get("text", "")})
        elif btype == "image":
            data = block.get("data") or block.get("url") or ""
            out.append({"type": "image", "data": data, "mimeType": block.get("media_type", "")})
        elif btype == "thinking":
            thinking: dict[str, Any] = {"type": "thinking", "thinking": block.get("thinking", "")}
            if block.get("signature") is not None:
                thinking["signature"] = block["signature"]
            out.append(thinking)
        elif btype == "redacted_thinking":
            out.append({"type": "thinking", "thinking": "", "redacted": block.get("data", "")})
        elif btype == "tool_call":
            out.append(
                {
                    "type": "toolCall",
                    "id": block.get("id", ""),
                    "name": block.get("name", ""),
                    "arguments": block.get("input", {}),
                }
            )
    return out
