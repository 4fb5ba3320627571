"""A path as a new Codex rollout: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.

`$CODEX_HOME` defaults to `~/.codex`. The first line is the `session_meta`
Codex 0.171 reads a rollout's id, working directory and provider from; each
turn is `response_item`s as Codex resends them (`message`, `reasoning` with
its encrypted content, `function_call` followed by its
`function_call_output`), with the `event_msg` copies its TUI shows history
from. The id is a UUIDv7 like Codex's own, so `codex resume --last` orders it.
"""

from __future__ import annotations

import secrets
import time
import tomllib
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from .files import Written, folder, home, write_new
from .path import Capabilities, Turn, text_of

TARGET = "codex"
FORMAT = "codex"  # its importer (io/codex.py)
CAN = Capabilities(TARGET, thinking_from="openai", user_images=True, result_images=False)


def codex_home(env: Mapping[str, str]) -> Path:
    configured = env.get("CODEX_HOME")
    return Path(configured) if configured else home(env) / ".codex"


def uuid7(now_ms: int | None = None) -> str:
    """A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms & (2**48 - 1)) << 80 | secrets.randbits(80)
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 4122 variant
    return str(uuid.UUID(int=value))


def _provider(root: Path) -> str:
    """The model provider the user's config names (Codex's default: openai)."""
    try:
        config = tomllib.loads((root / "config.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return "openai"
    named = config.get("model_provider")
    return named if isinstance(named, str) and named else "openai"


def write(
    turns: list[Turn],
    times: list[str],
    *,
    cwd: str,
    version: str,
    env: Mapping[str, str],
) -> Written:
    now = datetime.now(UTC)
    thread = uuid7(int(now.timestamp() * 1000))
    root = codex_home(env)
    where = folder(TARGET, root / "sessions" / now.strftime("%Y/%m/%d"))
    path = where / f"rollout-{now.strftime('%Y-%m-%dT%H-%M-%S')}-{thread}.jsonl"
    stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    meta = {
        "id": thread,
        "timestamp": stamp,
        "cwd": cwd,
        "originator": "sessionforest",
        "cli_version": version,
        "source": "cli",
        "model_provider": _provider(root),
    }
    records: list[dict[str, Any]] = [{"timestamp": stamp, "type": "session_meta", "payload": meta}]
    lines: dict[int, str] = {}
    for turn, at in zip(turns, times, strict=True):
        for payload, kind in _items(turn):
            records.append({"timestamp": at, "type": kind, "payload": payload})
            lines[len(records)] = turn.entries[-1]
    write_new(TARGET, path, records)
    argv = ["codex", "resume", thread]
    return Written(path, thread, argv, FORMAT, thread, lines, len(records))


def _items(turn: Turn) -> list[tuple[dict[str, Any], str]]:
    out: list[tuple[dict[str, Any], str]] = []
    if turn.role == "user":
        parts: list[dict[str, Any]] = []
        for block in turn.blocks:
            kind = block.get("type")
            if kind == "tool_result":
                output = block.get("output")
                words = text_of(output) if isinstance(output, list) else str(output or "")
                item = {"type": "function_call_output", "call_id": block["call_id"],
                        "output": words}  # fmt: skip
                out.append((item, "response_item"))
            elif kind == "text" and str(block.get("text", "")).strip():
                parts.append({"type": "input_text", "text": block["text"]})
            elif kind == "image":
                parts.append({"type": "input_image", "image_url": _image_url(block)})
        if parts:
            message = {"type": "message", "role": "user", "content": parts}
            out.append((message, "response_item"))
            said = "\n".join(p["text"] for p in parts if p["type"] == "input_text")
            images = [p["image_url"] for p in parts if p["type"] == "input_image"]
            out.append(({"type": "user_message", "message": said, "images": images}, "event_msg"))
        return out
    thinking = [b for b in turn.blocks if b.get("type") == "thinking"]
    if thinking and turn.encrypted is not None:
        summary = [{"type": "summary_text", "text": str(b.get("thinking", ""))} for b in thinking]
        reasoning = {"type": "reasoning", "summary": summary, "content": None,
                     "encrypted_content": turn.encrypted}  # fmt: skip
        out.append((reasoning, "response_item"))
    for block in turn.blocks:
        kind = block.get("type")
        if kind == "text" and str(block.get("text", "")).strip():
            content = [{"type": "output_text", "text": block["text"]}]
            out.append(({"type": "message", "role": "assistant", "content": content},
                        "response_item"))  # fmt: skip
            out.append(({"type": "agent_message", "message": block["text"]}, "event_msg"))
        elif kind == "tool_call":
            call = {
                "type": "function_call",
                "name": str(block.get("name") or "tool"),
                "arguments": orjson.dumps(block.get("input") or {}).decode(),
                "call_id": str(block.get("id")),
            }
            out.append((call, "response_item"))
    return out


def _image_url(block: dict[str, Any]) -> str:
    if "data" in block:
        return f"data:{block.get('media_type') or 'image/png'};base64,{block['data']}"
    return str(block.get("url") or "")


__all__ = ["CAN", "FORMAT", "TARGET", "codex_home", "uuid7", "write"]
