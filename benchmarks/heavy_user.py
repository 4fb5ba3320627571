"""A heavy user's HOME: many chats of several harnesses, synthesised from the recordings' shapes.

`generate(home, entries, chats)` writes, under `home`, what Claude Code,
Codex, Gemini CLI, Copilot CLI and aider keep (in their default places, so
`forest sources` finds them), splitting `entries` over `chats` by `MIX`. Each
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
import json
import random
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
