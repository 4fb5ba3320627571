"""Gemini CLI chats (`~/.gemini/tmp/<project>/chats/`) as chats, JSONL and the older JSON.

JSONL (v0.39+): a metadata line, then messages `{id, timestamp, type:
user|gemini|info|error|warning, content, toolCalls, thoughts, tokens,
model}`, `{"$set": ...}` updates and `{"$rewindTo": id}`. A message met again
under its id is a newer copy of it (the last wins): the newest message is
written once the next one begins, and a copy that comes after it was written
becomes a new version beside it, never an edit. `$rewindTo` makes what follows
a branch from before that message. `$set` of `messages` rewrites the history:
what it shares with the conversation is kept, what differs becomes a branch
from the last shared message, or, when nothing is shared, a compaction
followed by the new history. Every other `$set` and the info/warning/error
messages are kept on the hidden chain.

The older form is one JSON `ConversationRecord` per file (`sessionId`,
`messages`), or the oldest `{history: [{role, parts}]}`, read whole. The CLI's
`<session_context>` preamble is a system message (io/wrappers.py); a user
message that only echoes tool results is not stored again (the gemini
message's `toolCalls` carry the results). Sub-agent chats
(`chats/<parent>/<id>.jsonl`, `kind: "subagent"`) are hidden workers of their
parent chat. `/chat save TAG` files (`checkpoint-TAG.json`) become a checkpoint
on the chat whose conversation they saved.
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
from .common import MAX_LINE, Ids, file_time, iso_time, lines, unreadable
from .linechat import HIDDEN, Item, LineChat, read
from .position import Cursor
from .report import UNMAPPABLE, ImportRun, Notes, link_worker
from .wrappers import wrapper_of

FORMAT = "gemini"
HARNESS = "gemini-cli"
MAX_ROOT = 4096  # bytes read of a project's `.project_root` (one path)


def default_root() -> Path:
    home = os.environ.get("GEMINI_CLI_HOME")
    return (Path(home) / ".gemini" if home else Path("~/.gemini").expanduser()) / "tmp"


def accept(path: Path) -> bool:
    """Chat files: `chats/**.jsonl` and `chats/session-*.json`; `/chat save` checkpoints."""
    if path.suffix == ".jsonl":
        return "chats" in path.parts
    if path.suffix == ".json":
        return path.name.startswith(("session-", "checkpoint-"))
    return False


def order(files: list[Path]) -> list[Path]:
    """Main chats first, then sub-agent chats (their parent must be there), checkpoints last."""

    def rank(path: Path) -> tuple[int, str]:
        if path.name.startswith("checkpoint-"):
            return 2, str(path)
        return (1 if path.parent.name != "chats" else 0), str(path)

    return sorted(files, key=rank)


def _project(path: Path) -> str:
    """The project slug (or hash) a chat belongs to: the folder above `chats/`."""
    parts = path.parts
    if "chats" in parts:
        at = len(parts) - 1 - parts[::-1].index("chats")
        return parts[at - 1] if at > 0 else ""
    return path.parent.name


def _where(path: Path, header: dict[str, Any]) -> tuple[str | None, str | None]:
    """A chat's origin_cwd and origin_project: the directory the CLI wrote in its project
    folder's `.project_root` (since the slugs), and the folder's name (a slug; before
    them, the path's hash). A file outside `tmp/<project>/chats/`: its `projectHash`."""
    hashed = header.get("projectHash")
    if "chats" not in path.parts:
        return None, hashed if isinstance(hashed, str) and hashed else None
    project = _project(path)
    folder = Path(*path.parts[: len(path.parts) - 1 - path.parts[::-1].index("chats")])
    try:
        with (folder / ".project_root").open("rb") as handle:
            found = handle.read(MAX_ROOT).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        found = ""
    return (found if found and "\n" not in found else None), project or None


def _parent_session(path: Path) -> str | None:
    """`chats/<parentSessionId>/<id>.jsonl`: a sub-agent's parent session id."""
    return path.parent.name if path.parent.name != "chats" and "chats" in path.parts else None


def session_key(path: Path) -> str | None:
    """The session a main chat file is of, by its name (`chats/session-<minute>-<id8>.json*`),
    without reading it; None for any other file. A `--resume` in a later minute than the
    session's file was named in leaves a file of that minute holding only the session
    context (the turns go on in the first file): both have this key."""
    if path.parent.name != "chats" or not path.name.startswith("session-"):
        return None
    stem = path.name.split(".", 1)[0]
    return f"{path.parent}/{stem.rsplit('-', 1)[-1]}"


def _source_id(path: Path) -> str:
    parent = _parent_session(path)
    return "/".join(p for p in (_project(path), parent, path.stem) if p)


def _digest(value: Any) -> str:
    return hashlib.blake2b(
        orjson.dumps(value, option=orjson.OPT_SORT_KEYS), digest_size=8
    ).hexdigest()


def import_file(run: ImportRun, path: Path, notes: Notes) -> None:
    if path.name.startswith("checkpoint-"):
        _checkpoint(run, path, notes)
        return
    follow(run, path, notes, None)


def follow(run: ImportRun, path: Path, notes: Notes, start: Cursor | None) -> Cursor:
    if path.suffix == ".json":
        _whole(run, path, notes)
        return Cursor()
    header = _header(path)
    if header is None:
        notes.add("no metadata line yet: left for a later import")
        return Cursor()
    parent = _parent_session(path)
    source_id = _source_id(path)
    ids = Ids(FORMAT, source_id)
    hidden = parent is not None or header.get("kind") == "subagent"
    created = iso_time(header.get("startTime"))
    cwd, project = _where(path, header)
    spec = ChatSpec(
        ids.session,
        "",
        HARNESS,
        created or file_time(path),
        FORMAT,
        str(path),
        source_id,
        visibility=SessionVisibility.HIDDEN if hidden else SessionVisibility.TOP_LEVEL,
        origin_cwd=cwd,
        origin_project=project,
    )

    def make(writer: ChatWriter) -> LineChat:
        return _Chat(writer, ids, notes, created or writer.created_at, path)

    cursor = read(run, path, notes, start, spec, make)
    if hidden:
        parent_id = parent or str(header.get("parentSessionId") or "")
        parent_chat = _chat_of_session(path, parent_id) if parent_id else None
        policy = {"imported_from": FORMAT, "source_id": source_id}
        link_worker(run.links, ids.session, parent_chat, policy, notes)
    return cursor


def _header(path: Path) -> dict[str, Any] | None:
    with path.open("rb") as handle:
        for _, raw in lines(handle):
            try:
                found = orjson.loads(raw)
            except orjson.JSONDecodeError:
                return None
            return found if isinstance(found, dict) else None
    return None


def _chat_of_session(path: Path, session_id: str) -> str | None:
    """The chat id of the main chat file in this project whose metadata names `session_id`."""
    chats = path.parent.parent if path.parent.name != "chats" else path.parent
    for candidate in sorted(chats.glob(f"session-*{session_id[:8]}.json*")):
        return Ids(FORMAT, _source_id(candidate)).session
    return None


class _Chat(LineChat):
    PROVIDER = "gemini-cli"
    # `convo`: the conversation's messages as [message id, the entry before it, its last
    # entry, "turn" or ""], in order; `known`: every message written, id -> [before, last].
    KEPT = ("convo", "known", "answered", "summary")

    def __init__(self, writer: ChatWriter, ids: Ids, notes: Notes, time: str, path: Path) -> None:
        super().__init__(writer, ids, notes, time, path)
        self.convo: list[list[str]] = []
        self.known: dict[str, list[str]] = {}
        # Tool call ids whose results are stored (a dict: asked once per result, and a
        # list's `in` made a chat of n results cost n^2).
        self.answered: dict[str, None] = {}
        self.summary: str | None = None

    def restore(self, state: dict[str, Any]) -> None:
        super().restore(state)
        self.answered = dict.fromkeys(self.answered)  # a list in cursors saved before

    def feed(self, number: int, obj: dict[str, Any]) -> None:
        if "$rewindTo" in obj:
            self._rewind(number, obj["$rewindTo"])
        elif "$set" in obj:
            update = obj["$set"]
            if not isinstance(update, dict):
                raise ValueError("'$set' must be an object")
            if isinstance(update.get("messages"), list):
                self._replace(number, update["messages"])
            rest = {k: v for k, v in update.items() if k not in ("messages", "lastUpdated")}
            if isinstance(rest.get("summary"), str):
                self.summary = rest["summary"]
            if rest:
                self.notify(number, {"$set": rest})
        elif isinstance(obj.get("id"), str) and "type" in obj:
            self._message(number, obj)
        else:
            self.notify(number, obj)  # the metadata line, and anything newer

    def close(self) -> None:
        self.writer.summary = self.summary or self.writer.summary
        super().close()

    def _message(self, number: int | None, message: dict[str, Any], replay: bool = False) -> None:
        """One message, or a newer copy of one already read (the last copy wins: it goes on
        from where the message began, so what it shares with the earlier copy is met
        again and only what it adds, or says otherwise, is new). `replay`: a `$set` list
        restating a message already written where it stands is that message again."""
        self.time = iso_time(message.get("timestamp")) or self.time
        mid = str(message["id"])
        seen = self.known.get(mid)
        if replay and seen is not None and seen[0] == (self.head or ""):
            self._at(seen[1])
            self.convo.append([mid, seen[0], seen[1], ""])
            return
        if seen is not None:  # (only a message met before can be in the conversation)
            # From the end: the copy that goes on is nearly always of the last message.
            at = next((k for k in range(len(self.convo) - 1, -1, -1)
                       if self.convo[k][0] == mid), None)  # fmt: skip
            if at is not None:
                self.head = self.convo[at][1] or None
                del self.convo[at:]
        before = self.head or ""
        turn = ""
        for key, item in self._items(mid, message):
            if item[0] == "user.message":
                self.user_turn()
                turn = "turn"
            self.say(key, item, number, f"message {mid}")
        last = self.head or ""
        self.convo.append([mid, before, last, turn])
        self.known[mid] = [before, last]

    def _at(self, entry: str) -> None:
        self.head = entry or None
        if entry:
            self.writer.head = entry

    def _items(self, mid: str, message: dict[str, Any]) -> list[tuple[str, Item]]:
        """The message's entries, each keyed by what it says: the text, each tool call,
        each result (so a copy that only adds a result adds only that)."""
        mtype = message.get("type")
        if mtype == "user":
            return self._user(mid, message)
        if mtype in ("gemini", "model", "assistant"):
            return self._gemini(mid, message)
        item = ("provider.notification", {"provider": self.PROVIDER, "event": message}, HIDDEN)
        return [(f"{mid}@{_digest(message)}", item)]

    def _result(self, mid: str, call_id: str, name: Any, output: Any) -> tuple[str, Item]:
        payload = _completed(call_id, name, output)
        self.answered[call_id] = None
        return f"{mid}/result/{call_id}@{_digest(payload)}", ("tool.completed", payload, None)

    def _user(self, mid: str, message: dict[str, Any]) -> list[tuple[str, Item]]:
        blocks, results, other = _parts(message.get("content"))
        items = [
            self._result(mid, call_id, name, output)
            for call_id, name, output in results
            if call_id not in self.answered  # else a copy of the toolCalls' result
        ]
        if not blocks and not other:
            return items
        key = f"{mid}@{_digest([blocks, other])}"
        words = "\n".join(b["text"] for b in blocks if b["type"] == "text")
        wrapper = wrapper_of(words)
        if wrapper is not None:
            content = [b for b in blocks if b["type"] == "text"]
            payload = {"content": content, "role": "user", "wrapper": wrapper}
            return [*items, (key, ("system.message", payload, None))]
        payload = {"content": blocks or [text("")]}
        if other:
            payload["unsupported_blocks"] = other
        if not self.first_prompt:
            display = message.get("displayContent")
            self.first_prompt = title_of(display if isinstance(display, str) else words)
        return [*items, (key, ("user.message", payload, None))]

    def _gemini(self, mid: str, message: dict[str, Any]) -> list[tuple[str, Item]]:
        blocks, results, other = _parts(message.get("content"))
        content: list[dict[str, Any]] = []
        for thought in message.get("thoughts") or []:
            if isinstance(thought, dict):
                subject, said = thought.get("subject"), thought.get("description")
                words = "\n\n".join(str(p) for p in (subject, said) if isinstance(p, str) and p)
                content.append({"type": "thinking", "thinking": words})
        content += [b for b in blocks if b["type"] in ("text", "thinking")]
        base: dict[str, Any] = {"provider": "google"}
        if isinstance(message.get("model"), str):
            base["model"] = message["model"]
        items: list[tuple[str, Item]] = []
        if content or other or results or not message.get("toolCalls"):
            payload = {"content": content, **base}
            if isinstance(message.get("tokens"), dict):
                payload["usage"] = message["tokens"]
            if other or results:
                payload["unsupported_blocks"] = other + [list(r) for r in results]
            items.append((f"{mid}@{_digest(payload)}", ("assistant.message", payload, None)))
        calls = [c for c in message.get("toolCalls") or [] if isinstance(c, dict)]
        done: list[tuple[str, Item]] = []
        for call in calls:  # the calls, then their results (a later copy adds results)
            call_id = str(call.get("id") or call.get("callId") or "")
            block = tool_call(call_id, call.get("name"), call.get("args"))
            key = f"{mid}/call/{call_id}@{_digest(block)}"
            items.append((key, ("assistant.message", {"content": [block], **base}, None)))
            if call.get("result") is not None or call.get("status") in ("error", "cancelled"):
                key, item = self._result(mid, call_id, call.get("name"), call.get("result"))
                if call.get("status") in ("error", "cancelled"):
                    item[1]["is_error"] = True
                done.append((key, item))
        return items + done

    def _rewind(self, number: int, target: Any) -> None:
        known = [m[0] for m in self.convo]
        if not isinstance(target, str) or target not in known:
            self.notes.add(f"line {number}: $rewindTo {target!r} names no message read: ignored")
            return
        at = known.index(target)
        self._at(self.convo[at][1])
        del self.convo[at:]
        kept = {m[2] for m in self.convo} | {""}
        self.turns = [t for t in self.turns if (t or "") in kept]

    def _replace(self, number: int, messages: list[Any]) -> None:
        """`$set` of messages: what it shares with the conversation is kept; what differs is
        a branch from the last shared message, or a compaction when no user turn is shared
        (the history was summarised, as /compress does)."""
        wanted = [m for m in messages if isinstance(m, dict) and isinstance(m.get("id"), str)]
        shared = 0
        for mine, theirs in zip(self.convo, wanted, strict=False):
            if mine[0] != theirs["id"]:
                break
            shared += 1
        rest = wanted[shared:]
        if shared < len(self.convo):
            dropped_turn = any(m[3] for m in self.convo[shared:])
            kept_turn = any(m[3] for m in self.convo[:shared])
            new = [m for m in rest if m["id"] not in self.known]
            if dropped_turn and not kept_turn and new:
                # The compaction follows the conversation it summarises; the new history
                # goes on below it.
                summary = _summary(new) or "(history rewritten)"
                compaction = {"summary": summary, "first_kept_entry_id": None}
                key = f"compaction@{_digest(messages)}"
                self.say(key, ("compaction", compaction, None), number)
                self.convo = []
            else:
                self._at(self.convo[shared][1])
                del self.convo[shared:]
        for message in rest:
            self._message(number, message, replay=True)


def _summary(messages: list[dict[str, Any]]) -> str:
    for message in messages:
        blocks, _, _ = _parts(message.get("content"))
        words = " ".join(b["text"] for b in blocks if b["type"] == "text").strip()
        if words:
            return words
    return ""


def _parts(content: Any) -> tuple[list[dict[str, Any]], list[tuple[str, Any, Any]], list[Any]]:
    """(blocks, tool results (id, name, output), parts with no forest equivalent)."""
    if isinstance(content, str):
        return ([text(content)] if content else []), [], []
    blocks: list[dict[str, Any]] = []
    results: list[tuple[str, Any, Any]] = []
    other: list[Any] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            other.append(part)
        elif isinstance(part.get("text"), str):
            if part.get("thought") is True:
                blocks.append({"type": "thinking", "thinking": part["text"]})
            else:
                blocks.append(text(part["text"]))
        elif isinstance(part.get("inlineData"), dict) and isinstance(
            part["inlineData"].get("data"), str
        ):
            data = part["inlineData"]
            media = data.get("mimeType") if isinstance(data.get("mimeType"), str) else "image/png"
            blocks.append({"type": "image", "media_type": media, "data": data["data"]})
        elif isinstance(part.get("functionResponse"), dict):
            response = part["functionResponse"]
            call_id = str(response.get("id") or response.get("name") or "")
            results.append((call_id, response.get("name"), response.get("response")))
        else:
            other.append(part)
    return blocks, results, other


def _completed(call_id: str, name: Any, output: Any) -> dict[str, Any]:
    """A tool result: Gemini's `[{functionResponse: {response: {output}}}]` as its text."""
    found: Any = output
    if isinstance(found, list) and len(found) == 1 and isinstance(found[0], dict):
        found = found[0].get("functionResponse", found[0])
    if isinstance(found, dict) and isinstance(found.get("response"), dict):
        found = found["response"]
    if isinstance(found, dict) and isinstance(found.get("output"), str) and len(found) == 1:
        found = found["output"]
    payload: dict[str, Any] = {"call_id": call_id or "unknown"}
    payload["output"] = found if isinstance(found, str) else orjson.dumps(found).decode()
    if isinstance(found, dict) and "error" in found:
        payload["is_error"] = True
    if isinstance(name, str):
        payload["name"] = name
    return payload


# --- the older single-JSON form ------------------------------------------------------


def _load(path: Path) -> Any:
    raw = path.read_bytes()
    if len(raw) > MAX_LINE:
        raise ValueError(f"longer than {MAX_LINE / 2**20:g} MiB; not loaded")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(unreadable(raw, exc, "file", 1)) from None


def _whole(run: ImportRun, path: Path, notes: Notes) -> None:
    """A `ConversationRecord` (or the oldest `{history}`) file: one chat, read whole."""
    try:
        record = _load(path)
        if not isinstance(record, dict):
            raise ValueError("expected a JSON object (a Gemini CLI ConversationRecord)")
    except ValueError as exc:
        run.bad.bad(path, 1, f"{exc}; file not imported")
        return
    if run.progress is not None:
        run.progress.advance(path.stat().st_size)
    messages = record.get("messages")
    if not isinstance(messages, list):
        history = record.get("history")
        messages = (
            [_from_history(n, h) for n, h in enumerate(history or [])]
            if isinstance(history, list)
            else []
        )
    source_id = _source_id(path)
    ids = Ids(FORMAT, source_id)
    created = iso_time(record.get("startTime")) or iso_time(record.get("start_time"))
    cwd, project = _where(path, record)
    spec = ChatSpec(
        ids.session, "", HARNESS, created or file_time(path), FORMAT, str(path), source_id,
        origin_cwd=cwd, origin_project=project,
    )  # fmt: skip
    with run.bulk.bulk_chat(spec, path) as writer:
        chat = _Chat(writer, ids, notes, created or writer.created_at, path)
        meta = {k: v for k, v in record.items() if k not in ("messages", "history")}
        chat.notify(1, meta)
        for index, message in enumerate(messages):
            if not isinstance(message, dict) or not isinstance(message.get("id"), str):
                run.bad.bad(path, None, f"message {index + 1} has no string 'id'")
                continue
            try:
                chat._message(None, message)  # a repeated id: the last copy wins
            except UNMAPPABLE as exc:
                run.bad.unmappable(path, None, exc, f"message {message['id']}: ")
        if isinstance(record.get("summary"), str):
            chat.summary = record["summary"]
        chat.close()
    run.report.add(writer.result, FORMAT, path, source_id)


def _from_history(index: int, item: Any) -> Any:
    """One `{role, parts, ts}` of the oldest form as a message."""
    if not isinstance(item, dict):
        return item
    role = item.get("role")
    return {
        "id": f"history-{index}",
        "timestamp": item.get("ts"),
        "type": "user" if role == "user" else "gemini",
        "content": item.get("parts"),
    }


def _checkpoint(run: ImportRun, path: Path, notes: Notes) -> None:
    """`/chat save TAG`: a checkpoint labelled TAG on the chat whose turns it saved (the
    newest chat of this project holding its last text), below that text's entry."""
    tag = path.stem.removeprefix("checkpoint-")
    try:
        saved = _load(path)
    except ValueError as exc:
        run.bad.bad(path, 1, f"{exc}; checkpoint not imported")
        return
    history = saved.get("history") if isinstance(saved, dict) else saved
    said = [
        p["text"]
        for item in (history if isinstance(history, list) else [])
        if isinstance(item, dict)
        for p in item.get("parts") or []
        if isinstance(p, dict) and isinstance(p.get("text"), str) and wrapper_of(p["text"]) is None
    ]
    if not said:
        notes.add(f"checkpoint {tag!r} holds no turn: nothing to mark")
        return
    chats = sorted((path.parent / "chats").glob("*.json*"), reverse=True)
    for chat_file in chats:
        sid = Ids(FORMAT, _source_id(chat_file)).session
        try:
            entries = _entries_of(run, sid)
        except Exception:  # not imported (or quarantined): look further
            continue
        wanted = orjson.dumps(said[-1]).decode()[1:-1]  # as the stored JSON text holds it
        target = next((e for e in reversed(entries) if wanted in e[1]), None)
        if target is None:
            continue
        spec = ChatSpec(
            sid, "", HARNESS, file_time(path), FORMAT, stored_path(run, sid, chat_file),
            _source_id(chat_file),
        )  # fmt: skip
        stored = run.bulk.stored_session(sid)
        with run.bulk.bulk_chat(spec, chat_file) as writer:
            writer.continuing = True
            writer.title, writer.summary = stored.title, stored.summary
            writer.git_branch = stored.git_branch
            entry = Ids(FORMAT, _source_id(chat_file)).entry(f"checkpoint-{tag}")
            payload = {"label": tag, "summary": f"/chat save {tag}"}
            writer.add(
                entry,
                target[0],
                "checkpoint",
                payload,
                file_time(path),
                None,
                None,
                f"checkpoint {tag}",
            )
        run.report.add(writer.result, FORMAT, path, f"checkpoint-{tag}")
        return
    notes.add(f"checkpoint {tag!r}: no imported chat of this project holds its turns")


def stored_path(run: ImportRun, session_id: str, fallback: Path) -> str:
    return run.bulk.stored_session(session_id).source_path or str(fallback)


def _entries_of(run: ImportRun, session_id: str) -> list[tuple[str, str]]:
    """(entry id, its stored payload text) of a stored chat's messages."""
    out: list[tuple[str, str]] = []
    for stored in run.bulk.stored_entries(session_id):
        if stored.kind in ("user.message", "assistant.message"):
            out.append((stored.id, stored.payload))
    return out
