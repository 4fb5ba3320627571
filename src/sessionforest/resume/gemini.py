"""A path as a new Gemini CLI chat: `~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`.

`~/.gemini` is `$GEMINI_CLI_HOME/.gemini` when set. `<project>` is the short
name Gemini CLI 0.61 keeps for the working directory: the one its registry
(`projects.json`, only read) names, else the folder whose `.project_root`
names the directory, else a new folder named as Gemini CLI names one (the
directory's base name, lower-cased, every other character `-`, a counter
when taken) with its `.project_root`, which Gemini CLI adopts. The file is
JSONL as the CLI writes it: a metadata line, the `<session_context>`
message every chat of the CLI opens with, then `user` and `gemini` messages;
a gemini message carries its tool calls with their results
(`toolCalls[].result`), which is how the CLI resends them. (Gemini CLI does
not resend a user message that starts with `/` or `?`: it reads those as
commands.)
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from ..errors import ResumeRefused
from .files import Written, folder, home, write_new
from .path import Block, Capabilities, Turn, text_of

TARGET = "gemini"
FORMAT = "gemini"  # its importer (io/gemini.py)
CAN = Capabilities(TARGET, thinking_from="google", user_images=False, result_images=False)
MARKER = ".project_root"
# The id Gemini CLI gives the `<session_context>` message that opens each of its chats
# (sha256 of "environment-context", cut to 32): with it first, the CLI's own rewrite of
# the history when it resumes (`$set` of messages) restates the file instead of
# replacing it, and it sends the context it makes afresh, never this text.
CONTEXT_ID = hashlib.sha256(b"environment-context").hexdigest()[:32]
CONTEXT = (
    "<session_context>\nHanded over by sessionforest; Gemini CLI writes its own context "
    "when it resumes.\n</session_context>"
)


def gemini_home(env: Mapping[str, str]) -> Path:
    configured = env.get("GEMINI_CLI_HOME")
    return (Path(configured) if configured else home(env)) / ".gemini"


def slugify(name: str) -> str:
    slug = re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", name.lower())).strip("-")
    return slug or "project"


def _owner(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def project(root: Path, cwd: str) -> tuple[str, bool]:
    """The project folder name of `cwd` under `root`/tmp, and whether it is new (its
    `.project_root` still to be written)."""
    tmp = root / "tmp"
    try:
        registry = orjson.loads((root / "projects.json").read_bytes()).get("projects", {})
    except (OSError, orjson.JSONDecodeError, AttributeError):
        registry = {}
    registry = registry if isinstance(registry, dict) else {}
    named = registry.get(cwd)
    if isinstance(named, str) and _owner(tmp / named / MARKER) in (None, cwd):
        return named, False
    if tmp.is_dir():
        for candidate in sorted(tmp.iterdir()):
            if _owner(candidate / MARKER) == cwd:
                return candidate.name, False
    base, taken = slugify(os.path.basename(cwd.rstrip("/")) or "project"), set(registry.values())
    for counter in range(10_000):
        slug = base if counter == 0 else f"{base}-{counter}"
        if slug not in taken and not (tmp / slug).exists():
            return slug, True
    raise ResumeRefused(TARGET, f"project folder for {cwd}", f"no free name under {tmp}")


def write(
    turns: list[Turn],
    times: list[str],
    *,
    cwd: str,
    version: str,
    env: Mapping[str, str],
) -> Written:
    root = gemini_home(env)
    slug, new = project(root, cwd)
    where = folder(TARGET, root / "tmp" / slug / "chats")
    if new:
        marker = root / "tmp" / slug / MARKER
        try:
            with marker.open("x", encoding="utf-8") as out:
                out.write(cwd)
        except OSError as exc:
            raise ResumeRefused(TARGET, f"file {marker}", exc.strerror or str(exc)) from None
    session = str(uuid.uuid4())
    now = datetime.now(UTC)
    stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    path = where / f"session-{now.strftime('%Y-%m-%dT%H-%M')}-{session[:8]}.jsonl"
    header = {
        "sessionId": session,
        "projectHash": hashlib.sha256(cwd.encode()).hexdigest(),
        "startTime": stamp,
        "lastUpdated": stamp,
        "kind": "main",
    }
    context = {"id": CONTEXT_ID, "timestamp": stamp, "type": "user", "content": [{"text": CONTEXT}]}
    records: list[dict[str, Any]] = [header, context]
    lines: dict[int, str] = {}
    i = 0
    while i < len(turns):
        turn, at = turns[i], times[i]
        if turn.role == "assistant":
            answers = turns[i + 1] if i + 1 < len(turns) and turns[i + 1].role == "user" else None
            message, rest = _gemini(turn, answers, at)
            records.append(message)
            lines[len(records)] = (
                (answers or turn).entries[-1] if rest is None else turn.entries[-1]
            )
            if answers is not None:
                i += 1
                if rest is not None:
                    records.append(_user(rest, times[i]))
                    lines[len(records)] = rest.entries[-1]
        else:
            records.append(_user(turn, at))
            lines[len(records)] = turn.entries[-1]
        i += 1
    write_new(TARGET, path, records)
    argv = ["gemini", "--resume", session]
    return Written(path, session, argv, FORMAT, f"{slug}/{path.stem}", lines, len(records))


def _text(blocks: list[Block]) -> str:
    return "\n\n".join(str(b["text"]) for b in blocks if b.get("type") == "text" and b["text"])


def _user(turn: Turn, at: str) -> dict[str, Any]:
    words = _text([b for b in turn.blocks if b.get("type") != "tool_result"])
    return {
        "id": str(uuid.uuid4()),
        "timestamp": at,
        "type": "user",
        "content": [{"text": words or "(empty message)"}],
    }


def _gemini(turn: Turn, answers: Turn | None, at: str) -> tuple[dict[str, Any], Turn | None]:
    """The gemini message of `turn`, its calls answered from `answers` (the user turn after
    it: its results first); and what of `answers` is left for a user message (None: no
    user turn, or only results)."""
    results = {
        str(b["call_id"]): b
        for b in (answers.blocks if answers is not None else [])
        if b.get("type") == "tool_result"
    }
    calls = []
    for block in turn.blocks:
        if block.get("type") != "tool_call":
            continue
        call_id, name = str(block.get("id") or ""), str(block.get("name") or "tool")
        found = results.get(call_id, {})
        output = found.get("output", "")
        words = text_of(output) if isinstance(output, list) else str(output)
        response = {"functionResponse": {"id": call_id, "name": name,
                                         "response": {"output": words}}}  # fmt: skip
        calls.append(
            {
                "id": call_id,
                "name": name,
                "args": block.get("input") or {},
                "result": [response],
                "status": "error" if found.get("is_error") else "success",
                "timestamp": at,
            }
        )
    thoughts = [
        {"subject": "", "description": str(b.get("thinking", ""))}
        for b in turn.blocks
        if b.get("type") == "thinking"
    ]
    message: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "timestamp": at,
        "type": "gemini",
        "content": _text(turn.blocks),
        "thoughts": thoughts,
        "model": turn.model if turn.provider == "google" and turn.model else "unknown",
    }
    if calls:
        message["toolCalls"] = calls
    rest = None
    if answers is not None:
        left = [b for b in answers.blocks if b.get("type") != "tool_result"]
        if any(b.get("type") == "text" and str(b.get("text", "")).strip() for b in left):
            rest = Turn("user", left, answers.entries)
    return message, rest


__all__ = ["CAN", "FORMAT", "TARGET", "gemini_home", "project", "write"]
