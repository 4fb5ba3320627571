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
