"""pi coding-agent sessions (`~/.pi/agent/sessions/**/*.jsonl`) as chats.

Line 1 is a `session` header; v1 files are linear (no ids), v2/v3 entries
carry `id`/`parentId`. Compactions, branch summaries and model changes map to
forest kinds; the latest label of an entry becomes a checkpoint beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..model import ChatSpec
from ..store.base import ChatWriter
from ..wrappers import title_of
from . import blocks
from .common import (
    TOO_LONG,
    Ids,
    Lines,
    file_time,
    iso_time,
    json_lines,
    parse,
    too_long,
)
from .report import UNMAPPABLE, ImportRun, Notes

FORMAT = "pi"
PROVIDER = "pi"
HIDDEN = "hidden"
Item = tuple[str, dict[str, Any], str | None]  # (kind, payload, visibility or default)


def import_file(run: ImportRun, path: Path, notes: Notes) -> None:
    bad = run.bad
    with path.open("rb") as handle:
        reader = Lines(handle, run.progress)
        first = next(reader, None)
        if first is None:
            notes.add("empty file skipped")
            return
        number, raw = first
        try:
            header = parse(raw) if raw != TOO_LONG else None
        except ValueError as exc:
            bad.bad(path, number, f"{exc}; file not imported")
            return
        if raw == TOO_LONG:
            bad.bad(path, number, f"{too_long()}; file not imported")
            return
        if not (
            isinstance(header, dict)
            and header.get("type") == "session"
            and isinstance(header.get("id"), str)
            and header["id"]
        ):
            bad.bad(
                path,
                number,
                "the first line must be a pi session header "
                '({"type": "session", "id": ...}); file not imported',
            )
            return
        version = header.get("version", 1)
        ids = Ids(FORMAT, header["id"])
        stated = iso_time(header.get("timestamp"))
        created = stated or file_time(path)
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
        spec = ChatSpec(
            ids.session, "", FORMAT, created, FORMAT, str(path), header["id"], origin_cwd=cwd
        )
        with run.bulk.bulk_chat(spec, path) as writer:
            start = stated or writer.created_at  # the stored chat's time on re-imports
            chat = _Chat(writer, ids, notes, start, linear=version == 1)
            for number, obj in json_lines(path, reader, bad, notes):
                # pi numbers the entries it could parse, header = 0: v1
                # compactions point at entries by that index (an over-long
                # line counts: pi would have parsed it).
                chat.index += 1
                if obj is TOO_LONG:
                    continue
                try:
                    if not isinstance(obj, dict):
                        raise ValueError("expected a JSON object")
                    chat.feed(number, obj)
                except UNMAPPABLE as exc:
                    bad.unmappable(path, number, exc)
            chat.close()
    run.report.add(writer.result, FORMAT, path, header["id"])


class _Chat:
    def __init__(
        self, writer: ChatWriter, ids: Ids, notes: Notes, start: str, linear: bool
    ) -> None:
        self.writer = writer
        self.ids = ids
        self.notes = notes
        self.time = start
        self.linear = linear
        self.index = 0
        self._labels: dict[str, tuple[str | None, str, str]] = {}  # target -> (label, key, time)
        self._name: str | None = None
        self._first_prompt = ""

    def feed(self, number: int, obj: dict[str, Any]) -> None:
        self.time = iso_time(obj.get("timestamp")) or self.time
        parent: str | None
        source: str | None = None  # v1 entries have no id of their own
        if self.linear:
            key, parent = f"#{self.index}", self.writer.head
        else:
            given = obj.get("id")
            if not isinstance(given, str) or not given:
                raise ValueError("a v2/v3 entry needs a string 'id'")
            key, parent = given, self._parent(number, obj.get("parentId"))
            source = f"entry id {given}"
        kind, payload, visibility = self._item(obj, key)
        entry = self.ids.entry(key)
        self.writer.add(entry, parent, kind, payload, self.time, visibility, number, source)
        self.writer.head = entry

    def _parent(self, number: int, parent_id: Any) -> str | None:
        if parent_id is None:
            return None
        if not isinstance(parent_id, str):
            raise ValueError("'parentId' must be a string or null")
        parent = self.ids.entry(parent_id)
        if self.writer.seen(parent):
            return parent
        self.notes.add(
            f"line {number}: parent {parent_id} is not earlier in the file: imported as a root"
        )
        return None

    def _ref(self, value: Any) -> str | None:
        return self.ids.entry(value) if isinstance(value, str) and value else None

    def _item(self, obj: dict[str, Any], key: str) -> Item:
        etype = obj.get("type")
        if etype == "message":
            message = obj.get("message")
            if not isinstance(message, dict):
                raise ValueError("a message entry needs a 'message' object")
            return self._message(message)
        if etype == "compaction":
            first = obj.get("firstKeptEntryId")
            index = obj.get("firstKeptEntryIndex")
            if self.linear and isinstance(index, int) and 0 < index < self.index:
                first = f"#{index}"
            kept = self._ref(first)
            if kept is not None and not self.writer.seen(kept):
                self.notes.add(f"compaction {key} keeps from {first}, not an earlier entry")
                kept = None
            payload: dict[str, Any] = {"summary": obj.get("summary"), "first_kept_entry_id": kept}
            if isinstance(obj.get("tokensBefore"), int):
                payload["tokens_before"] = obj["tokensBefore"]
            return "compaction", payload, None
        if etype == "branch_summary":
            return (
                "branch.summary",
                {"summary": obj.get("summary"), "from_entry_id": self._ref(obj.get("fromId"))},
                None,
            )
        if etype == "model_change":
            payload = {"model": obj.get("modelId")}
            if isinstance(obj.get("provider"), str):
                payload["provider"] = obj["provider"]
            return "model.changed", payload, None
        if etype == "label" and isinstance(obj.get("targetId"), str):
            label = obj.get("label")
            self._labels[obj["targetId"]] = (
                label if isinstance(label, str) else None,
                key,
                self.time,
            )
        elif etype == "session_info" and isinstance(obj.get("name"), str):
            self._name = obj["name"].strip() or None
        elif etype == "custom_message":
            kind, payload, other = blocks.user_message(obj.get("content"))
            return kind, _with_other(payload, other), None
        # thinking_level_change, label, session_info, custom and anything newer:
        # kept as they were, never shown to a model.
        return "provider.notification", {"provider": PROVIDER, "event": obj}, None

    def _message(self, message: dict[str, Any]) -> Item:
        role = message.get("role")
        # pi's custom and hook messages reach the model as user messages.
        as_role = "user" if role in ("custom", "hookMessage") else role
        mapped = blocks.from_agent_message(as_role, message)
        if mapped is not None:
            kind, payload, other = mapped
            if role == "user" and not self._first_prompt:
                content = payload["content"]
                self._first_prompt = title_of(b["text"] for b in content if b["type"] == "text")
            return kind, _with_other(payload, other), None
        if role == "bashExecution":
            # What pi sends a model for a `!command`: the command and its output.
            text = f"Ran `{message.get('command', '')}`\n```\n{message.get('output', '')}\n```"
            payload = {
                "content": [blocks.text(text)],
                "bash": {
                    k: message[k]
                    for k in ("command", "exitCode", "cancelled", "truncated")
                    if k in message
                },
            }
            hidden = HIDDEN if message.get("excludeFromContext") is True else None
            return "user.message", payload, hidden
        return "provider.notification", {"provider": PROVIDER, "event": message}, None

    def close(self) -> None:
        """Write each entry's latest label as a checkpoint beside it (an empty one clears)."""
        for target, (label, key, at) in self._labels.items():
            if not label:
                continue
            parent = self.ids.entry(target)
            if not self.writer.seen(parent):
                self.notes.add(f"label {label!r} names entry {target}, which is not in the file")
                continue
            payload = {"label": label, "summary": label}
            entry = self.ids.entry(f"{key}#checkpoint")
            source = f"the label of entry {target}"
            self.writer.add(entry, parent, "checkpoint", payload, at, None, None, source)
        self.writer.title = self._name or self._first_prompt


def _with_other(payload: dict[str, Any], other: list[Any]) -> dict[str, Any]:
    if other:
        payload["unsupported_blocks"] = other
    return payload
