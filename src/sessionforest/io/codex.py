"""Codex CLI rollouts (`$CODEX_HOME/sessions/**/rollout-*.jsonl`, `archived_sessions/`) as chats.

A line is `{timestamp, type, payload}`. `response_item`s are the
conversation: messages, reasoning (as thinking), `function_call` /
`custom_tool_call` / `local_shell_call` / web and tool searches, their outputs
paired by `call_id`, `compaction`; `compacted` is a compaction too. The
`event_msg` copies of the same texts (`user_message`, `agent_message`,
`agent_reasoning`, `item_completed`) are not stored twice. `thread_rolled_back
{num_turns}` makes the next turn a branch from before the dropped turns.
Everything else (`session_meta`, `turn_context`, `world_state`, token counts
and the other events) is kept on the chat's hidden chain of notifications.

An entry's id hashes its record under its parent's id, so a file whose
`session_meta` has `forked_from_id` imports into its parent's chat as a
branch: the turns it copied from the parent are the parent's entries, and
only what follows the fork is new. A TUI rewind (Esc Esc, 0.171) leaves the
thread's file as it was and writes a new segment, `rollout-<ts>-<thread>_<segment>.jsonl`,
with the same thread id and a `history_base {thread_id, end_ordinal_exclusive,
end_byte_offset}` naming the file (by the id at the end of its name) and the place in
it where the kept history ends (no base: the rewind went back to the first prompt).
A segment imports into its thread's chat: the base is read again (entries met, not
re-added), so what the segment says branches from the last entry before the rewind
point. A 0.171 fork (`codex fork`) is read the same way: its `history_base`
names the parent's file, so its turns branch from the fork point in the
parent's chat. Sub-agent threads (`source.subagent`) are
hidden worker chats linked under their parent thread's chat. `session_meta`'s
`cwd` is the chat's origin_cwd and its `git` (branch, commit, remote) the
chat's provenance.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from ..model import ChatSpec, SessionVisibility
from ..store.base import ChatWriter
from ..wrappers import title_of
from .blocks import text, tool_call
from .common import Ids, file_time, iso_time, lines, one_line
from .linechat import HIDDEN, Item, LineChat, read
from .position import Cursor
from .report import ImportRun, Notes, link_worker
from .wrappers import wrapper_of

FORMAT = "codex"
HARNESS = "codex"
PEEK = 50  # lines read for the first session_meta

# event_msg types that repeat a response_item's text: not stored twice.
COPIES = frozenset(
    {"user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content"}
)
# item_completed / item_started items that copy a response_item.
COPIED_ITEMS = frozenset({"UserMessage", "AgentMessage", "Reasoning", "userMessage"})
OUTPUTS = ("function_call_output", "custom_tool_call_output", "tool_search_output")
CALLS = ("web_search_call", "tool_search_call", "image_generation_call")


def default_root() -> Path:
    return Path(os.environ.get("CODEX_HOME") or "~/.codex").expanduser()


def accept(path: Path) -> bool:
    return path.suffix == ".jsonl" and path.name.startswith("rollout-")


def order(files: list[Path]) -> list[Path]:
    """Oldest first by the rollout's own time in its name (a fork's parent is older), then
    sub-agent and forked files after the threads they come from."""
    return sorted(files, key=lambda p: (_derived(p), p.name))


def _derived(path: Path) -> bool:
    meta = _meta(path)
    forked = bool(meta.get("forked_from_id")) or _parent_thread(meta) is not None
    return forked or _segment(path, meta) is not None


def _thread_of(meta: dict[str, Any]) -> str | None:
    return _text(meta.get("id")) or _text(meta.get("session_id"))


def _segment(path: Path, meta: dict[str, Any]) -> str | None:
    """The segment id of a file a TUI rewind wrote for its thread (`..-<thread>_<segment>`,
    or a `history_base` in its session_meta), else None: the thread's own file."""
    thread = _thread_of(meta)
    if thread is not None and f"{thread}_" in path.stem:
        return path.stem.split(f"{thread}_", 1)[1] or None
    if isinstance(meta.get("history_base"), dict):
        return _digest({k: v for k, v in meta.items() if k != "_timestamp"})
    return None


def segment_of(path: Path) -> str | None:
    """The thread a rewind segment belongs to, by its name (`rollout-<ts>-<thread>_<segment>`,
    both uuids), without reading it; None for any other file."""
    stem = path.stem
    if not stem.startswith("rollout-") or "_" not in stem:
        return None
    thread = stem.rsplit("_", 1)[0][-36:]
    return thread if len(thread) == 36 and thread.count("-") == 4 else None


def _base(path: Path, meta: dict[str, Any]) -> tuple[Path, int | None, int | None] | None:
    """The file a segment's `history_base` names (by the id its name ends with, looked for
    under the same Codex home), with the ordinal and byte offset its kept history ends at."""
    base = meta.get("history_base")
    if not isinstance(base, dict) or not _text(base.get("thread_id")):
        return None
    name = str(base["thread_id"])
    ordinal = base.get("end_ordinal_exclusive")
    offset = base.get("end_byte_offset")
    pattern = f"rollout-*{name}.jsonl"
    places = [path.parent.glob(pattern)]  # the same day's folder first: most rewinds
    for parent in path.parents:
        if parent.name in ("sessions", "archived_sessions"):
            for root in (parent.parent / "sessions", parent.parent / "archived_sessions"):
                if root.is_dir():
                    places.append(root.glob(f"**/{pattern}"))
            break
    for place in places:
        for found in sorted(place):
            if found != path and found.stem.endswith((f"-{name}", f"_{name}")):
                return (
                    found,
                    ordinal if isinstance(ordinal, int) else None,
                    offset if isinstance(offset, int) else None,
                )
    return None


def _meta(path: Path) -> dict[str, Any]:
    """The first session_meta payload (bounded read), or {}."""
    try:
        with path.open("rb") as handle:
            for count, (_, raw) in enumerate(lines(handle)):
                if count >= PEEK:
                    break
                try:
                    obj = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(obj, dict) and obj.get("type") == "session_meta":
                    payload = obj.get("payload")
                    if isinstance(payload, dict):
                        return payload | {"_timestamp": obj.get("timestamp")}
    except OSError:
        return {}
    return {}


def _parent_thread(meta: dict[str, Any]) -> str | None:
    source = meta.get("source")
    if not isinstance(source, dict) or "subagent" not in source:
        return None
    sub = source["subagent"]
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    for where in (spawn, meta):
        if isinstance(where, dict) and isinstance(where.get("parent_thread_id"), str):
            return str(where["parent_thread_id"])
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def import_file(run: ImportRun, path: Path, notes: Notes) -> None:
    follow(run, path, notes, None)


def follow(run: ImportRun, path: Path, notes: Notes, start: Cursor | None) -> Cursor:
    meta = _meta(path)
    thread = _thread_of(meta) or path.stem
    parent_thread = _parent_thread(meta)
    forked = _text(meta.get("forked_from_id"))
    segment = _segment(path, meta)
    source_id = thread
    visibility = SessionVisibility.TOP_LEVEL
    if parent_thread is not None:
        visibility = SessionVisibility.HIDDEN
    elif forked is not None and _imported(run, forked):
        source_id = forked  # a fork is a branch of its parent's chat
    stored = segment is not None and _imported(run, thread)
    ids = Ids(FORMAT, source_id)
    created = iso_time(meta.get("timestamp")) or iso_time(meta.get("_timestamp"))
    git: dict[str, Any] = meta["git"] if isinstance(meta.get("git"), dict) else {}
    spec = ChatSpec(
        ids.session,
        "",
        HARNESS,
        created or file_time(path),
        FORMAT,
        str(path),
        source_id,
        visibility=visibility,
        git_branch=_text(git.get("branch")),
        origin_cwd=_text(meta.get("cwd")),
        git_commit=_text(git.get("commit_hash")),
        git_repository=_text(git.get("repository_url")),
    )
    if source_id != thread or stored:
        spec = _as_stored(run, spec)

    def make(writer: ChatWriter) -> LineChat:
        chat = _Chat(writer, ids, notes, created or writer.created_at, path)
        chat.thread = thread
        chat.part = thread if segment is None else f"{thread}_{segment}"
        if source_id != thread or stored:
            writer.continuing = True  # the parent's entries are met, not re-added
        if stored:
            chat.first_prompt = spec.title  # a rewind does not rename the chat
        if segment is not None and start is None:
            writer.continuing = True
            chat.replay(path, meta, set())
        return chat

    cursor = read(run, path, notes, start, spec, make)
    if parent_thread is not None:
        policy = {"imported_from": FORMAT, "source_id": thread, "parent_thread": parent_thread}
        link_worker(run.links, ids.session, Ids(FORMAT, parent_thread).session, policy, notes)
    return cursor


def _imported(run: ImportRun, thread: str) -> bool:
    try:
        run.links.session(Ids(FORMAT, thread).session)
    except Exception:  # UnknownSession, or a quarantined one: no parent to branch from
        return False
    return True


def _as_stored(run: ImportRun, spec: ChatSpec) -> ChatSpec:
    """A fork's spec for its parent's chat: the parent's own source path and description,
    so writing the fork's branch does not rewrite them."""
    info = run.links.session(spec.id)
    path = info.source_path or spec.source_path
    return ChatSpec(
        spec.id, info.title, spec.harness, info.created_at, FORMAT, path, spec.source_id,
        visibility=info.visibility, git_branch=info.git_branch, origin_cwd=info.origin_cwd,
    )  # fmt: skip


def _digest(value: Any) -> str:
    raw = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(raw, digest_size=10).hexdigest()


class _Chat(LineChat):
    PROVIDER = "codex"
    KEPT = ("thread", "part", "last_tokens", "calls")

    def __init__(self, writer: ChatWriter, ids: Ids, notes: Notes, time: str, path: Path) -> None:
        super().__init__(writer, ids, notes, time, path)
        self.thread = ""
        self.part = ""  # the file being read: its thread, or `<thread>_<segment>` (rewinds)
        self.last_tokens = ""  # the last token count kept (repeats are not)
        self.calls: list[list[str]] = []  # [name, call id] of flat calls awaiting a result

    def feed(self, number: int, obj: dict[str, Any]) -> None:
        self.time = iso_time(obj.get("timestamp")) or iso_time(obj.get("created_at")) or self.time
        rtype = obj.get("type")
        payload = obj.get("payload")
        if not isinstance(payload, dict):
            self._flat(number, obj)
            return
        if rtype == "response_item":
            self._item(number, payload)
        elif rtype == "compacted":
            summary = _text(payload.get("message")) or "(compacted)"
            compaction: dict[str, Any] = {"summary": summary, "first_kept_entry_id": None}
            history = payload.get("replacement_history")
            if isinstance(history, list):
                compaction["replacement_history"] = history
            self._say(number, ("compaction", compaction, None), payload)
        elif rtype == "event_msg":
            self._event(number, obj, payload)
        else:  # session_meta, turn_context, world_state, token_usage_record, newer types
            self._keep(number, obj)

    def replay(self, path: Path, meta: dict[str, Any], met: set[Path]) -> None:
        """Read again the history a rewind segment at `path` keeps (its `history_base`,
        and that file's own base before it), so the segment's records follow the entry
        the kept history ends with; a base that is gone is noted and the segment starts
        a new root."""
        found = _base(path, meta)
        if found is None:
            if isinstance(meta.get("history_base"), dict):
                self.notes.add(
                    f"the history this rewind kept ({meta['history_base'].get('thread_id')}) "
                    "was not found: its turns start a new root"
                )
            self.spoken = False
            return
        base, end_ordinal, end_offset = found
        if base in met:
            return  # a base naming itself again: read once
        met.add(base)
        base_meta = _meta(base)
        if _segment(base, base_meta) is not None:
            self.replay(base, base_meta, met)
        part = self.part
        base_thread = _thread_of(base_meta) or self.thread  # a fork's base: its parent's
        base_segment = _segment(base, base_meta)
        self.part = base_thread if base_segment is None else f"{base_thread}_{base_segment}"
        try:
            with base.open("rb") as handle:
                reader = lines(handle)
                for number, raw in reader:
                    if end_offset is not None and reader.offset > end_offset:
                        break
                    try:
                        obj = orjson.loads(raw)
                    except orjson.JSONDecodeError:
                        continue  # the base's own import reports it
                    if not isinstance(obj, dict):
                        continue
                    ordinal = obj.get("ordinal")
                    if (
                        isinstance(end_ordinal, int)
                        and isinstance(ordinal, int)
                        and ordinal >= end_ordinal
                    ):
                        break
                    self.feed(number, obj)
        except OSError as exc:
            self.notes.add(f"the history this rewind kept ({base}) is unreadable: {exc}")
        self.part = part
        self.spoken = False  # the segment is written once it has a turn of its own

    def _keep(self, number: int, obj: dict[str, Any]) -> None:
        self.notify(number, obj, f"{self.part or self.thread}#{number}")

    def _say(self, number: int, item: Item, raw: Any) -> None:
        self.say(f"{self.head or ''}/{_digest(raw)}", item, number)

    def _event(self, number: int, obj: dict[str, Any], payload: dict[str, Any]) -> None:
        etype = payload.get("type")
        if etype in COPIES:
            return
        if etype in ("item_completed", "item_started"):
            item = payload.get("item")
            if isinstance(item, dict) and item.get("type") in COPIED_ITEMS:
                return
        if etype == "thread_rolled_back":
            turns = payload.get("num_turns")
            if isinstance(turns, int) and not isinstance(turns, bool):
                self.rewind(turns, number)
        elif etype == "thread_name_updated" and _text(payload.get("thread_name")):
            self.title = one_line(payload["thread_name"])
        elif etype == "token_count":
            digest = _digest(payload.get("info"))
            if digest == self.last_tokens:
                return  # the same running total again
            self.last_tokens = digest
        self._keep(number, obj)

    def _item(self, number: int, item: dict[str, Any]) -> None:
        itype = item.get("type")
        mapped: Item | None = None
        if itype == "message":
            mapped = self._message(item)
        elif itype == "agent_message":
            mapped = self._message(item | {"role": "user"})
            mapped[1]["agent_message"] = {k: item.get(k) for k in ("author", "recipient")}
        elif itype == "reasoning":
            mapped = _reasoning(item)
        elif itype == "function_call":
            mapped = _call(item.get("call_id"), item.get("name"), _arguments(item.get("arguments")))
        elif itype == "custom_tool_call":
            mapped = _call(item.get("call_id"), item.get("name"), {"input": item.get("input")})
        elif itype == "local_shell_call":
            call_id = item.get("call_id") or item.get("id")
            mapped = _call(call_id, "local_shell", item.get("action"))
        elif itype in CALLS:
            call_id = item.get("call_id") or item.get("id") or f"{itype}-{number}"
            args = {k: v for k, v in item.items() if k not in ("type", "id", "call_id")}
            mapped = _call(call_id, itype.removesuffix("_call"), args)
        elif itype in OUTPUTS:
            mapped = _output(item.get("call_id"), item.get("output"))
        elif itype == "compaction":
            summary = _text(item.get("summary")) or "(compacted)"
            mapped = ("compaction", {"summary": summary, "first_kept_entry_id": None}, None)
        elif itype == "ghost_snapshot":
            commit = item.get("ghost_commit")
            sha = commit.get("id") if isinstance(commit, dict) else None
            if isinstance(sha, str) and sha:
                label = f"git snapshot {sha[:12]}"
                summary = "the worktree before the turn, as Codex keeps it for /undo"
                payload = {"label": label, "summary": summary, "ghost_commit": commit}
                mapped = ("checkpoint", payload, None)
        elif itype in ("tool_call", "tool_result"):
            self._flat(number, item)
            return
        if mapped is None:
            self._keep(number, {"type": "response_item", "payload": item})
            return
        self._say(number, mapped, item)

    def _message(self, item: dict[str, Any]) -> Item:
        role = item.get("role")
        blocks, other = _content(item.get("content"))
        words = "\n".join(b["text"] for b in blocks if b["type"] == "text")
        if role == "assistant":
            payload: dict[str, Any] = {"content": [b for b in blocks if b["type"] == "text"]}
            payload["provider"] = "openai"
            if other:
                payload["unsupported_blocks"] = other
            return "assistant.message", payload, None
        wrapper = wrapper_of(words) if role == "user" else None
        if role in ("developer", "system") or wrapper is not None:
            payload = {"content": [b for b in blocks if b["type"] == "text"] or [text("")]}
            payload |= {"role": role, "wrapper": wrapper or role}
            return "system.message", payload, None
        payload = {"content": blocks or [text("")]}
        if other:
            payload["unsupported_blocks"] = other
        self.user_turn()
        if not self.first_prompt:
            self.first_prompt = title_of(words)
        return "user.message", payload, None

    def _flat(self, number: int, obj: dict[str, Any]) -> None:
        """The older flat records (no payload): `{role, message|content}` messages and
        `function_call` / `function_result` (`tool_call` / `tool_result`) by name."""
        rtype, role = obj.get("type"), obj.get("role")
        if rtype in ("function_call", "tool_call"):
            function = obj.get("function")
            name = function.get("name") if isinstance(function, dict) else obj.get("name")
            call_id = obj.get("call_id") or f"call-{number}"
            self.calls.append([str(name), str(call_id)])
            self._say(number, _call(call_id, name, _arguments(obj.get("arguments"))), obj)
        elif rtype in ("function_result", "tool_result"):
            name = str(obj.get("name"))
            found = next((c for c in reversed(self.calls) if c[0] == name), None)
            if found is None:
                self._keep(number, obj)
                return
            self.calls.remove(found)
            self._say(number, _output(found[1], obj.get("result")), obj)
        elif role in ("user", "assistant", "developer", "system"):
            content = obj.get("content", obj.get("message"))
            if isinstance(content, str):
                content = [{"type": "input_text", "text": content}]
            self._say(number, self._message({"role": role, "content": content}), obj)
        else:
            self._keep(number, obj)


def _content(content: Any) -> tuple[list[dict[str, Any]], list[Any]]:
    if isinstance(content, str):
        return [text(content)], []
    blocks: list[dict[str, Any]] = []
    other: list[Any] = []
    for part in content if isinstance(content, list) else []:
        ptype = part.get("type") if isinstance(part, dict) else None
        if ptype in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            blocks.append(text(part["text"]))
        elif ptype == "input_image" and isinstance(part.get("image_url"), str):
            url = part["image_url"]
            if url.startswith("data:") and ";base64," in url:
                media, data = url[5:].split(";base64,", 1)
                blocks.append({"type": "image", "media_type": media, "data": data})
            else:
                blocks.append({"type": "image", "media_type": "image/png", "url": url})
        else:
            other.append(part)
    return blocks, other


def _reasoning(item: dict[str, Any]) -> Item:
    parts = [
        str(s["text"])
        for key in ("summary", "content")
        for s in (item.get(key) or [])
        if isinstance(s, dict) and isinstance(s.get("text"), str)
    ]
    thinking: dict[str, Any] = {"type": "thinking", "thinking": "\n\n".join(parts)}
    payload: dict[str, Any] = {"content": [thinking], "provider": "openai"}
    if isinstance(item.get("encrypted_content"), str):
        payload["encrypted_content"] = item["encrypted_content"]
    return "assistant.message", payload, None


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"value": raw}
    return raw


def _call(call_id: Any, name: Any, args: Any) -> Item:
    block = tool_call(str(call_id or ""), str(name or "tool"), args)
    return "assistant.message", {"content": [block], "provider": "openai"}, None


def _output(call_id: Any, output: Any) -> Item:
    payload: dict[str, Any] = {"call_id": str(call_id or "unknown")}
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        payload["output"] = output["content"]
        if output.get("success") is False:
            payload["is_error"] = True
    elif isinstance(output, str):
        payload["output"] = output
        try:
            parsed = orjson.loads(output)
        except orjson.JSONDecodeError:
            parsed = None
        meta = parsed.get("metadata") if isinstance(parsed, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("exit_code"), int):
            payload["is_error"] = meta["exit_code"] != 0
    else:
        payload["output"] = orjson.dumps(output).decode()
    return "tool.completed", payload, None


__all__ = [
    "FORMAT", "HIDDEN", "accept", "default_root", "follow", "import_file", "order", "segment_of",
]  # fmt: skip
