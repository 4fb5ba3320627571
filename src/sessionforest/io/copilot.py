"""GitHub Copilot CLI sessions (`~/.copilot/session-state/<id>/events.jsonl`, older
`session-state/<id>.jsonl`) as chats.

A line is an event `{type, data, id, timestamp, parentId}`; the events form a
tree by `parentId`, kept as the chat's tree (an event naming a parent that is
not an earlier event becomes a root, with a note). `user.message`,
`assistant.message` (its `toolRequests` as tool calls), `assistant.reasoning`
(as thinking) and `tool.execution_complete` (the result, paired by
`toolCallId`) are the conversation; `tool.execution_start` is a tool start;
`session.truncation` / `session.compaction_complete` are compactions; every
other event (session start/resume/shutdown, turns, usage, hooks, sub-agents,
model changes, errors, anything newer) is a hidden notification holding it
as it was.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from ..model import ChatSpec
from ..store.base import ChatWriter
from ..wrappers import title_of
from .blocks import text, tool_call
from .common import Ids, file_time, iso_time, lines
from .linechat import HIDDEN, Item, LineChat, read
from .position import Cursor
from .report import ImportRun, Notes

FORMAT = "copilot"
HARNESS = "copilot-cli"


def default_root() -> Path:
    home = os.environ.get("COPILOT_HOME")
    return (Path(home) if home else Path("~/.copilot").expanduser()) / "session-state"


def accept(path: Path) -> bool:
    return path.name == "events.jsonl" or (
        path.suffix == ".jsonl" and path.parent.name in ("session-state", "history-session-state")
    )


def _session(path: Path) -> dict[str, Any]:
    """The session.start event's data (the first lines), or {}."""
    with path.open("rb") as handle:
        for count, (_, raw) in enumerate(lines(handle)):
            if count > 20:
                break
            try:
                event = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if isinstance(event, dict) and event.get("type") == "session.start":
                data = event.get("data")
                return data if isinstance(data, dict) else {}
    return {}


def _said(context: dict[str, Any], key: str) -> str | None:
    value = context.get(key)
    return value if isinstance(value, str) and value else None


def import_file(run: ImportRun, path: Path, notes: Notes) -> None:
    follow(run, path, notes, None)


def follow(run: ImportRun, path: Path, notes: Notes, start: Cursor | None) -> Cursor:
    data = _session(path)
    fallback = path.parent.name if path.name == "events.jsonl" else path.stem
    source_id = str(data.get("sessionId") or fallback)
    ids = Ids(FORMAT, source_id)
    context: dict[str, Any] = data["context"] if isinstance(data.get("context"), dict) else {}
    created = iso_time(data.get("startTime"))
    spec = ChatSpec(
        ids.session,
        "",
        HARNESS,
        created or file_time(path),
        FORMAT,
        str(path),
        source_id,
        git_branch=_said(context, "branch"),
        origin_cwd=_said(context, "cwd"),
        git_commit=_said(context, "headCommit"),
        git_repository=_said(context, "repository"),  # owner/name, as Copilot names it
    )

    def make(writer: ChatWriter) -> LineChat:
        return _Chat(writer, ids, notes, created or writer.created_at, path)

    return read(run, path, notes, start, spec, make)


class _Chat(LineChat):
    PROVIDER = "copilot-cli"

    def feed(self, number: int, obj: dict[str, Any]) -> None:
        event_id = obj.get("id")
        if not isinstance(event_id, str) or not event_id:
            raise ValueError("an event needs a string 'id'")
        self.time = iso_time(obj.get("timestamp")) or self.time
        data: dict[str, Any] = obj["data"] if isinstance(obj.get("data"), dict) else {}
        item = self._item(str(obj.get("type")), data, obj)
        key = event_id
        if self.writer.seen(self.ids.entry(key)):  # an id met again: another event, or a copy
            key = f"{event_id}@{hashlib.blake2b(orjson.dumps(obj), digest_size=8).hexdigest()}"
        parent = obj.get("parentId")
        under: str | None = None
        if isinstance(parent, str) and parent:
            under = self.ids.entry(parent)
            if not self.writer.seen(under):
                self.notes.add(
                    f"line {number}: parent {parent} is not an earlier event: imported as a root"
                )
                under = None
        if item[0] == "user.message":
            self.head = under
            self.user_turn()
        self.say(key, item, number, f"event {event_id}", parent=under or False)

    def _item(self, etype: str, data: dict[str, Any], event: dict[str, Any]) -> Item:
        if etype == "user.message":
            words = data.get("content")
            words = words if isinstance(words, str) else orjson.dumps(words).decode()
            payload: dict[str, Any] = {"content": [text(words)]}
            if data.get("attachments"):
                payload["attachments"] = data["attachments"]
            if not self.first_prompt:
                self.first_prompt = title_of(words)
            return "user.message", payload, None
        if etype == "assistant.message":
            content: list[dict[str, Any]] = []
            if isinstance(data.get("reasoningText"), str) and data["reasoningText"]:
                content.append({"type": "thinking", "thinking": data["reasoningText"]})
            if isinstance(data.get("content"), str) and data["content"]:
                content.append(text(data["content"]))
            for request in data.get("toolRequests") or []:
                if isinstance(request, dict):
                    args = request.get("arguments")
                    if isinstance(args, str):
                        try:
                            args = orjson.loads(args)
                        except orjson.JSONDecodeError:
                            args = {"value": args}
                    content.append(tool_call(request.get("toolCallId"), request.get("name"), args))
            payload = {"content": content, "provider": "copilot"}
            if isinstance(data.get("model"), str):
                payload["model"] = data["model"]
            return "assistant.message", payload, None
        if etype == "assistant.reasoning":
            thinking = data.get("content")
            block = {"type": "thinking", "thinking": thinking if isinstance(thinking, str) else ""}
            return "assistant.message", {"content": [block], "provider": "copilot"}, None
        if etype == "tool.execution_start":
            args = data.get("arguments")
            return (
                "tool.started",
                {
                    "call_id": str(data.get("toolCallId") or "unknown"),
                    "name": str(data.get("toolName") or "tool"),
                    "input": args if isinstance(args, dict) else {"value": args},
                },
                None,
            )
        if etype == "tool.execution_complete":
            result = data.get("result")
            output = result.get("content") if isinstance(result, dict) else result
            done: dict[str, Any] = {"call_id": str(data.get("toolCallId") or "unknown")}
            done["output"] = output if isinstance(output, str) else orjson.dumps(output).decode()
            done["is_error"] = data.get("success") is False
            return "tool.completed", done, None
        if etype in ("session.truncation", "session.compaction_complete"):
            summary = data.get("summaryContent") or data.get("summary")
            if not isinstance(summary, str) or not summary.strip():
                summary = (
                    f"context {etype.removeprefix('session.')}: {data.get('reason', '')}".strip()
                )
            compaction: dict[str, Any] = {"summary": summary, "first_kept_entry_id": None}
            return "compaction", compaction | {"event": data}, None
        if etype == "session.model_change" and isinstance(data.get("newModel"), str):
            return "model.changed", {"model": data["newModel"]}, None
        if etype == "system.message" and isinstance(data.get("content"), str):
            return "system.message", {"content": [text(data["content"])], "role": "system"}, None
        return "provider.notification", {"provider": self.PROVIDER, "event": event}, HIDDEN
