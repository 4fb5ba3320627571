"""A chat that states no time of its own takes its file's modification time, not 1970.

Copies of the real samples with their timestamps removed; the file's mtime is
set with os.utime, so nothing here reads the wall clock.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from sessionforest import Forest

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
SIMPLE = DATA / "claude-code/synthetic/dag_simple.jsonl"
PI = DATA / "pi/large-session.jsonl"
MULTI = DATA / "chatgpt/thinking-multi-preamble.json"
MTIME = 1_750_000_000  # 2025-06-15T15:06:40Z
AT = "2025-06-15T15:06:40.000Z"


def _timeless(path: Path, lines: list[dict]) -> Path:
    for record in lines:
        record.pop("timestamp", None)
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    os.utime(path, (MTIME, MTIME))
    return path


def test_a_claude_code_file_without_times_takes_its_mtime_and_keeps_it(
    forest: Forest, tmp_path: Path
) -> None:
    lines = [json.loads(line) for line in SIMPLE.read_text().splitlines()]
    path = _timeless(tmp_path / SIMPLE.name, lines)
    [chat] = forest.import_chats("claude-code", path).chats
    assert forest.session(chat.session_id).created_at == AT
    assert {e.created_at for e in forest.entries(chat.session_id)} == {AT}
    # The file grows and its mtime moves: the stored times stay, nothing conflicts.
    extra = dict(lines[-1], uuid="later", parentUuid=lines[-1]["uuid"])
    _timeless(path, [*lines, extra])
    os.utime(path, (MTIME + 3600, MTIME + 3600))
    again = forest.import_chats("claude-code", path)
    assert again.ok and (again.entries, again.unchanged) == (1, len(lines))
    assert {e.created_at for e in forest.entries(chat.session_id)} == {AT}


def test_a_pi_header_without_a_timestamp_takes_the_mtime(forest: Forest, tmp_path: Path) -> None:
    lines = [json.loads(line) for line in PI.read_text().splitlines()]
    path = _timeless(tmp_path / PI.name, lines)
    [chat] = forest.import_chats("pi", path).chats
    assert forest.session(chat.session_id).created_at == AT
    assert forest.entries(chat.session_id)[0].created_at == AT


def test_a_chatgpt_conversation_without_times_takes_the_mtime(
    forest: Forest, tmp_path: Path
) -> None:
    conv = json.loads(MULTI.read_text())
    conv.pop("create_time", None)
    for node in conv["mapping"].values():
        if isinstance(node.get("message"), dict):
            node["message"]["create_time"] = None
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conv]))
    os.utime(path, (MTIME, MTIME))
    [chat] = forest.import_chats("chatgpt", path).chats
    assert forest.session(chat.session_id).created_at == AT
    assert {e.created_at for e in forest.entries(chat.session_id)} == {AT}


def test_a_claude_code_file_of_only_snapshots_is_dated_by_its_first_snapshot(
    forest: Forest, tmp_path: Path
) -> None:
    # A real chat that never got a turn: four file-history snapshots, each with its
    # time inside `snapshot`, none at the top level. It is dated when it ran, not when
    # the file was last copied.
    real = DATA / "claude-code/real_projects/-experiments-ideas"
    source = real / "a95fea4a-b88a-4e49-ac07-4cc323d8700c.jsonl"
    records = [json.loads(line) for line in source.read_text().splitlines()]
    assert all("timestamp" not in r and r["type"] == "file-history-snapshot" for r in records)
    path = tmp_path / source.name
    path.write_bytes(source.read_bytes())
    os.utime(path, (MTIME, MTIME))
    [chat] = forest.import_chats("claude-code", path).chats
    first = records[0]["snapshot"]["timestamp"]  # 2026-02-16T18:47:50.736Z
    assert forest.session(chat.session_id).created_at == first
    # Its entries take the chat's time, as every record without a `timestamp` does: a
    # store that dated this chat by its mtime before keeps its entries as they are.
    assert {e.created_at for e in forest.entries(chat.session_id)} == {first}
    os.utime(path, (MTIME + 60, MTIME + 60))
    again = forest.import_chats("claude-code", path)
    assert again.ok and again.unchanged == len(records)
