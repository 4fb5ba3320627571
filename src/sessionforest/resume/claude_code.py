"""A path as a new Claude Code transcript: `<config>/projects/<cwd mangled>/<uuid>.jsonl`.

`<config>` is `CLAUDE_CONFIG_DIR`, else `~/.claude`; the folder name is the
working directory with every character but letters and digits made `-`, as
Claude Code names it (`claude --resume` looks in the folder of the directory
it runs in). Each turn is one record chained by `uuid`/`parentUuid`, carrying
the fields Claude Code 2.1 needs to resume a transcript it did not write
(`cwd`, `sessionId`, `version`, `timestamp`, `isSidechain`, `userType`).
Tool calls are `tool_use` blocks answered by `tool_result` blocks in the next
user record; ids Anthropic's API would refuse are rewritten consistently.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ResumeRefused
from .files import Written, folder, home, write_new
from .path import Block, Capabilities, Turn

TARGET = "claude-code"
FORMAT = "claude-code"  # its importer (io/claude_code.py)
CAN = Capabilities(TARGET, thinking_from="anthropic", user_images=True, result_images=True)
LONGEST = 200  # Claude Code shortens longer folder names with a hash of its own
_NOT_ID = re.compile(r"[^a-zA-Z0-9_-]")


def projects(env: Mapping[str, str]) -> Path:
    config = env.get("CLAUDE_CONFIG_DIR")
    return (Path(config) if config else home(env) / ".claude") / "projects"


def project_folder(env: Mapping[str, str], cwd: str) -> Path:
    name = re.sub(r"[^a-zA-Z0-9]", "-", cwd)
    root = projects(env)
    if len(name) <= LONGEST:
        return root / name
    # The hash Claude Code appends is its own: a folder it made already is found by its
    # prefix; none yet means Claude Code never ran there.
    found = sorted(root.glob(f"{name[:LONGEST]}-*")) if root.is_dir() else []
    if not found:
        raise ResumeRefused(
            TARGET, f"working directory {cwd}", "its name is too long to know the folder "
            "Claude Code keeps it in until Claude Code has run there once",
        )  # fmt: skip
    return found[0]


class _Ids:
    """Tool-use ids as Anthropic's API takes them (letters, digits, _ and -), the same
    source id always the same rewritten one."""

    def __init__(self) -> None:
        self._made: dict[str, str] = {}

    def __call__(self, call_id: str) -> str:
        if call_id not in self._made:
            clean = _NOT_ID.sub("_", call_id)
            if not clean or clean in self._made.values():
                clean = f"toolu_forest_{len(self._made) + 1}"
            self._made[call_id] = clean
        return self._made[call_id]


def write(
    turns: list[Turn],
    times: list[str],
    *,
    cwd: str,
    version: str,
    env: Mapping[str, str],
) -> Written:
    session = str(uuid.uuid4())
    where = folder(TARGET, project_folder(env, cwd))
    path = where / f"{session}.jsonl"
    ids = _Ids()
    records: list[dict[str, Any]] = []
    lines: dict[int, str] = {}
    parent: str | None = None
    for turn, time in zip(turns, times, strict=True):
        record_id = str(uuid.uuid4())
        record: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session,
            "version": version,
            "type": turn.role,
            "message": _user(turn, ids) if turn.role == "user" else _assistant(turn, ids),
            "uuid": record_id,
            "timestamp": time,
        }
        records.append(record)
        lines[len(records)] = turn.entries[-1]
        parent = record_id
    write_new(TARGET, path, records)
    return Written(path, session, ["claude", "--resume", session], FORMAT, session, lines,
                   len(records))  # fmt: skip


def _text_blocks(blocks: list[Block]) -> list[dict[str, Any]]:
    # Anthropic's API refuses an empty (or blank) text block.
    return [
        {"type": "text", "text": b["text"]}
        for b in blocks
        if b.get("type") == "text" and str(b.get("text", "")).strip()
    ]


def _image(block: Block) -> dict[str, Any]:
    if "data" in block:
        source = {"type": "base64", "media_type": block.get("media_type"), "data": block["data"]}
    else:
        source = {"type": "url", "url": block.get("url")}
    return {"type": "image", "source": source}


def _user(turn: Turn, ids: _Ids) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in turn.blocks:
        kind = block.get("type")
        if kind == "tool_result":
            output = block.get("output")
            if isinstance(output, list):
                parts = [_image(p) if p.get("type") == "image" else p for p in output]
                result: Any = [p for p in parts if p.get("type") == "image"] + _text_blocks(
                    [p for p in parts if p.get("type") == "text"]
                )
            else:
                result = str(output or "")
            content.append(
                {
                    "tool_use_id": ids(str(block["call_id"])),
                    "type": "tool_result",
                    "content": result,
                    "is_error": bool(block.get("is_error")),
                }
            )
        elif kind == "image":
            content.append(_image(block))
        elif kind == "text":
            content += _text_blocks([block])
    if not content:
        content = [{"type": "text", "text": "(empty message)"}]
    return {"role": "user", "content": content}


def _assistant(turn: Turn, ids: _Ids) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in turn.blocks:
        kind = block.get("type")
        if kind == "thinking":
            thinking = {"type": "thinking", "thinking": block.get("thinking", "")}
            thinking["signature"] = block.get("signature", "")
            content.append(thinking)
        elif kind == "redacted_thinking":
            content.append({"type": "redacted_thinking", "data": block.get("data")})
        elif kind == "tool_call":
            content.append(
                {
                    "type": "tool_use",
                    "id": ids(str(block.get("id") or "")),
                    "name": _NOT_ID.sub("_", str(block.get("name") or "tool"))[:128],
                    "input": block.get("input") if isinstance(block.get("input"), dict) else {},
                }
            )
        elif kind == "text":
            content += _text_blocks([block])
    if not any(b["type"] in ("text", "tool_use") for b in content):
        content.append({"type": "text", "text": "(no text)"})
    calls = any(b["type"] == "tool_use" for b in content)
    return {
        "id": f"msg_forest_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": turn.model if turn.provider == "anthropic" and turn.model else "unknown",
        "content": content,
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
