"""OpenCode sessions as chats: its SQLite database (v1.2+) and the older `storage/` JSON tree.

The database (`~/.local/share/opencode/opencode.db`) is opened read-only
(`mode=ro`): never migrated, written or locked against a running OpenCode;
each session is read in its own short read transaction, which a WAL-mode
writer does not wait for. The tree is `storage/session/<project>/<ses>.json`,
`storage/message/<ses>/<msg>.json` and `storage/part/[<msg>/]<prt>.json`.

A session is a chat (`parent_id` set: a hidden worker chat linked under its
parent); its messages in order, each message's parts as entries: `text`
(user or assistant words), `reasoning` (thinking), `tool` (the call, and its
result once completed or failed), `compaction` (a compaction),
`file`/`patch`/`snapshot`/`step-*`/`agent`/`subtask`/`retry` and any newer
part (kept hidden, as they were). An assistant message still being written
(no completion time) ends what is read of its session, so it is imported
whole once done. A session's `revert` puts its head back before the reverted
message; the next message then branches from there, as does a message after
ones OpenCode has since deleted.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..model import ChatSpec, SessionVisibility
from ..wrappers import title_of
from .blocks import text, tool_call
from .common import Ids, iso_time, walk
from .position import Cursor
from .report import ImportRun, Notes, failures, link_worker

FORMAT = "opencode"
HARNESS = "opencode"
PROVIDER = "opencode"
HIDDEN = "hidden"
MAX_JSON = 64 * 2**20


def default_root() -> Path:
    data = os.environ.get("XDG_DATA_HOME") or "~/.local/share"
    return Path(data).expanduser() / "opencode"


@dataclass(slots=True)
class _Session:
    id: str
    parent: str | None
    title: str
    directory: str | None
    created: Any
    updated: Any
    revert: Any
    raw: dict[str, Any]
    # The project as OpenCode names it: its name, else its worktree, else its id (a
    # git project's id is its root commit, "global" outside one).
    project: str | None = None


class _Source:
    """Sessions, messages and parts, from the database or the tree."""

    def sessions(self) -> list[_Session]:
        raise NotImplementedError

    def messages(self, session_id: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
        """(message, its parts) in the order OpenCode shows them."""
        raise NotImplementedError


class _Database(_Source):
    def __init__(self, path: Path) -> None:
        self.path = path
        uri = f"{path.resolve().as_uri()}?mode=ro"
        self.conn = sqlite3.connect(uri, uri=True, timeout=5, check_same_thread=False)
        self.conn.execute("PRAGMA query_only = ON")

    def close(self) -> None:
        self.conn.close()

    def _columns(self, table: str) -> set[str]:
        return {row[1] for row in self.conn.execute(f"PRAGMA table_info({table})")}

    def sessions(self) -> list[_Session]:
        have = self._columns("session")
        if not have:
            raise ValueError("no session table: not an OpenCode database")
        wanted = ["id", "parent_id", "title", "directory", "time_created", "time_updated", "revert"]
        wanted.append("project_id")
        picked = [c if c in have else "NULL" for c in wanted]
        rows = self.conn.execute(
            f"SELECT {', '.join(picked)} FROM session ORDER BY time_created, id"
        ).fetchall()
        projects = self._projects()
        out = []
        for sid, parent, title, directory, created, updated, revert, project in rows:
            named = projects.get(project) or (project if isinstance(project, str) else None)
            out.append(
                _Session(
                    sid, parent, title or "", directory, created, updated, _json(revert), {},
                    named,
                )
            )  # fmt: skip
        return out

    def _projects(self) -> dict[str, str]:
        """Project id -> its name, else its worktree (an older database may have neither)."""
        have = self._columns("project")
        if "id" not in have:
            return {}
        picked = [c if c in have else "NULL" for c in ("id", "name", "worktree")]
        rows = self.conn.execute(f"SELECT {', '.join(picked)} FROM project")
        return {
            pid: str(name or worktree)
            for pid, name, worktree in rows
            if isinstance(pid, str) and (name or worktree)
        }

    def messages(self, session_id: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
        with self._read():
            messages = self.conn.execute(
                "SELECT id, time_created, data FROM message WHERE session_id = ? "
                "ORDER BY time_created, id",
                (session_id,),
            ).fetchall()
            parts = self.conn.execute(
                "SELECT message_id, id, data FROM part WHERE session_id = ? ORDER BY id",
                (session_id,),
            ).fetchall()
        by_message: dict[str, list[dict[str, Any]]] = {}
        for message_id, part_id, data in parts:
            part = _json(data) or {}
            by_message.setdefault(message_id, []).append({"id": part_id, **part})
        out = []
        for message_id, created, data in messages:
            message = {"id": message_id, **(_json(data) or {})}
            message.setdefault("time", {"created": created})
            out.append((message, by_message.get(message_id, [])))
        return out

    @contextlib.contextmanager
    def _read(self) -> Iterator[None]:
        # One short read transaction: a snapshot of the session, never a lock a
        # WAL-mode OpenCode waits on.
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")


class _Tree(_Source):
    def __init__(self, root: Path) -> None:
        self.root = root
        self._parts: dict[str, list[Path]] | None = None

    def sessions(self) -> list[_Session]:
        out = []
        for path in walk(self.root / "session", lambda p: p.suffix == ".json").files:
            found = _load(path)
            if not isinstance(found, dict) or not isinstance(found.get("id"), str):
                continue
            times = _obj(found.get("time"))
            out.append(
                _Session(
                    found["id"],
                    found.get("parentID"),
                    str(found.get("title") or ""),
                    found.get("directory"),
                    times.get("created"),
                    times.get("updated"),
                    found.get("revert"),
                    found,
                    self._project(found.get("projectID")),
                )
            )
        return sorted(out, key=lambda s: (str(s.created), s.id))

    def _project(self, pid: Any) -> str | None:
        """`storage/project/<id>.json`'s name or worktree, else the id itself."""
        if not isinstance(pid, str) or not pid:
            return None
        found = _load(self.root / "project" / f"{pid}.json")
        if isinstance(found, dict):
            for key in ("name", "worktree"):
                if isinstance(found.get(key), str) and found[key]:
                    return str(found[key])
        return pid

    def messages(self, session_id: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
        folder = self.root / "message" / session_id
        messages = []
        for path in walk(folder, lambda p: p.suffix == ".json").files if folder.is_dir() else []:
            found = _load(path)
            if isinstance(found, dict) and isinstance(found.get("id"), str):
                messages.append(found)
        messages.sort(key=lambda m: (str((m.get("time") or {}).get("created")), m["id"]))
        return [(m, self._parts_of(m["id"])) for m in messages]

    def _parts_of(self, message_id: str) -> list[dict[str, Any]]:
        if self._parts is None:
            self._parts = {}
            for path in walk(self.root / "part", lambda p: p.suffix == ".json").files:
                owner = path.parent.name
                if owner == "part":  # the older flat layout names its message inside
                    found = _load(path)
                    owner = str(found.get("messageID")) if isinstance(found, dict) else ""
                self._parts.setdefault(owner, []).append(path)
        parts = [
            p
            for p in (_load(path) for path in self._parts.get(message_id, []))
            if isinstance(p, dict)
        ]
        return sorted(
            parts, key=lambda p: (_obj(p.get("time")).get("start") or 0, str(p.get("id")))
        )

    def close(self) -> None:
        return


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _json(value: Any) -> Any:
    if isinstance(value, bytes | str) and value:
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return None


def _load(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_JSON:
            return None
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def _digest(value: Any) -> str:
    raw = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def locate(path: Path) -> tuple[str, Path] | None:
    """("db" | "tree", where) for a database file, an OpenCode data folder or a storage/."""
    if path.is_file():
        return "db", path
    if (path / "opencode.db").is_file():
        return "db", path / "opencode.db"
    if (path / "storage" / "session").is_dir():
        return "tree", path / "storage"
    if (path / "session").is_dir():
        return "tree", path
    return None


def import_file(run: ImportRun, path: Path, notes: Notes) -> None:
    follow(run, path, notes, None)


def follow(run: ImportRun, path: Path, notes: Notes, start: Cursor | None) -> Cursor:
    """Import every session (those whose update time moved since `start`, when given);
    the cursor's state is each session's update time."""
    found = locate(path)
    if found is None:
        raise ValueError(f"{path}: no OpenCode database or storage/ folder here")
    kind, where = found
    try:
        source: _Database | _Tree = _Database(where) if kind == "db" else _Tree(where)
    except sqlite3.Error as exc:
        run.bad.bad(where, None, f"cannot open the OpenCode database read-only: {exc}")
        return start or Cursor()
    seen: dict[str, Any] = dict(start.state) if start is not None else {}
    try:
        sessions = source.sessions()
        # Parents before their children: a worker links under a chat already there.
        sessions.sort(key=lambda s: s.parent is not None)
        if run.progress is not None:
            run.progress.advance(where.stat().st_size if kind == "db" else 0)
        for session in sessions:
            if start is not None and seen.get(session.id) == session.updated:
                continue
            with failures(run.report, where, notes):
                if _session(run, where, source, session, notes):
                    seen[session.id] = session.updated
    finally:
        source.close()
    return Cursor(state=seen)


def _session(run: ImportRun, where: Path, source: _Source, session: _Session, notes: Notes) -> bool:
    """Import one session; False when its newest message is still being written."""
    ids = Ids(FORMAT, session.id)
    hidden = session.parent is not None
    created = iso_time(session.created) or iso_time(0)
    assert created is not None
    spec = ChatSpec(
        ids.session, session.title, HARNESS, created, FORMAT, str(where), session.id,
        visibility=SessionVisibility.HIDDEN if hidden else SessionVisibility.TOP_LEVEL,
        origin_cwd=session.directory if isinstance(session.directory, str) else None,
        origin_project=session.project,
    )  # fmt: skip
    messages = source.messages(session.id)
    done = True
    with run.bulk.bulk_chat(spec, where) as writer:
        chat = _Chat(writer, ids, created)
        for index, (message, parts) in enumerate(messages):
            if index == len(messages) - 1 and _in_progress(message, session):
                done = False  # still being written: read again once it is done
                notes.add(f"session {session.id}: message {message['id']} is not finished yet")
                break
            chat.message(message, parts)
        chat.revert(session.revert, notes)
        writer.title = session.title or chat.first_prompt or writer.title
    run.report.add(writer.result, FORMAT, where, session.id, hidden)
    if hidden:
        policy = {"imported_from": FORMAT, "source_id": session.id}
        parent_chat = Ids(FORMAT, str(session.parent)).session
        link_worker(run.links, ids.session, parent_chat, policy, notes)
    return done


LIVE_MS = 5 * 60 * 1000  # a session updated this recently may still be writing its last message


def _in_progress(message: dict[str, Any], session: _Session) -> bool:
    """An assistant message with no completion, finish or error, in a session updated in the
    last few minutes: OpenCode is still writing it (older ones are taken as they are)."""
    if message.get("role") != "assistant" or message.get("finish") or message.get("error"):
        return False
    if _obj(message.get("time")).get("completed"):
        return False
    updated = session.updated
    if not isinstance(updated, int | float) or isinstance(updated, bool):
        return False
    return time.time() * 1000 - updated < LIVE_MS


class _Chat:
    def __init__(self, writer: Any, ids: Ids, time: str) -> None:
        self.writer = writer
        self.ids = ids
        self.time = time
        self.head: str | None = None
        self.ends: dict[str, str | None] = {}  # message id -> its last entry
        self.starts: dict[str, str | None] = {}  # message id -> the entry before it
        self.meta_tip: str | None = None
        self.turn: Any = None  # the user message the last message belongs to
        self.first_prompt = ""

    def _add(
        self, key: str, kind: str, payload: dict[str, Any], visibility: str | None = None
    ) -> None:
        entry = self.ids.entry(key)
        if not self.writer.seen(entry):
            self.writer.add(
                entry, self.head, kind, payload, self.time, visibility, None, f"part {key}"
            )
        self.head = entry
        self.writer.head = entry

    def message(self, message: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        mid = str(message["id"])
        times = _obj(message.get("time"))
        self.time = iso_time(times.get("created")) or self.time
        parent = message.get("parentID")
        turn = parent if message.get("role") == "assistant" else mid
        if turn != self.turn and isinstance(parent, str) and parent in self.ends:
            # An answer to an earlier user message than the last one: a branch from it.
            self.head = self.ends[parent]
        self.turn = turn
        self.starts[mid] = self.head
        role = message.get("role")
        if not parts and role == "user":
            summary = _obj(message.get("summary"))
            words = summary.get("body") or summary.get("title")
            if isinstance(words, str) and words:
                payload = {"content": [text(words)], "from_summary": True}
                self._add(f"{mid}/summary", "user.message", payload)
        for part in parts:
            self._part(mid, role, message, part)
        self.ends[mid] = self.head
        self._meta(mid, {k: v for k, v in message.items() if k not in ("id", "sessionID")})

    def _meta(self, mid: str, meta: dict[str, Any]) -> None:
        """A message's own fields (tokens, cost, model, agent, ...) on the hidden chain: they
        may change after the message was imported, and never fork the conversation."""
        entry = self.ids.entry(f"{mid}/meta@{_digest(meta)}")
        if not self.writer.seen(entry):
            payload = {"provider": PROVIDER, "event": {"message": meta}}
            self.writer.add(entry, self.meta_tip, "provider.notification", payload, self.time,
                            HIDDEN, None, f"message {mid}")  # fmt: skip
        self.meta_tip = entry

    def _part(self, mid: str, role: Any, message: dict[str, Any], part: dict[str, Any]) -> None:
        pid = str(part.get("id") or _digest(part))
        ptype = part.get("type")
        times = _obj(part.get("time"))
        self.time = iso_time(times.get("start")) or self.time
        base: dict[str, Any] = {"provider": str(message.get("providerID") or PROVIDER)}
        if isinstance(message.get("modelID"), str):
            base["model"] = message["modelID"]
        if ptype == "text" and isinstance(part.get("text"), str):
            if role == "user":
                if not part.get("synthetic") and not self.first_prompt:
                    self.first_prompt = title_of(part["text"])
                payload: dict[str, Any] = {"content": [text(part["text"])]}
                if part.get("synthetic"):
                    payload["synthetic"] = True
                self._add(f"{pid}@{_digest(part['text'])}", "user.message", payload)
            else:
                payload = {"content": [text(part["text"])], **base}
                self._add(f"{pid}@{_digest(part['text'])}", "assistant.message", payload)
        elif ptype == "reasoning" and isinstance(part.get("text"), str):
            block = {"type": "thinking", "thinking": part["text"]}
            self._add(
                f"{pid}@{_digest(part['text'])}", "assistant.message", {"content": [block], **base}
            )
        elif ptype == "tool":
            self._tool(pid, part, base)
        elif ptype == "compaction":
            summary = "(compacted)" if not part.get("auto") else "(compacted automatically)"
            self._add(
                pid, "compaction", {"summary": summary, "first_kept_entry_id": None, "part": part}
            )
        else:  # file, patch, snapshot, step-start/finish, agent, subtask, retry, newer
            event = {"part": {k: v for k, v in part.items() if k not in ("sessionID", "messageID")}}
            self._add(f"{pid}@{_digest(event)}", "provider.notification",
                      {"provider": PROVIDER, "event": event}, HIDDEN)  # fmt: skip

    def _tool(self, pid: str, part: dict[str, Any], base: dict[str, Any]) -> None:
        state: dict[str, Any] = part["state"] if isinstance(part.get("state"), dict) else {}
        call_id = str(part.get("callID") or pid)
        block = tool_call(call_id, part.get("tool"), state.get("input"))
        self._add(f"{pid}/call@{_digest(block)}", "assistant.message", {"content": [block], **base})
        status = state.get("status")
        if status in ("completed", "success", "error"):
            output = state.get("output") if status != "error" else state.get("error")
            done: dict[str, Any] = {
                "call_id": call_id,
                "output": output if isinstance(output, str) else orjson.dumps(output).decode(),
                "is_error": status == "error",
                "name": str(part.get("tool") or "tool"),
            }
            meta = state.get("metadata")
            if isinstance(meta, dict) and isinstance(meta.get("exit"), int) and meta["exit"] != 0:
                done["is_error"] = True
            self._add(f"{pid}/result@{_digest(done)}", "tool.completed", done)

    def revert(self, revert: Any, notes: Notes) -> None:
        """A pending undo: the head goes back before the reverted message."""
        if not isinstance(revert, dict) or not isinstance(revert.get("messageID"), str):
            return
        mid = revert["messageID"]
        if mid in self.starts:
            self.writer.head = self.starts[mid]
            self.head = self.starts[mid]
        else:
            notes.add(f"revert to message {mid}, which is not in the session: head left as is")
