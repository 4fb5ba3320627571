"""One Claude Code record -> the forest entries that carry it.

User lines become a user message and one tool.completed per tool_result
block; assistant lines an assistant message (tool_use -> tool_call); every
other record (system, progress, attachment, snapshots, ...) a hidden
provider notification holding the record as it was. Nothing is dropped.
"""

from __future__ import annotations

from typing import Any

import orjson

from .. import wrappers
from .blocks import object_blocks, tool_call
from .blocks import text as _text

Items = list[tuple[str, dict[str, Any], str | None]]  # (kind, payload, visibility or default)

PROVIDER = "claude-code"
HIDDEN = "hidden"
# Claude Code wraps local commands (/clear, !shell) and their output in these
# tags and chains them below a "Caveat" meta message: they are no turn of the
# conversation, so they never make a branch or a title.
LOCAL_COMMAND = ("<command-", "<local-command-", "<bash-")


def is_boundary(obj: dict[str, Any]) -> bool:
    return obj.get("type") == "system" and obj.get("subtype") == "compact_boundary"


def notification(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "provider.notification", {"provider": PROVIDER, "event": obj}


def compaction(obj: dict[str, Any], summary: str | None) -> tuple[str, dict[str, Any], None]:
    """A compact_boundary as a compaction entry; `summary` is its summary message's text."""
    text = summary if summary and summary.strip() else None
    if text is None:
        content = obj.get("content")
        text = content if isinstance(content, str) and content.strip() else "(compacted)"
    payload: dict[str, Any] = {"summary": text, "first_kept_entry_id": None}
    meta = obj.get("compactMetadata")
    if isinstance(meta, dict):
        tokens = meta.get("preTokens")
        if isinstance(tokens, int) and not isinstance(tokens, bool):
            payload["tokens_before"] = tokens
    return "compaction", payload, None


def entries(obj: dict[str, Any]) -> Items:
    kind = obj.get("type")
    if kind == "user":
        return _user(obj)
    if kind == "assistant":
        return [_assistant(obj)]
    return [(*notification(obj), None)]


def _message(obj: dict[str, Any]) -> dict[str, Any]:
    message = obj.get("message")
    if not isinstance(message, dict):
        raise ValueError(f"a {obj.get('type')} record needs a 'message' object")
    return message


def _image(block: dict[str, Any]) -> dict[str, Any] | None:
    source = block.get("source")
    if not isinstance(source, dict):
        return None
    media = source.get("media_type")
    media = media if isinstance(media, str) else "application/octet-stream"
    if source.get("type") == "base64" and isinstance(source.get("data"), str):
        return {"type": "image", "media_type": media, "data": source["data"]}
    if source.get("type") == "url" and isinstance(source.get("url"), str):
        return {"type": "image", "media_type": media, "url": source["url"]}
    return None


def _user(obj: dict[str, Any]) -> Items:
    message = _message(obj)
    content = message.get("content")
    # The summary that opens a compacted context: the compaction entry carries
    # it to models, so this copy is kept for reading and search only.
    visibility = HIDDEN if obj.get("isCompactSummary") is True else None
    if isinstance(content, str):
        payload: dict[str, Any] = {"content": [_text(content)]}
        if content.lstrip().startswith(LOCAL_COMMAND):
            payload["local_command"] = True
        return [("user.message", payload, visibility)]
    out: Items = []
    blocks: list[dict[str, Any]] = []
    other: list[Any] = []
    for block in object_blocks(content, "message.content"):
        btype = block.get("type")
        if btype == "tool_result":
            out.append(("tool.completed", _tool_result(block), None))
        elif btype == "text":
            blocks.append(_text(block.get("text", "")))
        elif btype == "image" and (image := _image(block)) is not None:
            blocks.append(image)
        else:
            other.append(block)
    if blocks or other or not out:
        payload = {"content": blocks or [_text("")]}
        if other:
            payload["unsupported_blocks"] = other
        out.append(("user.message", payload, visibility))
    return out


def _tool_result(block: dict[str, Any]) -> dict[str, Any]:
    content = block.get("content")
    output: Any
    if content is None:
        output = ""
    elif isinstance(content, str):
        output = content
    elif isinstance(content, list):
        output = []
        for part in content:
            image = _image(part) if isinstance(part, dict) and part.get("type") == "image" else None
            if image is not None:
                output.append(image)
            elif isinstance(part, dict) and part.get("type") == "text":
                output.append(_text(part.get("text", "")))
            else:
                output.append(_text(part))
    else:
        output = orjson.dumps(content).decode()
    return {
        "call_id": block.get("tool_use_id"),
        "output": output,
        "is_error": block.get("is_error") is True,
    }


def _assistant(obj: dict[str, Any]) -> tuple[str, dict[str, Any], None]:
    message = _message(obj)
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    other: list[Any] = []
    for block in object_blocks(content, "message.content"):
        btype = block.get("type")
        if btype == "text":
            blocks.append(_text(block.get("text", "")))
        elif btype == "thinking":
            thinking = {"type": "thinking", "thinking": block.get("thinking", "")}
            if isinstance(block.get("signature"), str):
                thinking["signature"] = block["signature"]
            blocks.append(thinking)
        elif btype == "redacted_thinking":
            blocks.append({"type": "redacted_thinking", "data": block.get("data")})
        elif btype == "tool_use":
            blocks.append(tool_call(block.get("id"), block.get("name"), block.get("input")))
        else:
            other.append(block)
    payload: dict[str, Any] = {"content": blocks, "provider": "anthropic"}
    if isinstance(message.get("model"), str):
        payload["model"] = message["model"]
    stop = message.get("stop_reason")
    if stop is None or isinstance(stop, str):
        payload["stop_reason"] = stop
    if isinstance(message.get("usage"), dict):
        payload["usage"] = message["usage"]
    if other:
        payload["unsupported_blocks"] = other
    return "assistant.message", payload, None


def text_of_message(obj: dict[str, Any]) -> str:
    """The plain text of a record's message (text blocks joined)."""
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def prompt_title(obj: dict[str, Any]) -> str:
    """The title a real user prompt gives its chat (its first line of the user's own
    words: harness wrappers and image placeholders left out, wrappers.title_of), else ""."""
    if obj.get("type") != "user" or obj.get("isMeta") or obj.get("isCompactSummary"):
        return ""
    return wrappers.title_of(text_of_message(obj))
