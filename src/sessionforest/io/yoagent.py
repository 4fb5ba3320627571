"""yoagent `Session` JSONL (`{"id","parent_id","message","timestamp","label"}` per line).

Import follows `Session.from_jsonl`: a bad line, a repeated id or a parent not
on an earlier line is an error naming the line; the head is the last line's
entry; a label becomes a checkpoint beside its entry. Export writes the active
tree as that library would: messages as `AgentMessage`, ids `e1, e2, ...`.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from ..errors import JsonlParseError, SessionDamaged
from ..ids import iso, parse_iso
from ..model import ChatSpec, Entry
from ..projection import BRANCH_PREAMBLE, COMPACTION_PREAMBLE
from ..session import _parse_line, _parse_record
from ..store.base import EntryReader
from ..wrappers import title_of
from . import blocks
from .common import TOO_LONG, Ids, Lines, file_time, json_lines
from .report import UNMAPPABLE, ImportRun, Notes

FORMAT = "yoagent"
Item = tuple[str, dict[str, Any], str | None]

# Our stop reasons come from several providers; yoagent has one vocabulary.
_STOP = {
    "end_turn": "stop",
    "stop": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "toolUse",
    "tool_calls": "toolUse",
    "toolUse": "toolUse",
    "max_tokens": "length",
    "length": "length",
    "error": "error",
    "aborted": "aborted",
    "refusal": "refusal",
    "content_filter": "refusal",
}


def _ms_to_iso(ms: int) -> str | None:
    try:
        return iso(datetime.fromtimestamp(ms / 1000, UTC))
    except (ValueError, OverflowError, OSError):
        return None


# --- import -------------------------------------------------------------------------


def import_file(run: ImportRun, path: Path, notes: Notes) -> None:
    with path.open("rb") as handle:
        first = next(Lines(handle), None)
    if first is None:
        notes.add("empty file skipped")
        return
    # A yoagent file names no session: its first line does. The same file,
    # or a longer version of it, is therefore always the same chat.
    source_id = hashlib.sha256(first[1]).hexdigest()[:32]
    ids = Ids(FORMAT, source_id)
    try:
        created = _ms_to_iso(_parse_line(first[1].decode(), first[0]).timestamp)
    except (JsonlParseError, UnicodeDecodeError):
        created = None  # the line is reported when the loop below reaches it
    spec = ChatSpec(
        ids.session, "", FORMAT, created or file_time(path), FORMAT, str(path), source_id
    )
    bad = run.bad
    known: set[str] = set()  # yoagent holds whole sessions in memory; so may its loader
    first_prompt = ""
    with run.bulk.bulk_chat(spec, path) as writer, path.open("rb") as handle:
        for number, value in json_lines(path, Lines(handle, run.progress), bad, notes):
            if value is TOO_LONG:
                continue
            try:
                entry = _parse_record(value, number)
            except JsonlParseError as exc:
                bad.bad(path, number, exc.reason)
                continue
            if entry.id in known:
                bad.bad(path, number, f"duplicate session entry id: {entry.id}")
                continue
            if entry.parent_id is not None and entry.parent_id not in known:
                bad.bad(
                    path,
                    number,
                    f"entry {entry.id} references unknown parent "
                    f"{entry.parent_id} (not on an earlier line)",
                )
                continue
            at = _ms_to_iso(entry.timestamp)
            if at is None:
                notes.add(f"line {number}: timestamp {entry.timestamp} is out of range")
                at = writer.created_at
            eid = ids.entry(entry.id)
            parent = ids.entry(entry.parent_id) if entry.parent_id is not None else None
            try:
                kind, payload, visibility = _item(entry.message)
                writer.add(
                    eid, parent, kind, payload, at, visibility, number, f"entry id {entry.id}"
                )
            except UNMAPPABLE as exc:
                bad.unmappable(path, number, exc)
                continue
            known.add(entry.id)
            writer.head = eid
            if entry.label is not None and entry.label.strip():
                checkpoint = {"label": entry.label, "summary": entry.label}
                label = f"the label of entry {entry.id}"
                entry_label = ids.entry(f"{entry.id}#label")
                writer.add(entry_label, eid, "checkpoint", checkpoint, at, None, number, label)
            if not first_prompt and kind == "user.message":
                first_prompt = title_of(
                    b["text"] for b in payload["content"] if b["type"] == "text"
                )
        writer.title = first_prompt
    run.report.add(writer.result, FORMAT, path, source_id)


def _item(message: dict[str, Any]) -> Item:
    mapped = blocks.from_agent_message(message.get("role"), message)
    if mapped is None:
        # A CustomMessage (UI notes, app bookkeeping): never sent to a model.
        return "provider.notification", {"provider": FORMAT, "event": message}, None
    kind, payload, other = mapped
    if kind == "assistant.message" and isinstance(message.get("errorMessage"), str):
        payload["error_message"] = message["errorMessage"]
    if other:
        payload["unsupported_blocks"] = other
    if isinstance(message.get("timestamp"), int):
        payload["timestamp"] = message["timestamp"]
    return kind, payload, None


# --- export -------------------------------------------------------------------------


def _ms(entry: Entry) -> int:
    try:
        return int(parse_iso(entry.created_at).timestamp() * 1000)
    except (ValueError, TypeError, OverflowError):
        # Stored by a writer that did not check it (`check` reports it as bad-time).
        raise SessionDamaged(
            entry.session_id,
            f"entry {entry.id}'s created_at {entry.created_at!r} is not an ISO 8601 time",
        ) from None


def _usage(usage: Any) -> dict[str, int]:
    u = usage if isinstance(usage, dict) else {}

    def num(*keys: str) -> int:
        for key in keys:
            value = u.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
        return 0

    out = {
        "input": num("input", "input_tokens", "prompt_tokens"),
        "output": num("output", "output_tokens", "completion_tokens"),
        "cacheRead": num("cacheRead", "cache_read", "cache_read_input_tokens"),
        "cacheWrite": num("cacheWrite", "cache_write", "cache_creation_input_tokens"),
    }
    out["totalTokens"] = num("totalTokens", "total_tokens") or out["input"] + out["output"]
    return out


def _message(kind: str, payload: dict[str, Any], ts: int, tools: dict[str, str]) -> Any:
    """The yoagent `AgentMessage` for an entry, fields in serde order; None: not exported."""
    ts = payload["timestamp"] if isinstance(payload.get("timestamp"), int) else ts
    if kind == "user.message":
        return {"role": "user", "content": blocks.to_agent(payload.get("content")), "timestamp": ts}
    if kind == "assistant.message":
        content = blocks.to_agent(payload.get("content"))
        for block in content:
            if block["type"] == "toolCall":
                tools[block["id"]] = block["name"]
        calls = any(b["type"] == "toolCall" for b in content)
        stop = _STOP.get(str(payload.get("stop_reason")), "toolUse" if calls else "stop")
        out = {
            "role": "assistant",
            "content": content,
            "stopReason": stop,
            "model": str(payload.get("model") or ""),
            "provider": str(payload.get("provider") or ""),
            "usage": _usage(payload.get("usage")),
            "timestamp": ts,
        }
        if isinstance(payload.get("error_message"), str):
            out["errorMessage"] = payload["error_message"]
        return out
    if kind == "tool.completed":
        call = str(payload.get("call_id", ""))
        return {
            "role": "toolResult",
            "toolCallId": call,
            "toolName": str(payload.get("name") or tools.get(call, "")),
            "content": blocks.to_agent(payload.get("output")),
            "isError": payload.get("is_error") is True,
            "timestamp": ts,
        }
    preamble = {"compaction": COMPACTION_PREAMBLE + "\n", "branch.summary": BRANCH_PREAMBLE + " "}
    if kind in preamble:
        text = preamble[kind] + str(payload.get("summary", ""))
        return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}
    return None


def export_session(reader: EntryReader, session_id: str, out: IO[str]) -> tuple[int, int]:
    """Write the session's tree as yoagent JSONL; returns (lines written, entries left out
    because they hang below the head, which yoagent's format must put on the last line)."""
    head = reader.head(session_id)
    anchor: dict[str, str | None] = {}  # our id -> its nearest exported ancestor-or-self
    records: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    tools: dict[str, str] = {}
    for entry in reader.iter_entries(session_id):
        up = anchor.get(entry.parent_id) if entry.parent_id is not None else None
        kind, payload = entry.kind, entry.payload
        if kind == "checkpoint" and up is not None:
            by_id[up]["label"] = payload.get("label")
            anchor[entry.id] = up
            continue
        message = None
        if kind == "provider.notification" and payload.get("provider") == FORMAT:
            message = payload.get("event")  # a yoagent CustomMessage, as it was
        elif entry.context_visibility == "context":
            message = _message(kind, payload, _ms(entry), tools)
        if message is None:
            anchor[entry.id] = up
            continue
        record = {
            "id": entry.id,
            "parent_id": up,
            "message": message,
            "timestamp": _ms(entry),
        }
        records.append(record)
        by_id[entry.id] = record
        anchor[entry.id] = entry.id
    target = anchor.get(head) if head is not None else None
    below: set[str] = set()
    if target is not None:
        # Records are in insertion order, so a parent is marked before its children.
        below.add(target)
        for record in records:
            if record["parent_id"] in below:
                below.add(record["id"])
        below.discard(target)
        records = [r for r in records if r["id"] not in below and r["id"] != target]
        records.append(by_id[target])
    names: dict[str, str] = {}
    written = []
    for n, record in enumerate(records, 1):
        names[record["id"]] = f"e{n}"
        line: dict[str, Any] = {
            "id": f"e{n}",
            "parent_id": names.get(record["parent_id"] or ""),
            "message": record["message"],
            "timestamp": record["timestamp"],
        }
        if record.get("label") is not None:
            line["label"] = record["label"]
        written.append(line)
    out.write("\n".join(orjson.dumps(line).decode() for line in written))
    return len(written), len(below)
