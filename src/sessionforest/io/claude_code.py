"""Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`) as chats.

One chat per session file, its tree from `uuid`/`parentUuid`; sidechains and
subagent files become hidden worker chats linked under their parent chat in
the agent tree. Record -> entry mapping lives in `claude_code_map.py`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..model import ChatSpec, SessionVisibility
from ..store.base import ChatWriter
from ..text import plural
from . import claude_code_map as cmap
from .common import Ids, Lines, Mark, file_time, iso_time, lines, objects, one_line
from .position import Cursor
from .report import UNMAPPABLE, ImportRun, Notes, Progress, link_worker

FORMAT = "claude-code"
DEFAULT_ROOT = Path("~/.claude/projects")
# Lines read past a compaction boundary while waiting for its summary message
# before it is written with a stand-in summary.
HOLD = 1000
PEEK = 200  # lines read ahead for a file's first timestamp, cwd and session id


def _is_agent(path: Path) -> bool:
    return path.name.startswith("agent-") or path.parent.name == "subagents"


def order(files: list[Path]) -> list[Path]:
    """Session files first, then subagent files: a worker is linked under a parent chat
    that is already imported."""
    return [p for p in files if not _is_agent(p)] + [p for p in files if _is_agent(p)]


@dataclass(slots=True)
class _Peek:
    created_at: str | None = None
    cwd: str | None = None
    session_id: str | None = None
    has_lines: bool = False


def _peek(path: Path) -> _Peek:
    """What the first lines say: bounded, and from a prefix, so a longer file agrees."""
    found = _Peek()
    with path.open("rb") as handle:
        for count, (_, raw) in enumerate(lines(handle)):
            found.has_lines = True
            if count >= PEEK or (found.created_at and found.cwd and found.session_id):
                break
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(obj, dict):
                continue
            found.created_at = found.created_at or _record_time(obj)
            if isinstance(obj.get("cwd"), str) and found.cwd is None:
                found.cwd = obj["cwd"]
            if isinstance(obj.get("sessionId"), str) and obj.get("uuid") and not found.session_id:
                found.session_id = obj["sessionId"]
    return found


def _record_time(obj: dict[str, Any]) -> str | None:
    """A record's own time: `timestamp`, or a file-history snapshot's (a file holding
    only snapshots, a chat that never got a turn, is still dated when it ran)."""
    snapshot = obj.get("snapshot")
    return iso_time(obj.get("timestamp")) or (
        iso_time(snapshot.get("timestamp")) if isinstance(snapshot, dict) else None
    )


def _agent_parent(path: Path) -> str | None:
    """The parent session of a nested subagent file (`<session>/subagents/agent-*.jsonl`)."""
    return path.parent.parent.name if path.parent.name == "subagents" else None


class _OnlySidechains(Exception):
    """A session file with no main-thread line: it is imported as a worker instead."""


def import_file(run: ImportRun, path: Path, notes: Notes) -> None:
    follow(run, path, notes, None)


def follow(run: ImportRun, path: Path, notes: Notes, start: Cursor | None) -> Cursor:
    """Import `path` from `start` (None: from its first line); returns where it stopped.

    A session file is up to two chats (its main thread, and its sidechains as a
    worker), each read from its own place: the cursor's state holds one per pass.
    """
    passes: dict[str, Any] = dict(start.state) if start is not None else {}
    peek = _peek(path)
    if not peek.has_lines:
        notes.add("empty file skipped")
        return Cursor()
    agent_parent = _agent_parent(path)
    progress = run.progress
    if agent_parent is None and not path.name.startswith("agent-") and ALL not in passes:
        try:
            main = _chat(run, path, peek, path.stem, MAIN, progress, notes, _at(passes, MAIN))
        except _OnlySidechains:
            progress = None  # the bytes were counted by the pass that found out
        else:
            passes[MAIN] = main.cursor
            if main.sidechains:
                source_id = f"{path.stem}/sidechain"
                side = _worker(
                    run, path, peek, source_id, SIDE, main.id, notes, None, _at(passes, SIDE)
                )
                passes[SIDE] = side
            return _joined(passes)
    parent = agent_parent or peek.session_id
    source_id = f"{parent}/{path.stem}" if parent else path.stem
    parent_chat = Ids(FORMAT, parent).session if parent else None
    passes = {
        ALL: _worker(
            run, path, peek, source_id, ALL, parent_chat, notes, progress, _at(passes, ALL)
        )
    }
    return _joined(passes)


def _at(passes: dict[str, Any], which: str) -> Cursor | None:
    found = passes.get(which)
    if isinstance(found, Cursor):
        return found
    if isinstance(found, dict) and isinstance(found.get("state"), dict):
        return Cursor(Mark(int(found.get("offset", 0)), int(found.get("line", 0))), found["state"])
    return None


def _joined(passes: dict[str, Any]) -> Cursor:
    """One cursor for the file: at the pass that is furthest behind, each pass's own kept."""
    cursors = {k: c for k in passes if (c := _at(passes, k)) is not None}
    state = {
        k: {"offset": c.mark.offset, "line": c.mark.line, "state": c.state}
        for k, c in cursors.items()
    }
    marks = [c.mark for c in cursors.values()]
    return Cursor(min(marks, key=lambda m: m.offset) if marks else Mark(), state)


# Which records of a file a pass writes.
MAIN, SIDE, ALL = "main thread", "sidechain", "all"


@dataclass(frozen=True, slots=True)
class _Written:
    id: str
    sidechains: int
    cursor: Cursor


def _chat(
    run: ImportRun,
    path: Path,
    peek: _Peek,
    source_id: str,
    which: str,
    progress: Progress | None,
    notes: Notes,
    start: Cursor | None,
    title: str = "",
) -> _Written:
    """One pass over `path` (from `start`) writing one chat from the records `which`
    selects; returns where it stopped."""
    ids = Ids(FORMAT, source_id)
    hidden = which != MAIN
    visibility = SessionVisibility.HIDDEN if hidden else SessionVisibility.TOP_LEVEL
    spec = ChatSpec(
        ids.session,
        title,
        FORMAT,
        peek.created_at or file_time(path),
        FORMAT,
        str(path),
        source_id,
        origin_cwd=peek.cwd,
        visibility=visibility,
    )
    bad = run.bad
    with run.bulk.bulk_chat(spec, path) as writer, path.open("rb") as handle:
        # A record that states no time takes the chat's: what the first import took
        # from the file's first dated line (or its first snapshot's time, or else its
        # mtime) and later imports keep, so an entry a store already holds keeps its time.
        thread = _Thread(writer, ids, notes, writer.created_at)
        reader = Lines(handle, progress, start=start.mark if start else None)
        if start is not None:
            handle.seek(start.mark.offset)
            thread.restore(start.state)
        before = reader.mark()
        cut: Cursor | None = None  # where to start again: before a held boundary or a partial line
        for number, obj in objects(path, reader, bad, notes):
            side = obj.get("isSidechain") is True
            if which == MAIN and side:
                thread.sidechains += 1
            elif which != SIDE or side:
                if reader.partial and cut is None:
                    cut = Cursor(reader.mark(), thread.snapshot())
                elif thread.waiting is None and cmap.is_boundary(obj):
                    thread.waiting = Cursor(before, thread.snapshot())
                try:
                    thread.feed(number, obj)
                except UNMAPPABLE as exc:
                    bad.unmappable(path, number, exc)
            del obj  # a huge record is let go before the next line is read
            before = reader.mark()
        cursor = thread.waiting or cut or Cursor(reader.mark(), thread.snapshot())
        thread.close()
        if which == MAIN and thread.threaded == 0 and thread.sidechains:
            raise _OnlySidechains()
    run.report.add(writer.result, FORMAT, path, source_id, hidden)
    return _Written(spec.id, thread.sidechains, cursor)


def _worker(
    run: ImportRun,
    path: Path,
    peek: _Peek,
    source_id: str,
    which: str,
    parent_chat: str | None,
    notes: Notes,
    progress: Progress | None,
    start: Cursor | None,
) -> Cursor:
    """Write a worker chat, then link it under its parent chat in the agent tree."""
    meta = _meta(path)
    title = one_line(str(meta.get("description") or ""))
    if not title and start is None and which == ALL:
        # No .meta.json (Claude Code before 2.1): the parent's Task call describes it.
        title = one_line(_task_description(path, peek.session_id) or "")
    written = _chat(run, path, peek, source_id, which, progress, notes, start, title)
    policy: dict[str, Any] = {"imported_from": FORMAT, "source_id": source_id}
    if isinstance(meta.get("agentType"), str):
        policy["agent_type"] = meta["agentType"]
    link_worker(run.links, written.id, parent_chat, policy, notes)
    return written.cursor


def _meta(path: Path) -> dict[str, Any]:
    """The small `.meta.json` beside a subagent file (description, agent type), if any."""
    meta = path.with_suffix(".meta.json")
    try:
        if meta.is_symlink() or not meta.is_file() or meta.stat().st_size > 65536:
            return {}
        found = orjson.loads(meta.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return found if isinstance(found, dict) else {}


# The parent file is searched for a worker's Task call only up to this size.
TASK_SCAN_BYTES = 64 * 1024 * 1024


def _task_description(path: Path, session_id: str | None) -> str | None:
    """The `description` of the Task call that started the subagent file `path`, read
    from its parent session's file: the result line names the agent (`toolUseResult`'s
    `agentId`) and the call's id, the call holds the description. None when the parent
    file, the agent's result or the call is not there (it is looked for once, when the
    worker is first imported)."""
    if path.parent.name == "subagents":  # <project>/<session>/subagents/agent-*.jsonl
        parent = path.parent.parent.with_suffix(".jsonl")
    elif session_id:
        parent = path.parent / f"{session_id}.jsonl"
    else:
        return None
    try:
        if parent.is_symlink() or not parent.is_file():
            return None
        stat = parent.stat()
    except OSError:
        return None
    if stat.st_size > TASK_SCAN_BYTES:
        return None
    return _task_titles(parent, stat.st_size, stat.st_mtime_ns).get(
        path.stem.removeprefix("agent-")
    )


@functools.lru_cache(maxsize=16)
def _task_titles(parent: Path, size: int, mtime_ns: int) -> dict[str, str]:
    """{agent id: its Task call's description} of every agent the parent file's results
    name: the file is read once for all of its workers (an import reads a session's
    workers one after another), again only when its size or mtime moved. Read-only."""
    del size, mtime_ns  # the cache key: the file as it is now
    try:
        data = parent.read_bytes()
    except OSError:
        return {}
    titles: dict[str, str] = {}
    for agent, call in _agent_calls(data).items():
        text = _call_description(data, call)
        if text:
            titles[agent] = text
    return titles


def _lines_holding(data: bytes, needle: bytes) -> Iterator[dict[str, Any]]:
    """The records of `data` (JSON lines) whose line holds `needle`."""
    at = data.find(needle)
    while at != -1:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end == -1 else end
        try:
            obj = orjson.loads(data[start:end])
        except orjson.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            yield obj
        at = data.find(needle, end)


def _content(obj: dict[str, Any]) -> Any:
    message = obj.get("message")
    return message.get("content") if isinstance(message, dict) else None


def _agent_calls(data: bytes) -> dict[str, str]:
    """{agent id: the id of the Task call whose result names it}, first result kept."""
    calls: dict[str, str] = {}
    for obj in _lines_holding(data, b'"agentId"'):
        result = obj.get("toolUseResult")
        agent = result.get("agentId") if isinstance(result, dict) else None
        if not isinstance(agent, str) or agent in calls:
            continue
        content = _content(obj)
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and isinstance(block.get("tool_use_id"), str):
                calls[agent] = block["tool_use_id"]
                break
    return calls


def _call_description(data: bytes, call: str) -> str | None:
    for obj in _lines_holding(data, call.encode()):
        content = _content(obj)
        for block in content if isinstance(content, list) else []:
            if not (isinstance(block, dict) and block.get("type") == "tool_use"):
                continue
            given = block.get("input")
            if block.get("id") == call and isinstance(given, dict):
                text = given.get("description")
                return text if isinstance(text, str) and text.strip() else None
    return None


class _Thread:
    """Maps one chat's records to entries, in file order.

    A parent must come earlier in the file (as yoagent's loader demands); a
    record naming a later or unknown parent becomes a root, with a note. Lines
    without a uuid (snapshots, queue operations, summaries, ...) form their own
    chain of hidden notifications so they never fork the conversation.
    """

    def __init__(self, writer: ChatWriter, ids: Ids, notes: Notes, start: str) -> None:
        self.writer = writer
        self.ids = ids
        self.notes = notes
        self.time = start
        self.sidechains = 0
        self.threaded = 0  # records with a uuid written
        self._tail: dict[str, str] = {}  # uuid -> its last entry, for records of several
        self._meta_tip: str | None = None
        self._summaries: list[tuple[str, str]] = []  # (leaf uuid, summary)
        self._first_prompt = ""
        # Titles the harness records: the user's own (/rename) and its generated one.
        self._titles: dict[str, str] = {}
        # A compaction boundary waiting for its summary message, the records
        # that descend from it meanwhile, and how many records passed since.
        self._boundary: tuple[int, dict[str, Any]] | None = None
        self._held: list[tuple[int, dict[str, Any]]] = []
        self._pending: set[str] = set()
        self._since = 0
        self.waiting: Cursor | None = None  # where the held boundary's line starts
        self._fresh: set[str] = set()  # uuids written by a continuing import

    # What a later import needs to go on where this one stops (io/position.py).
    _KEPT = ("time", "sidechains", "threaded", "_meta_tip", "_first_prompt")

    def snapshot(self) -> dict[str, Any]:
        state: dict[str, Any] = {name: getattr(self, name) for name in self._KEPT}
        state["_summaries"] = [list(pair) for pair in self._summaries]
        state["git_branch"] = self.writer.git_branch
        return state

    def restore(self, state: dict[str, Any]) -> None:
        for name in self._KEPT:
            if name in state:
                setattr(self, name, state[name])
        self._summaries = [(str(a), str(b)) for a, b in state.get("_summaries", [])]
        self.writer.git_branch = state.get("git_branch") or self.writer.git_branch
        self.writer.continuing = True

    def _last_of(self, uuid: str) -> str:
        """The last entry of an earlier record: this import's own, else probed among the
        stored ones (a record of several entries ends at `uuid#k`)."""
        if uuid in self._tail:
            return self._tail[uuid]
        last = self.ids.entry(uuid)
        if not self.writer.continuing or uuid in self._fresh:
            return last
        k = 1
        while self.writer.seen(following := self.ids.entry(f"{uuid}#{k}")):
            last, k = following, k + 1
        return last

    def feed(self, number: int, obj: dict[str, Any]) -> None:
        self.time = iso_time(obj.get("timestamp")) or self.time
        if isinstance(obj.get("gitBranch"), str) and obj["gitBranch"]:
            self.writer.git_branch = obj["gitBranch"]
        uuid = obj.get("uuid")
        if not isinstance(uuid, str) or not uuid:
            self._metadata(number, obj)
            return
        if cmap.is_boundary(obj):
            if self._boundary is not None:
                self._release(None)
                self._replay()
            self._boundary, self._pending, self._since = (number, obj), {uuid}, 0
            return
        self._feed_threaded(number, obj, uuid)
        if self._boundary is None:
            self.waiting = None

    def _feed_threaded(self, number: int, obj: dict[str, Any], uuid: str) -> None:
        if self._boundary is not None:
            parent = obj.get("parentUuid")
            if parent in self._pending:
                if obj.get("isCompactSummary") is True and parent == self._boundary[1]["uuid"]:
                    self._release(cmap.text_of_message(obj))
                    self._emit(number, obj)
                    self._replay()
                    return
                self._held.append((number, obj))
                self._pending.add(uuid)
                if len(self._held) > HOLD:
                    self._release(None)
                    self._replay()
                return
            self._since += 1
            if self._since > HOLD:
                self._release(None)
                self._replay()
        self._emit(number, obj)

    def _release(self, summary: str | None) -> None:
        assert self._boundary is not None
        number, obj = self._boundary
        self._boundary, self._pending = None, set()
        logical = obj.get("logicalParentUuid") or obj.get("parentUuid")
        self._write(number, obj, logical, [cmap.compaction(obj, summary)])

    def _replay(self) -> None:
        held, self._held = self._held, []
        for number, obj in held:
            self._emit(number, obj)

    def _emit(self, number: int, obj: dict[str, Any]) -> None:
        items = cmap.entries(obj)
        self._write(number, obj, obj.get("parentUuid"), items)
        if not self._first_prompt:
            self._first_prompt = cmap.prompt_title(obj)

    def _write(self, number: int, obj: dict[str, Any], parent_uuid: Any, items: cmap.Items) -> None:
        uuid: str = obj["uuid"]
        parent: str | None = None
        if isinstance(parent_uuid, str) and parent_uuid:
            parent = self._last_of(parent_uuid)
            if not self.writer.seen(parent):
                self.notes.add(
                    f"line {number}: parent {parent_uuid} is not an earlier record "
                    "of this chat: imported as a root"
                )
                parent = None
        for k, (kind, payload, visibility) in enumerate(items):
            entry = self.ids.entry(uuid if k == 0 else f"{uuid}#{k}")
            self.writer.add(
                entry, parent, kind, payload, self.time, visibility, number, f"uuid {uuid}"
            )
            parent = entry
        if len(items) > 1 and parent is not None:
            self._tail[uuid] = parent
        if self.writer.continuing:
            self._fresh.add(uuid)
        self.writer.head = parent
        self.threaded += 1

    def _metadata(self, number: int, obj: dict[str, Any]) -> None:
        if obj.get("type") == "summary" and isinstance(obj.get("summary"), str):
            self._summaries.append((str(obj.get("leafUuid") or ""), obj["summary"]))
        for kind, key in (("custom-title", "customTitle"), ("ai-title", "aiTitle")):
            if obj.get("type") == kind and isinstance(obj.get(key), str) and obj[key].strip():
                self._titles[kind] = obj[key]  # the last one written wins
        entry = self.ids.entry(f"#{number}")
        self.writer.add(entry, self._meta_tip, *cmap.notification(obj), self.time, None, number)
        self._meta_tip = entry
        if self.threaded == 0:
            self.writer.head = entry

    def close(self) -> None:
        if self._boundary is not None:
            self.notes.add(
                f"line {self._boundary[0]}: compaction boundary has no summary yet; it and "
                f"{plural(len(self._held), 'later record')} are left for a later import"
            )
        summary = self._summary()
        self.writer.summary = summary
        # The user's own title (/rename), the harness's generated one or summary, else
        # what the chat's title already was, else its first real request.
        named = [self._titles.get("custom-title"), self._titles.get("ai-title"), summary]
        title = next((t for n in named if n and (t := one_line(n))), "")
        self.writer.title = title or self.writer.title or self._first_prompt

    def _summary(self) -> str | None:
        """The last `summary` line whose leaf is in this chat, else the last one."""
        for leaf, text in reversed(self._summaries):
            if leaf and self.writer.seen(self.ids.entry(leaf)):
                return text
        return self._summaries[-1][1] if self._summaries else None
