"""`ForestSessionStore`: the Claude Agent SDK's `SessionStore` over a forest.

    store = ForestSessionStore("forest.db")
    options = ClaudeAgentOptions(session_store=store, resume=session_id)

What the SDK mirrors is kept twice over, for two readers:

- for the SDK, exactly: each (project, session) is a hidden forest session
  (harness `claude-agent-sdk`) whose entries are the appended batches, each
  a hidden `provider.notification` holding the transcript lines verbatim,
  which subpath they belong to (the main transcript or
  `subagents/agent-...`) and, for the main transcript, the SDK's folded
  summary. `load` returns the lines of a key deep-equal to what was
  appended, in call order; a line whose `uuid` is already stored for that
  key is dropped (the SDK retries batches). `delete` appends a mark: the key
  (a main key: with its subkeys) loads as never written, and the stored
  batches stay as history;
- for a person, as Claude Code wrote it: after each append the key's
  session is written out as Claude Code's own files (`<project>/<session
  id>.jsonl`, `<session id>/subagents/agent-*.jsonl`) and read by the Claude
  Code importer (io/claude_code.py), so the chat in `forest sessions`, the
  web UI and search has the importer's branches, tool calls and subagent
  worker chats. The importer is idempotent (ids from the source), so each
  import adds only the new lines; it re-reads the whole session each time
  (cost linear in the session per append). A line it cannot read is
  skipped, and a view that cannot be built never fails the append: the
  lines are already stored.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
import tempfile
import threading
from collections import OrderedDict
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import orjson
from claude_agent_sdk import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
    fold_session_summary,
)

from ... import Forest
from ...errors import SessionExists, UnknownSession
from ...model import Entry, SessionVisibility

log = logging.getLogger(__name__)

HARNESS = "claude-agent-sdk"
PROVIDER = "claude-agent-sdk"
PREFIX = "claude-store:"
MAX_CACHED = 256
PAGE = 1000
MAIN = ""  # the main transcript's subpath in the index


def session_id_for(project_key: str, session_id: str) -> str:
    """The hidden forest session holding one SDK session's batches."""
    digest = hashlib.sha256(f"{project_key}\0{session_id}".encode()).hexdigest()
    return PREFIX + digest[:40]


@dataclass(slots=True)
class _Part:
    entries: list[SessionStoreEntry] = field(default_factory=list)
    uuids: set[str] = field(default_factory=set)
    mtime: int = 0


@dataclass(slots=True)
class _Index:
    """One SDK session's keys, replayed from its forest session's entries."""

    sid: str
    project_key: str | None = None
    session_id: str | None = None
    seen: int = 0
    parts: dict[str, _Part] = field(default_factory=dict)
    summary: SessionSummaryEntry | None = None

    def replay(self, entries: list[Entry]) -> None:
        for entry in entries:
            if entry.sequence <= self.seen:
                continue
            self.seen = entry.sequence
            payload = entry.payload
            if entry.kind != "provider.notification" or payload.get("provider") != PROVIDER:
                continue
            event = payload["event"]
            self.project_key, self.session_id = event["key"]
            subpath = str(event.get("subpath") or MAIN)
            if event["op"] == "append":
                part = self.parts.setdefault(subpath, _Part())
                part.entries.extend(event["entries"])
                part.uuids.update(u for u in map(_uuid, event["entries"]) if u is not None)
                part.mtime = _epoch_ms(entry.created_at)
                if event.get("summary") is not None:
                    summary = cast(SessionSummaryEntry, dict(event["summary"]))
                    summary["mtime"] = part.mtime
                    self.summary = summary
            elif event["op"] == "delete":
                if subpath == MAIN:
                    self.parts.clear()
                    self.summary = None
                else:
                    self.parts.pop(subpath, None)


class ForestSessionStore:
    """A Claude Agent SDK session store keeping every session in a forest."""

    def __init__(
        self, forest: Forest | str | os.PathLike[str] | None = None, *, view: bool = True
    ) -> None:
        """`forest`: an open Forest (left open by `close`), or a location to open
        (None: `FOREST_DB`, else the default store; closed by `close`). `view=False`
        keeps only the SDK's copy (no Claude Code import after each append)."""
        self._owned = not isinstance(forest, Forest)
        self.forest = forest if isinstance(forest, Forest) else Forest.open(forest)
        self._view = view
        self._cache: OrderedDict[str, _Index] = OrderedDict()
        self._lock = threading.RLock()

    def close(self) -> None:
        if self._owned:
            self.forest.close()

    # --- SessionStore --------------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        if entries:
            await asyncio.to_thread(self._append, key, entries)

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        return await asyncio.to_thread(self._load, key)

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        def listed() -> list[SessionStoreListEntry]:
            return [{"session_id": cast(str, i.session_id), "mtime": i.parts[MAIN].mtime}
                    for i in self._project(project_key) if MAIN in i.parts]  # fmt: skip

        return await asyncio.to_thread(listed)

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        def listed() -> list[SessionSummaryEntry]:
            return [i.summary for i in self._project(project_key)
                    if i.summary is not None and MAIN in i.parts]  # fmt: skip

        return await asyncio.to_thread(listed)

    async def delete(self, key: SessionKey) -> None:
        await asyncio.to_thread(self._delete, key)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        def listed() -> list[str]:
            with self._lock:
                index = self._index(key["project_key"], key["session_id"], create=False)
                return [] if index is None else sorted(p for p in index.parts if p != MAIN)

        return await asyncio.to_thread(listed)

    def chat_id(self, key: SessionKey) -> str | None:
        """The forest chat a person reads for this session (the Claude Code import of
        it), once one was built."""
        from ...io.common import Ids

        sid = Ids("claude-code", _file_name(key["session_id"])).session
        try:
            self.forest.session(sid)
        except UnknownSession:
            return None
        return sid

    # --- the store work (worker threads) ----------------------------------------------

    def _append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        subpath = str(key.get("subpath") or MAIN)
        with self._lock:
            index = cast(_Index, self._index(key["project_key"], key["session_id"], create=True))
            part = index.parts.get(subpath)
            have = set(part.uuids) if part is not None else set()
            fresh = []
            for line in entries:
                uuid = _uuid(line)
                if uuid:
                    if uuid in have:
                        continue  # a retried batch
                    have.add(uuid)
                fresh.append(line)
            if not fresh:
                return
            event: dict[str, Any] = {
                "op": "append",
                "key": [key["project_key"], key["session_id"]],
                "subpath": subpath or None,
                "entries": fresh,
            }
            if subpath == MAIN:
                event["summary"] = fold_session_summary(index.summary, key, fresh)
            self._write(index, event)
            snapshot = {name: list(p.entries) for name, p in index.parts.items()}
        if self._view:
            self._import_view(key, snapshot)

    def _load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        with self._lock:
            index = self._index(key["project_key"], key["session_id"], create=False)
            if index is None:
                return None
            part = index.parts.get(str(key.get("subpath") or MAIN))
            return None if part is None else list(part.entries)

    def _delete(self, key: SessionKey) -> None:
        subpath = str(key.get("subpath") or MAIN)
        with self._lock:
            index = self._index(key["project_key"], key["session_id"], create=False)
            if index is None or (subpath != MAIN and subpath not in index.parts):
                return
            if subpath == MAIN and not index.parts:
                return
            event = {"op": "delete", "key": [key["project_key"], key["session_id"]],
                     "subpath": subpath or None}  # fmt: skip
            self._write(index, event)

    def _write(self, index: _Index, event: dict[str, Any]) -> None:
        payload = {"provider": PROVIDER, "event": event}
        entry = self.forest.append(index.sid, "provider.notification", payload)
        if entry.sequence == index.seen + 1:
            index.replay([entry])
        else:
            self._catch_up(index)

    def _index(self, project_key: str, session_id: str, *, create: bool) -> _Index | None:
        sid = session_id_for(project_key, session_id)
        index = self._cache.get(sid)
        if index is None:
            try:
                self.forest.session(sid)
            except UnknownSession:
                if not create:
                    return None
                title = f"{project_key}/{session_id}"[:200]
                with suppress(SessionExists):  # another process made it first
                    self.forest.create_session(_printable(title), HARNESS, session_id=sid,
                                               visibility=SessionVisibility.HIDDEN)  # fmt: skip
            index = _Index(sid, project_key, session_id)
            self._cache[sid] = index
            if len(self._cache) > MAX_CACHED:
                self._cache.popitem(last=False)
        self._cache.move_to_end(sid)
        self._catch_up(index)
        return index

    def _catch_up(self, index: _Index) -> None:
        while True:
            page = self.forest.entries_after(index.sid, index.seen, PAGE)
            index.replay(page)
            if len(page) < PAGE:
                return

    def _project(self, project_key: str) -> list[_Index]:
        """The indexes of every session of the project (reads each store session once)."""
        found = []
        with self._lock:
            for info in self.forest.sessions():
                if info.harness != HARNESS or not info.id.startswith(PREFIX):
                    continue
                index = self._cache.get(info.id)
                if index is None:
                    index = _Index(info.id)
                    self._catch_up(index)
                    if index.project_key is None:
                        continue
                    self._cache[info.id] = index
                else:
                    self._catch_up(index)
                if index.project_key == project_key:
                    found.append(index)
        return found

    def _import_view(self, key: SessionKey, parts: dict[str, list[SessionStoreEntry]]) -> None:
        """Write the session out as Claude Code's files and import them (see the module
        doc); failures are logged, never raised."""
        if MAIN not in parts:
            return  # a subagent's lines alone: its parent chat comes with the main transcript
        stem = _file_name(key["session_id"])
        try:
            with tempfile.TemporaryDirectory(prefix="forest-claude-store-") as tmp:
                project = Path(tmp) / _file_name(key["project_key"])
                project.mkdir()
                _write_jsonl(project / f"{stem}.jsonl", parts[MAIN])
                for subpath, lines in parts.items():
                    if subpath.startswith("subagents/") and lines:
                        target = project / stem / f"{_file_name(subpath, keep_slash=True)}.jsonl"
                        target.parent.mkdir(parents=True, exist_ok=True)
                        _write_jsonl(target, lines)
                report = self.forest.import_chats("claude-code", project, skip_bad=True)
            for failure in report.failed:
                log.warning("the Claude Code view of %s was not imported: %s", stem, failure)
        except Exception:  # the lines are stored; the view is rebuilt on the next append
            log.exception("the Claude Code view of %s was not imported", stem)


def _uuid(line: Any) -> str | None:
    value = line.get("uuid") if isinstance(line, dict) else None
    return value if isinstance(value, str) and value else None


def _epoch_ms(created_at: str) -> int:
    return int(datetime.fromisoformat(created_at.replace("Z", "+00:00")).timestamp() * 1000)


def _write_jsonl(path: Path, lines: list[SessionStoreEntry]) -> None:
    with path.open("wb") as out:
        for line in lines:
            out.write(orjson.dumps(line) + b"\n")


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def _file_name(name: str, *, keep_slash: bool = False) -> str:
    """`name` as a file name (a path for a subpath): no separators, dots or controls
    that could leave the directory."""
    if keep_slash:
        return "/".join(_file_name(part) for part in name.split("/") if part not in ("", ".", ".."))
    return _UNSAFE.sub("-", name).lstrip(".") or "-"


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in text)
