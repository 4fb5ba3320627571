"""Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`) as chats.

One chat per session file, its tree from `uuid`/`parentUuid`; sidechains and
subagent files become hidden worker chats linked under their parent chat in
the agent tree. Record -> entry mapping lives in `claude_code_map.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import ForestError
from ..model import ChatSpec, SessionVisibility
from ..render import plural
from ..store.base import ChatWriter
from . import claude_code_map as cmap
from .common import Ids, file_time, iso_time, lines, one_line, records
from .report import UNMAPPABLE, ImportRun, Notes, Progress

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
            found.created_at = found.created_at or iso_time(obj.get("timestamp"))
            if isinstance(obj.get("cwd"), str) and found.cwd is None:
                found.cwd = obj["cwd"]
            if isinstance(obj.get("sessionId"), str) and obj.get("uuid") and not found.session_id:
                found.session_id = obj["sessionId"]
    return found


def _agent_parent(path: Path) -> str | None:
    """The parent session of a nested subagent file (`<session>/subagents/agent-*.jsonl`)."""
    return path.parent.parent.name if path.parent.name == "subagents" else None


class _OnlySidechains(Exception):
    """A session file with no main-thread line: it is imported as a worker instead."""


def import_file(run: ImportRun, path: Path, notes: Notes) -> None:
    peek = _peek(path)
    if not peek.has_lines:
        notes.add("empty file skipped")
        return
    agent_parent = _agent_parent(path)
    progress = run.progress
    if agent_parent is None and not path.name.startswith("agent-"):
        try:
            main = _chat(run, path, peek, path.stem, MAIN, progress, notes)
        except _OnlySidechains:
            progress = None  # the bytes were counted by the pass that found out
        else:
            if main.sidechains:
                source_id = f"{path.stem}/sidechain"
                _worker(run, path, peek, source_id, SIDE, main.id, notes, None)
            return
    parent = agent_parent or peek.session_id
    source_id = f"{parent}/{path.stem}" if parent else path.stem
    parent_chat = Ids(FORMAT, parent).session if parent else None
    _worker(run, path, peek, source_id, ALL, parent_chat, notes, progress)


# Which records of a file a pass writes.
MAIN, SIDE, ALL = "main thread", "sidechain", "all"


@dataclass(frozen=True, slots=True)
class _Written:
    id: str
    sidechains: int


def _chat(
    run: ImportRun,
    path: Path,
    peek: _Peek,
    source_id: str,
    which: str,
    progress: Progress | None,
    notes: Notes,
    title: str = "",
) -> _Written:
    """One pass over `path` writing one chat from the records `which` selects."""
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
        # A file that states no time: its entries take the chat's, which the
        # first import took from the file's mtime and later imports keep.
        thread = _Thread(writer, ids, notes, peek.created_at or writer.created_at)
        for number, obj in records(path, handle, bad, notes, progress):
            side = obj.get("isSidechain") is True
            if which == MAIN and side:
                thread.sidechains += 1
                continue
            if which == SIDE and not side:
                continue
            try:
                thread.feed(number, obj)
            except UNMAPPABLE as exc:
                bad.unmappable(path, number, exc)
            del obj  # a huge record is let go before the next line is read
        thread.close()
        if which == MAIN and thread.threaded == 0 and thread.sidechains:
            raise _OnlySidechains()
    run.report.add(writer.result, FORMAT, path, source_id, hidden)
    return _Written(spec.id, thread.sidechains)


def _worker(
    run: ImportRun,
    path: Path,
    peek: _Peek,
    source_id: str,
    which: str,
    parent_chat: str | None,
    notes: Notes,
    progress: Progress | None,
) -> None:
    """Write a worker chat, then link it under its parent chat in the agent tree."""
    meta = _meta(path)
    title = one_line(str(meta.get("description") or ""))
    written = _chat(run, path, peek, source_id, which, progress, notes, title)
    if parent_chat is None:
        notes.add("worker chat has no parent session id: left unlinked")
        return
    links = run.links
    try:
        links.session(parent_chat)
    except ForestError:
        notes.add("the parent session of this worker is not imported: left unlinked for now")
        return
    if links.agent_for_session(written.id) is not None:
        return  # linked by an earlier import
    orchestrator = links.agent_for_session(parent_chat)
    if orchestrator is None:
        orchestrator_id = links.add_orchestrator(parent_chat)
    elif orchestrator.role == "orchestrator":
        orchestrator_id = orchestrator.id
    else:
        notes.add(f"parent chat {parent_chat} is itself a worker: left unlinked")
        return
    policy: dict[str, Any] = {"imported_from": FORMAT, "source_id": source_id}
    if isinstance(meta.get("agentType"), str):
        policy["agent_type"] = meta["agentType"]
    links.add_worker(orchestrator_id, written.id, policy)


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
            parent = self._tail.get(parent_uuid) or self.ids.entry(parent_uuid)
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
