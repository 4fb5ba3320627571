"""Cline and Roo Code tasks (VS Code `globalStorage/<extension>/tasks/<taskId>/`) as chats.

A task folder is one chat: `api_conversation_history.json` is the
conversation in Anthropic's message format (text, images, tool_use and
tool_result blocks, mapped as Claude Code's are); `ui_messages.json` is what
the extension showed (`{ts, type: ask|say, say, text, lastCheckpointHash,
conversationHistoryIndex, conversationHistoryDeletedRange}`): each message's
time comes from it where it points at one (`conversationHistoryIndex`), a
deleted range (the extension dropped messages from the model's context)
becomes a compaction at that point, and a checkpoint hash (its hidden git
checkpoint) a checkpoint on the entry it was taken at. `task_metadata.json`
and anything else the UI recorded are kept as hidden notifications. Roo Code
keeps the same layout under its own extension id.

The chat's working directory (origin_cwd): the task's entry in the extension's
index, `state/taskHistory.json` beside `tasks/` (`cwdOnTaskInitialization`,
Roo Code's `workspace`, else the checkpoints' `shadowGitConfigWorkTree`), else
what the extension told the model on the first turn, its `<environment_details>`
line `# Current Working Directory (DIR) Files` (Roo Code: `Workspace`), in the
history or in the request `ui_messages.json` records (`api_req_started`).
`task_metadata.json` names no directory (files in context, model usage, the
host's environment).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from ..model import ChatSpec
from ..wrappers import title_of
from . import claude_code_map as cmap
from .common import MAX_LINE, Ids, file_time, iso_time, unreadable
from .report import UNMAPPABLE, ImportRun, Notes

FORMAT = "cline"
HARNESS = "cline"
HIDDEN = "hidden"
HISTORY = "api_conversation_history.json"
_TASK = re.compile(r"<task>\s*(.*?)\s*</task>", re.DOTALL)
_CWD = re.compile(r"# Current (?:Working|Workspace) Directory \((.+?)\) Files")
INDEX = ("state", "taskHistory.json")
CWD_KEYS = ("cwdOnTaskInitialization", "workspace", "shadowGitConfigWorkTree")


def accept(path: Path) -> bool:
    return path.name == HISTORY


def _load(path: Path) -> Any:
    raw = path.read_bytes()
    if len(raw) > MAX_LINE:
        raise ValueError(f"{path.name} is longer than {MAX_LINE / 2**20:g} MiB; not loaded")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"{path.name}: {unreadable(raw, exc, 'file', 1)}") from None


def import_file(run: ImportRun, path: Path, notes: Notes) -> None:
    folder = path.parent if path.is_file() else path
    history_path = folder / HISTORY
    try:
        history = _load(history_path)
        if not isinstance(history, list):
            raise ValueError(f"{HISTORY} must be a JSON array of messages")
        ui_path = folder / "ui_messages.json"
        ui = _load(ui_path) if ui_path.is_file() else []
        meta_path = folder / "task_metadata.json"
        meta = _load(meta_path) if meta_path.is_file() else None
    except ValueError as exc:
        run.bad.bad(history_path, None, f"{exc}; task not imported")
        return
    if run.progress is not None:
        run.progress.advance(history_path.stat().st_size)
    ui = [m for m in ui if isinstance(m, dict)] if isinstance(ui, list) else []
    task = folder.name
    ids = Ids(FORMAT, task)
    first_ts = next((iso_time(m.get("ts")) for m in ui if iso_time(m.get("ts"))), None)
    created = first_ts or file_time(history_path)
    cwd = _indexed_cwd(folder) or _told_cwd(history, ui)
    spec = ChatSpec(
        ids.session, "", HARNESS, created, FORMAT, str(history_path), task, origin_cwd=cwd
    )
    # ui messages by the history index they point at: times, checkpoints, deleted ranges.
    at: dict[int, list[dict[str, Any]]] = {}
    for message in ui:
        index = message.get("conversationHistoryIndex")
        if isinstance(index, int) and not isinstance(index, bool):
            at.setdefault(index, []).append(message)
    with run.bulk.bulk_chat(spec, history_path) as writer:
        head: str | None = None
        meta_entry: str | None = None
        time = created
        if meta is not None:
            entry = ids.entry("task_metadata")
            event = {"task_metadata": meta}
            writer.add(
                entry,
                None,
                "provider.notification",
                {"provider": HARNESS, "event": event},
                time,
                HIDDEN,
            )
            head = meta_entry = entry
        title = ""
        for index, message in enumerate(history):
            marks = at.get(index, [])
            time = (
                next((t for t in (iso_time(m.get("ts")) for m in marks) if t), None)
                or (iso_time(message.get("ts")) if isinstance(message, dict) else None)
                or time
            )
            try:
                if not isinstance(message, dict):
                    raise ValueError("a message must be an object")
                role = message.get("role")
                if role not in ("user", "assistant"):
                    raise ValueError(f"role must be user or assistant, not {role!r}")
                items = cmap.entries({"type": role, "message": message})
            except UNMAPPABLE as exc:
                run.bad.unmappable(history_path, None, exc, f"message {index + 1}: ")
                continue
            for k, (kind, payload, visibility) in enumerate(items):
                entry = ids.entry(f"{index}#{k}" if k else str(index))
                writer.add(
                    entry, head, kind, payload, time, visibility, None, f"message {index + 1}"
                )
                head = entry
            if not title and role == "user":
                words = cmap.text_of_message({"message": message})
                task_words = _TASK.search(words)  # Cline wraps the user's task in <task> tags
                title = title_of(task_words.group(1) if task_words else words)
            head = _marks(writer, ids, index, marks, head, time)
        tip = meta_entry  # what the UI kept that points at no message: a hidden chain
        for number, message in enumerate(ui):
            if not isinstance(message.get("conversationHistoryIndex"), int):
                entry = ids.entry(f"ui#{number}")
                event = {"ui_message": message}
                payload = {"provider": HARNESS, "event": event}
                when = iso_time(message.get("ts")) or time
                writer.add(entry, tip, "provider.notification", payload, when, HIDDEN)
                tip = entry
        writer.head = head
        task_name = meta.get("task") if isinstance(meta, dict) else None
        writer.title = title or (task_name if isinstance(task_name, str) else "") or task
    run.report.add(writer.result, FORMAT, history_path, task)


def _indexed_cwd(folder: Path) -> str | None:
    """The task's directory as the extension's task index records it (None: no index, or
    no entry of this task in it)."""
    root = folder.parent.parent  # <extension>/tasks/<task> -> <extension>
    for index in (root.joinpath(*INDEX), root / INDEX[1]):
        if not index.is_file():
            continue
        try:
            items = _load(index)
        except (OSError, ValueError):
            return None
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and str(item.get("id")) == folder.name:
                for key in CWD_KEYS:
                    value = item.get(key)
                    if isinstance(value, str) and value.strip():
                        return value
                return None
    return None


def _told_cwd(history: list[Any], ui: list[dict[str, Any]]) -> str | None:
    """The working directory the extension's first environment details name."""
    texts: list[str] = []
    for message in history[:2]:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                texts.append(block["text"])
    for m in ui:
        if m.get("say") == "api_req_started" and isinstance(m.get("text"), str):
            try:  # the request as JSON text: {"request": "...", "tokensIn": ...}
                request = orjson.loads(m["text"]).get("request")
            except (orjson.JSONDecodeError, AttributeError):
                request = None
            if isinstance(request, str):
                texts.append(request)
                break
    for words in texts:
        found = _CWD.search(words)
        if found:
            return found.group(1)
    return None


def _marks(
    writer: Any, ids: Ids, index: int, marks: list[dict[str, Any]], head: str | None, time: str
) -> str | None:
    """The deleted ranges and checkpoints the UI recorded at history message `index`."""
    for number, mark in enumerate(marks):
        deleted = mark.get("conversationHistoryDeletedRange")
        if isinstance(deleted, list) and len(deleted) == 2:
            summary = f"messages {deleted[0]} to {deleted[1]} dropped from the model's context"
            payload = {"summary": summary, "first_kept_entry_id": None, "deleted_range": deleted}
            entry = ids.entry(f"{index}/deleted/{number}")
            writer.add(entry, head, "compaction", payload, time)
            head = entry
        checkpoint = mark.get("lastCheckpointHash")
        if isinstance(checkpoint, str) and checkpoint and head is not None:
            entry = ids.entry(f"{index}/checkpoint/{checkpoint}")
            if not writer.seen(entry):
                payload = {
                    "label": f"checkpoint {checkpoint[:12]}",
                    "summary": "Cline checkpoint",
                    "hash": checkpoint,
                }
                writer.add(entry, head, "checkpoint", payload, time)
    return head
