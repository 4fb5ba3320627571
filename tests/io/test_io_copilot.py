"""GitHub Copilot CLI sessions: the fixtures (flat, `<id>/events.jsonl`, schema drift), a real
Copilot CLI run against the stand-in, and following an events file as it grows."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from follow_helpers import contents, grow
from harness_cli import git_repo
from sessionforest import Forest
from standin import Reply

DATA = Path(__file__).parents[2].parent / "shared" / "data"
FIXTURES = DATA / "format-fixtures" / "agent-sessions" / "copilot"
FILES = ["small.jsonl", "large.jsonl", "schema_drift.jsonl"]


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name", FILES)
def test_every_event_is_kept_in_its_tree(forest: Forest, name: str) -> None:
    path = FIXTURES / name
    report = forest.import_chats("copilot", path)
    assert report.ok, [str(f) for f in report.failed]
    (chat,) = report.chats
    events = _events(path)
    entries = forest.entries(chat.session_id)
    assert len(entries) == len(events)  # one entry per event, none dropped
    kinds = Counter(e.kind for e in entries)
    assert kinds["user.message"] == sum(e["type"] == "user.message" for e in events)
    assert kinds["tool.completed"] == sum(e["type"] == "tool.execution_complete" for e in events)
    calls = {
        b["id"]
        for e in entries
        if e.kind == "assistant.message"
        for b in e.payload["content"]
        if b["type"] == "tool_call"
    }
    done = {e.payload["call_id"] for e in entries if e.kind == "tool.completed"}
    assert done & calls  # results paired with their calls by toolCallId
    info = forest.session(chat.session_id)
    assert info.harness == "copilot-cli"
    if name == "schema_drift.jsonl":
        assert kinds["compaction"] == 1  # session.truncation
        failed = [e for e in entries if e.kind == "tool.completed" and e.payload["is_error"]]
        assert [e.payload["call_id"] for e in failed] == ["call_2"]


def test_the_events_folder_layout(forest: Forest) -> None:
    report = forest.import_chats("copilot", FIXTURES / "subdir_v1")
    assert report.ok and len(report.chats) == 1
    sid = report.chats[0].session_id
    info = forest.session(sid)
    assert info.source_id == "aaaabbbb-1111-2222-3333-ccccddddeeee"
    assert info.origin_cwd == "/tmp/project" and info.title == "List the files"
    # session.start's context: the branch, HEAD and repository Copilot recorded
    assert (info.git_branch, info.git_commit) == ("main", "0" * 40)
    assert info.git_repository == "example/repo"
    said = [e.kind for e in forest.active_path(sid)]
    assert said.count("assistant.message") == 2 and "tool.completed" in said


def test_a_growing_events_file_followed_in_pieces_equals_one_import(tmp_path: Path) -> None:
    source = FIXTURES / "small.jsonl"
    target = tmp_path / "s" / "events.jsonl"
    size = source.stat().st_size
    with Forest.open(tmp_path / "a.db") as pieces:
        grow(pieces, "copilot", source, target, [size * k // 6 + 5 for k in range(1, 6)])
        grown = contents(pieces)
    with Forest.open(tmp_path / "b.db") as whole:
        whole.import_chats("copilot", target)
        assert contents(whole) == grown


@pytest.mark.slow
def test_a_real_copilot_cli_run(real_cli: Any, tmp_path: Path) -> None:
    cli = real_cli("copilot")
    commit = git_repo(cli.cwd, "feature/provenance")
    marker = cli.cwd / "out.txt"
    cli.script(
        Reply(text="running it", tools=[cli.shell(f"expr 40 + 2 > {marker}")]),
        Reply(text="it wrote 42"),
    )
    cli.run("compute it")
    assert marker.read_text().strip() == "42"
    cli.script(Reply(text="resumed"))
    cli.run("once more", resume=True)
    (events,) = cli.transcripts()
    with Forest.open(tmp_path / "f.db") as forest:
        report = forest.import_chats("copilot", cli.home / ".copilot" / "session-state")
        assert report.ok, [str(f) for f in report.failed]
        (chat,) = report.chats
        talk = [
            e
            for e in forest.active_path(chat.session_id)
            if e.kind in ("user.message", "assistant.message", "tool.completed")
        ]
        assert talk[0].payload["content"][0]["text"] == "compute it"
        call = next(b for b in talk[1].payload["content"] if b["type"] == "tool_call")
        assert call["name"] == "bash" and "expr 40 + 2" in call["input"]["command"]
        assert talk[2].kind == "tool.completed" and talk[2].payload["call_id"] == call["id"]
        assert talk[3].payload["content"][0]["text"] == "it wrote 42"
        assert talk[4].payload["content"][0]["text"] == "once more"  # resumed: same chat
        assert talk[5].payload["content"][0]["text"] == "resumed"
        stamps = {e["timestamp"][:19] for e in _events(events)}
        assert {e.created_at[:19] for e in talk} <= stamps
        info = forest.session(chat.session_id)
        assert info.origin_cwd == str(cli.cwd)
        assert (info.git_branch, info.git_commit) == ("feature/provenance", commit)
