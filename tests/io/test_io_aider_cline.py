"""Aider chat histories (the real aider fixture: 1,133 runs) and Cline / Roo Code task folders."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from sessionforest import Forest
from sessionforest.io.common import Ids

DATA = Path(__file__).parents[2].parent / "shared" / "data"
AIDER = DATA / "aider" / "chat-history.md"


def _runs(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.startswith("# aider chat started at"))


def _aider_sample(tmp_path: Path, runs: int = 40) -> Path:
    """The fixture's first `runs` runs as a repo's history file."""
    lines = AIDER.read_text().splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("# aider chat started at")]
    target = tmp_path / "repo" / ".aider.chat.history.md"
    target.parent.mkdir(parents=True)
    target.write_text("".join(lines[: starts[runs]]))
    return target


def test_aider_one_chat_per_run_with_commits_as_stamps(forest: Forest, tmp_path: Path) -> None:
    history = _aider_sample(tmp_path)
    report = forest.import_chats("aider", tmp_path)  # a directory: every history file below it
    assert report.ok and len(report.chats) == _runs(history.read_text()) == 40
    text = history.read_text()
    commits = [line.split()[2] for line in text.splitlines() if line.startswith("> Commit ")]
    stamped = [
        e.stamp["head"]
        for c in report.chats
        for e in forest.entries(c.session_id)
        if e.stamp is not None
    ]
    # Every commit aider made of a reply stamps that reply (a commit of a run with no
    # reply, as `aider --commit` makes, has no reply to stamp).
    assert stamped and set(stamped) <= set(commits)
    chat = next(
        c
        for c in report.chats
        if "fd43cd4" in {e.stamp["head"] for e in forest.entries(c.session_id) if e.stamp}
    )
    info = forest.session(chat.session_id)
    assert info.title == "Use the Spinner instead of the inlined custom spinner"
    assert info.created_at == "2024-08-05T19:33:32.000Z" and info.harness == "aider"
    kinds = [e.kind for e in forest.active_path(chat.session_id)]
    assert kinds[:3] == ["provider.notification", "user.message", "assistant.message"]
    reply = forest.active_path(chat.session_id)[2]
    assert "<<<<<<< SEARCH" in reply.payload["content"][0]["text"]  # the edit block as written
    commands = [e for e in forest.entries(chat.session_id) if e.payload.get("command")]
    assert [e.payload["content"][0]["text"] for e in commands] == ["/diff", "/ex"]
    again = forest.import_chats("aider", history)
    assert again.entries == 0 and again.unchanged == report.entries


@pytest.mark.slow
def test_aider_the_whole_fixture(tmp_path: Path) -> None:
    with Forest.open(tmp_path / "f.db") as forest:
        report = forest.import_chats("aider", AIDER)
        assert report.ok and len(report.chats) == _runs(AIDER.read_text()) == 1133
        assert report.entries > 5000


def test_aider_bad_utf8_is_named(forest: Forest, tmp_path: Path) -> None:
    bad = tmp_path / ".aider.chat.history.md"
    bad.write_bytes(b"# aider chat started at 2024-08-05 19:33:02\n\n#### caf\xe9\n")
    report = forest.import_chats("aider", bad)
    assert not report.ok
    assert "not valid UTF-8 (byte 0xe9 at line 3" in report.failed[0].reason


def _task(root: Path, task: str) -> Path:
    folder = root / "saoudrizwan.claude-dev" / "tasks" / task
    folder.mkdir(parents=True)
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nlist the files\n</task>"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Listing."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "execute_command",
                    "input": {"command": "ls"},
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "There is a.txt."}]},
    ]
    ui = [
        {"ts": 1767225600000, "type": "say", "say": "task", "text": "list the files"},
        {
            "ts": 1767225601000,
            "type": "say",
            "say": "api_req_started",
            "conversationHistoryIndex": 1,
            "lastCheckpointHash": "0123456789abcdef0123",
        },
        {
            "ts": 1767225602000,
            "type": "say",
            "say": "text",
            "conversationHistoryIndex": 3,
            "conversationHistoryDeletedRange": [1, 2],
        },
    ]
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    (folder / "task_metadata.json").write_text(json.dumps({"files_in_context": []}))
    return folder


def test_cline_tasks_with_checkpoints_and_deleted_ranges(forest: Forest, tmp_path: Path) -> None:
    _task(tmp_path, "1767225600000")
    roo = tmp_path / "rooveterinaryinc.roo-cline" / "tasks"
    roo.parent.mkdir()
    shutil.copytree(tmp_path / "saoudrizwan.claude-dev" / "tasks", roo)
    shutil.move(roo / "1767225600000", roo / "1767225699999")  # Roo Code: the same layout
    report = forest.import_chats("cline", tmp_path)
    assert report.ok and len(report.chats) == 2
    sid = Ids("cline", "1767225600000").session
    path = forest.active_path(sid)
    kinds = Counter(e.kind for e in forest.entries(sid))
    assert kinds["tool.completed"] == 1 and kinds["compaction"] == 1 and kinds["checkpoint"] == 1
    call = next(
        b
        for e in path
        if e.kind == "assistant.message"
        for b in e.payload["content"]
        if b["type"] == "tool_call"
    )
    done = next(e for e in path if e.kind == "tool.completed")
    assert call["id"] == done.payload["call_id"] == "toolu_1"
    (mark,) = forest.checkpoints(sid)
    assert mark.payload["label"] == "checkpoint 0123456789ab"
    assert path[-1].kind == "compaction" and path[-1].payload["deleted_range"] == [1, 2]
    info = forest.session(sid)
    assert info.created_at == "2026-01-01T00:00:00.000Z" and info.harness == "cline"
    assert info.title == "list the files"
    assert forest.import_chats("cline", tmp_path).entries == 0


def _first_turn(folder: Path, cwd: str, where: str) -> None:
    """Put Cline's environment details (naming `cwd`) on the first turn, in the history or
    in the request ui_messages.json records."""
    details = (
        "<environment_details>\n# VSCode Visible Files\na.txt\n\n"
        f"# Current Working Directory ({cwd}) Files\na.txt\n</environment_details>"
    )
    history_path = folder / "api_conversation_history.json"
    if where == "history":
        history = json.loads(history_path.read_text())
        history[0]["content"].append({"type": "text", "text": details})
        history_path.write_text(json.dumps(history))
    else:
        ui_path = folder / "ui_messages.json"
        ui = json.loads(ui_path.read_text())
        request = json.dumps({"request": f"<task>\nlist the files\n</task>\n\n{details}"})
        ui[1]["text"] = request
        ui_path.write_text(json.dumps(ui))


@pytest.mark.parametrize("where", ["history", "ui"])
def test_cline_the_working_directory_the_extension_told_the_model(
    forest: Forest, tmp_path: Path, where: str
) -> None:
    folder = _task(tmp_path, "1767225600000")
    _first_turn(folder, "/home/me/widgets", where)
    assert forest.import_chats("cline", tmp_path).ok
    assert forest.session(Ids("cline", "1767225600000").session).origin_cwd == "/home/me/widgets"


def test_cline_the_working_directory_the_task_index_records(forest: Forest, tmp_path: Path) -> None:
    """state/taskHistory.json (Cline's index of tasks) records where each task began; it
    wins over the environment details, and a task it does not list falls back to them."""
    folder = _task(tmp_path, "1767225600000")
    _first_turn(folder, "/home/me/told", "history")
    other = _task(tmp_path, "1767225700000")
    _first_turn(other, "/home/me/other", "history")
    state = tmp_path / "saoudrizwan.claude-dev" / "state"
    state.mkdir()
    index = [
        {"id": "1767225600000", "ts": 1767225600000, "task": "list the files",
         "cwdOnTaskInitialization": "/home/me/widgets", "shadowGitConfigWorkTree": "/x"},
        {"id": "1767225800000", "ts": 1767225800000, "task": "not here"},
    ]  # fmt: skip
    (state / "taskHistory.json").write_text(json.dumps(index))
    assert forest.import_chats("cline", tmp_path).ok
    assert forest.session(Ids("cline", "1767225600000").session).origin_cwd == "/home/me/widgets"
    assert forest.session(Ids("cline", "1767225700000").session).origin_cwd == "/home/me/other"


def test_cline_no_directory_stated_is_none(forest: Forest, tmp_path: Path) -> None:
    _task(tmp_path, "1767225600000")
    assert forest.import_chats("cline", tmp_path).ok
    assert forest.session(Ids("cline", "1767225600000").session).origin_cwd is None
