"""A heavy user's HOME: many chats of several harnesses, synthesised from the recordings' shapes.

`generate(home, entries, chats)` writes, under `home`, what Claude Code,
Codex, Gemini CLI, Copilot CLI and aider keep (in their default places, so
`forest sources` finds them), splitting `entries` over `chats` by `MIX`.
`chat` also writes OpenCode (its SQLite database) and Cline (a VS Code task
folder), for bench_harnesses.py's per-format rows; they are not in `MIX`, so
the heavy user's figure stays comparable with earlier runs. Each
chat repeats the records of its harness's real recording or fixture
(../shared/data) in order, with fresh ids, times one second apart and a
varied sentence in every message (drawn from a fixed vocabulary, so `find`
has something to rank): the shapes are the harnesses' own, only the words
and ids change. Deterministic for a seed. Reused by the scale work; `chat(fmt,
records, out)` writes one file of one format.

    python benchmarks/heavy_user.py HOME --entries 1000000 --chats 5000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SOURCES = {
    "claude-code": DATA / "claude-code" / "ai-sessions" / "claude-code-pomodoro-timer.jsonl",
    "codex": DATA / "codex" / "ai-sessions" / "codex-pomodor-timer.jsonl",
    "gemini": DATA / "format-fixtures" / "agent-sessions" / "gemini" / "jsonl_v040.jsonl",
    "copilot": DATA / "format-fixtures" / "agent-sessions" / "copilot" / "subdir_v1"
    / "aaaabbbb-1111-2222-3333-ccccddddeeee" / "events.jsonl",
    "aider": DATA / "aider" / "chat-history.md",
}  # fmt: skip
# OpenCode's file storage (its sessions before the database); the rows of the database
# hold the same message and part objects.
OPENCODE = DATA / "format-fixtures" / "agent-sessions" / "opencode" / "storage_v2"
# Share of the chats (and of the entries) per format: the harnesses with the most users first.
MIX = {"claude-code": 0.40, "codex": 0.25, "gemini": 0.15, "copilot": 0.12, "aider": 0.08}
# Entries a record of each format becomes, on average (measured on the sources; used to
# size each file so the whole comes out near `entries`).
PER_RECORD = {"claude-code": 1.0, "codex": 1.1, "gemini": 3.7, "copilot": 1.0, "aider": 1.0}
WORDS = """
sqlite lock timeout retry branch rebase migration index query cache token stream parser
schema deploy docker kubernetes pytest fixture mock coverage lint format refactor rename
import export json yaml toml config env secret auth login session cookie header proxy
socket thread async await future queue worker pool batch vector embedding search rank
score gate recall snippet title digest summary
""".split()  # noqa: SIM905 - one word list, read as prose
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(6, 18)))


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _records(fmt: str) -> list[Any]:
    if fmt == "aider":
        return []
    lines = SOURCES[fmt].read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _claude(
    records: list[dict[str, Any]], n: int, key: str, rng: random.Random, at: datetime
) -> Iterator[bytes]:
    body = [r for r in records if r.get("type") in ("user", "assistant")]
    last = None
    for k in range(n):
        rec = dict(body[k % len(body)])
        rec["uuid"] = f"{key}-{k}"
        rec["parentUuid"] = last
        rec["sessionId"] = key
        rec["timestamp"] = _stamp(at + timedelta(seconds=k))
        message = dict(rec["message"])
        if isinstance(message.get("content"), str):
            message["content"] = _sentence(rng)
        elif isinstance(message.get("content"), list):
            message["content"] = [
                {**b, "text": _sentence(rng)} if b.get("type") == "text" else b
                for b in message["content"]
            ]
        rec["message"] = message
        last = rec["uuid"]
        yield orjson.dumps(rec)


def _codex(
    records: list[dict[str, Any]], n: int, key: str, rng: random.Random, at: datetime
) -> Iterator[bytes]:
    meta = dict(records[0])
    meta["payload"] = {**meta["payload"], "id": key}
    yield orjson.dumps(meta)
    body = records[1:]
    for k in range(n):
        rec = json.loads(orjson.dumps(body[k % len(body)]))
        rec["timestamp"] = _stamp(at + timedelta(seconds=k))
        payload = rec.get("payload") or {}
        if payload.get("type") == "message":
            for part in payload.get("content") or []:
                if "text" in part and not part["text"].startswith("<"):
                    part["text"] = _sentence(rng)
        for field in ("call_id",):
            if field in payload:
                payload[field] = f"{payload[field]}-{k // len(body)}"
        if payload.get("type") == "token_count":
            payload["info"] = {"total": k}
        yield orjson.dumps(rec)


def _gemini(
    records: list[dict[str, Any]], n: int, key: str, rng: random.Random, at: datetime
) -> Iterator[bytes]:
    yield orjson.dumps({**records[0], "sessionId": key})
    body = [r for r in records[1:] if "id" in r]
    for k in range(n):
        rec = json.loads(orjson.dumps(body[k % len(body)]))
        rec["id"] = f"{key}-{k}"
        rec["timestamp"] = _stamp(at + timedelta(seconds=k))
        if isinstance(rec.get("content"), str):
            rec["content"] = _sentence(rng)
        elif isinstance(rec.get("content"), list):
            rec["content"] = [{"text": _sentence(rng)}]
        for call in rec.get("toolCalls") or []:
            call["id"] = f"{call['id']}-{k}"
        yield orjson.dumps(rec)


def _copilot(
    records: list[dict[str, Any]], n: int, key: str, rng: random.Random, at: datetime
) -> Iterator[bytes]:
    start = json.loads(orjson.dumps(records[0]))
    start["data"]["sessionId"] = key
    start["id"] = f"{key}-start"
    yield orjson.dumps(start)
    body = records[1:]
    last = start["id"]
    for k in range(n):
        rec = json.loads(orjson.dumps(body[k % len(body)]))
        rec["id"], rec["parentId"] = f"{key}-{k}", last
        rec["timestamp"] = _stamp(at + timedelta(seconds=k))
        data = rec.get("data") or {}
        if isinstance(data.get("content"), str) and data["content"]:
            data["content"] = _sentence(rng)
        if "toolCallId" in data:
            data["toolCallId"] = f"{data['toolCallId']}-{k // len(body)}"
        for request in data.get("toolRequests") or []:
            request["toolCallId"] = f"{request['toolCallId']}-{k // len(body)}"
        last = rec["id"]
        yield orjson.dumps(rec)


def _aider(n: int, rng: random.Random, at: datetime) -> Iterator[bytes]:
    yield f"# aider chat started at {at.strftime('%Y-%m-%d %H:%M:%S')}\n".encode()
    yield b"> aider --model gpt-4o\n> Aider v0.47.2\n"
    for k in range(n // 2):
        commit = f"> Commit {k:07x} {_sentence(rng)}"
        yield f"#### {_sentence(rng)}\n\n{_sentence(rng)}\n\n{commit}\n".encode()


# The tables (and their indexes) OpenCode 1.18.33, the version tests/tools pins, creates in
# opencode.db (its drizzle schema); the importer reads project, session, message and part.
OPENCODE_SCHEMA = """
CREATE TABLE IF NOT EXISTS project (
  id text PRIMARY KEY, worktree text NOT NULL, vcs text, name text, icon_url text,
  icon_url_override text, icon_color text, time_created integer NOT NULL,
  time_updated integer NOT NULL, time_initialized integer, sandboxes text NOT NULL,
  commands text);
CREATE TABLE IF NOT EXISTS session (
  id text PRIMARY KEY, project_id text NOT NULL REFERENCES project(id) ON DELETE CASCADE,
  workspace_id text, parent_id text, slug text NOT NULL, directory text NOT NULL, path text,
  title text NOT NULL, version text NOT NULL, share_url text, summary_additions integer,
  summary_deletions integer, summary_files integer, summary_diffs text, metadata text,
  cost real DEFAULT 0 NOT NULL, tokens_input integer DEFAULT 0 NOT NULL,
  tokens_output integer DEFAULT 0 NOT NULL, tokens_reasoning integer DEFAULT 0 NOT NULL,
  tokens_cache_read integer DEFAULT 0 NOT NULL, tokens_cache_write integer DEFAULT 0 NOT NULL,
  revert text, permission text, agent text, model text, time_created integer NOT NULL,
  time_updated integer NOT NULL, time_compacting integer, time_archived integer);
CREATE TABLE IF NOT EXISTS message (
  id text PRIMARY KEY, session_id text NOT NULL REFERENCES session(id) ON DELETE CASCADE,
  time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE IF NOT EXISTS part (
  id text PRIMARY KEY, message_id text NOT NULL REFERENCES message(id) ON DELETE CASCADE,
  session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL,
  data text NOT NULL);
CREATE INDEX IF NOT EXISTS session_project_idx ON session (project_id);
CREATE INDEX IF NOT EXISTS session_parent_idx ON session (parent_id);
CREATE INDEX IF NOT EXISTS session_workspace_idx ON session (workspace_id);
CREATE INDEX IF NOT EXISTS message_session_time_created_id_idx
  ON message (session_id, time_created, id);
CREATE INDEX IF NOT EXISTS part_message_id_id_idx ON part (message_id, id);
CREATE INDEX IF NOT EXISTS part_session_idx ON part (session_id);
"""
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _opencode_id(prefix: str, ms: int, counter: int, rng: random.Random) -> str:
    """An id as OpenCode makes one: ascending (time and a counter in 12 hex digits), then 14
    random base62 characters; the database orders a message's parts by it."""
    tail = "".join(rng.choices(_BASE62, k=14))
    return f"{prefix}_{(ms * 0x1000 + counter) % 16**12:012x}{tail}"


def _opencode_fixture() -> tuple[dict[str, Any], list[tuple[dict[str, Any], list[Any]]]]:
    """The large fixture session and every fixture message with its parts, in the order
    OpenCode shows them (messages by creation time, parts by start time)."""

    def load(path: Path) -> Any:
        return json.loads(path.read_text(encoding="utf-8"))

    session = load(OPENCODE / "session" / "proj_test" / "ses_s_stage0_large.json")
    messages: list[tuple[dict[str, Any], list[Any]]] = []
    for sid in ("s_stage0_large", "s_stage0_small"):
        found = [load(p) for p in sorted((OPENCODE / "message" / sid).glob("*.json"))]
        found.sort(key=lambda m: (m["time"]["created"], m["id"]))
        for message in found:
            parts = [load(p) for p in sorted((OPENCODE / "part" / message["id"]).glob("*.json"))]
            parts.sort(key=lambda p: ((p.get("time") or {}).get("start") or 0, p["id"]))
            messages.append((message, parts))
    return session, messages


def _opencode(
    path: Path, key: str, directory: str, n: int, rng: random.Random, at: datetime
) -> None:
    """One session of about `n` rows (messages and parts) in OpenCode's database at `path`:
    the fixture's messages and parts in turn, with fresh ids, times and words, stored as
    OpenCode stores them (a message's `data` without its id and session, a part's without
    its id, message and session)."""
    fixture, messages = _opencode_fixture()
    start = int(at.timestamp() * 1000)
    project = hashlib.sha1(key.encode()).hexdigest()  # a git project's id: its root commit
    sid = _opencode_id("ses", start, 0, rng)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.executescript(OPENCODE_SCHEMA)
    db.execute(
        "INSERT OR IGNORE INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) "
        "VALUES (?, ?, 'git', ?, ?, '[]')",
        (project, directory, start, start),
    )
    rows = counter = 0
    ms = start
    user = None
    message_rows: list[tuple[Any, ...]] = []
    part_rows: list[tuple[Any, ...]] = []
    while rows < n:
        original, parts = messages[counter % len(messages)]
        counter += 1
        ms += 1000
        mid = _opencode_id("msg", ms, counter, rng)
        message = json.loads(json.dumps(original))
        del message["id"], message["sessionID"]
        message["time"] = {**message["time"], "created": ms}
        if message["role"] == "user":
            user = mid
            message["summary"] = {**message.get("summary", {}), "title": _sentence(rng)}
        elif "parentID" in message:
            message["parentID"] = user
        if "path" in message:
            message["path"] = directory
        message_rows.append((mid, sid, ms, ms, json.dumps(message)))
        rows += 1
        for j, original_part in enumerate(parts):
            part = {k: v for k, v in original_part.items()
                    if k not in ("id", "messageID", "sessionID")}  # fmt: skip
            part = json.loads(json.dumps(part))
            if isinstance(part.get("text"), str):
                part["text"] = _sentence(rng)
            if "time" in part:
                part["time"] = {"start": ms + 10 * j, **({"end": ms + 10 * j + 5}
                                if "end" in part["time"] else {})}  # fmt: skip
            if "callID" in part:
                part["callID"] = f"call_{counter}_{j}"
            if "tail_start_id" in part:
                part["tail_start_id"] = user
            pid = _opencode_id("prt", ms, counter * 64 + j, rng)
            part_rows.append((pid, mid, sid, ms + 10 * j, ms + 10 * j, json.dumps(part)))
            rows += 1
    db.execute(
        "INSERT INTO session (id, project_id, slug, directory, title, version, "
        "summary_additions, summary_deletions, summary_files, time_created, time_updated) "
        "VALUES (?, ?, ?, ?, ?, ?, 0, 0, 0, ?, ?)",
        (sid, project, f"{fixture['slug']}-{key[-6:]}", directory, _sentence(rng)[:60],
         fixture["version"], start, ms),
    )  # fmt: skip
    db.executemany("INSERT INTO message VALUES (?, ?, ?, ?, ?)", message_rows)
    db.executemany("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", part_rows)
    db.commit()
    db.close()


# Cline keeps no recording in ../shared/data: the shapes below are those of a live Cline 3.66
# task (tasks/<ts>/): the history in Anthropic's message format (thinking, text and tool_use
# blocks; a tool's result comes back as the next user message's text, "[<tool> for '<args>']
# Result:"), ui_messages.json's say/ask records pointing into it by conversationHistoryIndex
# (api_req_started's text a JSON request), a checkpoint after each tool, and the context
# window's truncation as a conversationHistoryDeletedRange.
CLINE_MODEL = {"providerId": "anthropic", "modelId": "claude-sonnet-4-5-20250929", "mode": "act"}
CLINE_TRUNCATE = 100  # history messages between two truncations of the model's context


def _cline(folder: Path, cwd: str, n: int, rng: random.Random, at: datetime) -> Path:
    """One task of `n` history messages in `folder`; returns its api_conversation_history.json."""
    ms = int(at.timestamp() * 1000)
    details = (
        "<environment_details>\n# VSCode Visible Files\n(No visible files)\n\n"
        f"# Current Working Directory ({cwd}) Files\nREADME.md\nsrc/\n\n"
        "# Current Mode\nACT MODE\n</environment_details>"
    )
    task = _sentence(rng)
    first = f"<task>\n{task}\n</task>"
    history: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": first},
                                     {"type": "text", "text": details}]},
    ]  # fmt: skip
    ui: list[dict[str, Any]] = [
        {"ts": ms, "type": "say", "say": "task", "text": task, "modelInfo": CLINE_MODEL,
         "conversationHistoryIndex": -1},
    ]  # fmt: skip

    def say(kind: str, text: str | None, **extra: Any) -> None:
        nonlocal ms
        ms += 250
        record: dict[str, Any] = {"ts": ms, "type": "say", "say": kind}
        if text is not None:
            record["text"] = text
        ui.append({**record, **extra, "conversationHistoryIndex": len(history) - 1})

    deleted: list[int] | None
    say("api_req_started", json.dumps({"request": f"{first}\n\n{details}", "tokensIn": 4546,
        "tokensOut": 216, "cacheWrites": 0, "cacheReads": 192, "cost": 0}),
        modelInfo=CLINE_MODEL, conversationHistoryDeletedRange=None)  # fmt: skip
    while len(history) < n:
        k = len(history)
        words, command = _sentence(rng), f"pytest -q tests/test_{rng.choice(WORDS)}.py"
        call = f"toolu_{k:06d}{rng.getrandbits(48):012x}"
        say("reasoning", words, partial=False)
        say("text", _sentence(rng), partial=False)
        history.append({
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": words, "signature": "",
                 "summary": [{"type": "reasoning.text", "text": words, "index": 0,
                              "format": None}]},
                {"type": "text", "text": ui[-1]["text"], "call_id": "", "reasoning_details": None},
                {"type": "tool_use", "id": call, "call_id": call, "name": "execute_command",
                 "input": {"command": command, "requires_approval": False},
                 "reasoning_details": None},
            ],
            "metrics": {"tokens": {"prompt": 4546 + 40 * k, "completion": 216, "cached": 192},
                        "cost": 0},
            "modelInfo": CLINE_MODEL,
        })  # fmt: skip
        output = _sentence(rng)
        say("command", command, commandCompleted=True)
        say("command_output", output)
        say("checkpoint_created", None, lastCheckpointHash=f"{rng.getrandbits(160):040x}",
            isCheckpointCheckedOut=False)  # fmt: skip
        if len(history) < n:
            result = f"[execute_command for '{command}'] Result:\n{output}"
            deleted = None  # set on the request where the range changed, null elsewhere
            if k // CLINE_TRUNCATE != (k + 2) // CLINE_TRUNCATE:
                deleted = [2, k - 1 - (k - 1) % 2]  # whole user/assistant pairs, as Cline drops
            say("api_req_started", json.dumps({"request": result, "tokensIn": 4546 + 40 * k,
                "tokensOut": 216, "cacheWrites": 0, "cacheReads": 192, "cost": 0}),
                modelInfo=CLINE_MODEL, conversationHistoryDeletedRange=deleted)  # fmt: skip
            content = [{"type": "text", "text": result}, {"type": "text", "text": details}]
            history.append({"role": "user", "content": content})
    say("completion_result", _sentence(rng), partial=False)
    meta = {
        "files_in_context": [],
        "model_usage": [{"ts": int(at.timestamp() * 1000), "model_id": CLINE_MODEL["modelId"],
                         "model_provider_id": CLINE_MODEL["providerId"], "mode": "act"}],
        "environment_history": [{"ts": int(at.timestamp() * 1000), "os_name": "linux",
                                 "host_name": "Visual Studio Code", "cline_version": "3.66.0"}],
    }  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ui_messages.json").write_bytes(orjson.dumps(ui))
    (folder / "task_metadata.json").write_bytes(orjson.dumps(meta))
    path = folder / "api_conversation_history.json"
    path.write_bytes(orjson.dumps(history))
    return path


WRITERS = {"claude-code": _claude, "codex": _codex, "gemini": _gemini, "copilot": _copilot}


def chat(fmt: str, home: Path, index: int, records: int, rng: random.Random) -> Path:
    """Write chat `index` of format `fmt` with about `records` source records under `home`
    (where the harness keeps it); returns the file."""
    at = START + timedelta(minutes=7 * index)
    key = f"{fmt}-{index:06d}-0000-4000-8000-{index:012d}"
    if fmt == "claude-code":
        path = home / ".claude" / "projects" / f"-work-p{index % 40}" / f"{key}.jsonl"
    elif fmt == "codex":
        day = at.strftime("%Y/%m/%d")
        path = home / ".codex" / "sessions" / day / f"rollout-{at:%Y-%m-%dT%H-%M-%S}-{key}.jsonl"
    elif fmt == "gemini":
        path = (
            home
            / ".gemini"
            / "tmp"
            / f"p{index % 40}"
            / "chats"
            / f"session-{at:%Y-%m-%dT%H-%M}-{index:08x}.jsonl"
        )
    elif fmt == "copilot":
        path = home / ".copilot" / "session-state" / key / "events.jsonl"
    elif fmt == "opencode":  # every session in one database; returns the database
        path = home / ".local" / "share" / "opencode" / "opencode.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        _opencode(path, key, f"/work/p{index % 40}", records, rng, at)
        return path
    elif fmt == "cline":  # a task folder, named by its start time in ms; returns its history
        tasks = home / ".config" / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev"
        return _cline(
            tasks / "tasks" / str(int(at.timestamp() * 1000)),
            f"/work/p{index % 40}",
            records,
            rng,
            at,
        )
    else:
        path = home / "repos" / f"r{index}" / ".aider.chat.history.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "aider":
        lines = _aider(records, rng, at)
    else:
        lines = WRITERS[fmt](_records_cached(fmt), records, key, rng, at)
    with path.open("wb") as out:
        for line in lines:
            out.write(line if fmt == "aider" else line + b"\n")
    return path


_CACHE: dict[str, list[Any]] = {}


def _records_cached(fmt: str) -> list[Any]:
    if fmt not in _CACHE:
        _CACHE[fmt] = _records(fmt)
    return _CACHE[fmt]


def generate(home: Path, entries: int, chats: int, seed: int = 24) -> dict[str, int]:
    """Write the mix; returns the chats written per format."""
    rng = random.Random(seed)
    written: dict[str, int] = {}
    index = 0
    for fmt, share in MIX.items():
        count = max(1, round(chats * share))
        per_chat = max(4, round(entries * share / count / PER_RECORD[fmt]))
        for _ in range(count):
            chat(fmt, home, index, per_chat, rng)
            index += 1
        written[fmt] = count
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--chats", type=int, default=5_000)
    args = parser.parse_args()
    print(generate(args.home, args.entries, args.chats))


if __name__ == "__main__":
    main()
