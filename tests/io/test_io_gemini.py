"""Gemini CLI chats: the recording (older JSON), the fixtures (JSONL v0.40, JSON, the oldest
`history` form), a real Gemini CLI run, copies, rewinds, rewritten histories, sub-agents,
`/chat save` checkpoints, and following a chat as it grows."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from follow_helpers import contents, grow
from sessionforest import Forest
from sessionforest.io import gemini
from sessionforest.io.common import Ids
from standin import Reply

DATA = Path(__file__).parents[2].parent / "shared" / "data"
RECORDING = DATA / "gemini" / "ai-sessions" / "gemini-cli-pomodoro-timer.json"
FIXTURES = DATA / "format-fixtures" / "agent-sessions" / "gemini"


def _texts(forest: Forest, sid: str, *kinds: str) -> list[str]:
    return [
        b.get("text", b.get("name", ""))
        for e in forest.active_path(sid)
        if e.kind in kinds
        for b in e.payload.get("content", [])
    ]


def test_the_recording_keeps_every_message_call_and_result(forest: Forest) -> None:
    report = forest.import_chats("gemini", RECORDING)
    assert report.ok and len(report.chats) == 1
    sid = report.chats[0].session_id
    record = json.loads(RECORDING.read_text())
    messages = record["messages"]
    calls = [c for m in messages for c in m.get("toolCalls", [])]
    kinds = Counter(e.kind for e in forest.entries(sid))
    assert kinds["user.message"] == sum(m["type"] == "user" for m in messages)
    assert kinds["tool.completed"] == len(calls)
    entries = forest.entries(sid)
    called = [
        b["id"]
        for e in entries
        for b in e.payload.get("content", [])
        if b.get("type") == "tool_call"
    ]
    assert sorted(called) == sorted(c["id"] for c in calls)
    answered = {e.payload["call_id"] for e in entries if e.kind == "tool.completed"}
    assert answered == set(called)
    thoughts = sum(len(m.get("thoughts", [])) for m in messages)
    thinking = [
        b for e in entries for b in e.payload.get("content", []) if b.get("type") == "thinking"
    ]
    assert len(thinking) == thoughts
    info = forest.session(sid)
    assert info.harness == "gemini-cli" and info.title.startswith("Build a simple Pomodoro")
    # A file outside `tmp/<project>/chats/`: its projectHash is the project it names
    assert info.origin_project == json.loads(RECORDING.read_text())["projectHash"]
    assert info.origin_cwd is None
    assert {e.created_at[:19] for e in entries if e.kind == "user.message"} == {
        m["timestamp"][:19] for m in messages if m["type"] == "user"
    }
    assert forest.import_chats("gemini", RECORDING).entries == 0


def test_the_jsonl_fixture(forest: Forest) -> None:
    report = forest.import_chats("gemini", FIXTURES / "jsonl_v040.jsonl")
    assert report.ok
    sid = report.chats[0].session_id
    said = [(e.kind, e.payload) for e in forest.active_path(sid)]
    assert said[0] == (
        "user.message",
        {"content": [{"type": "text", "text": "Say hello and list files."}]},
    )
    call = said[1][1]["content"][0]  # an empty text before the call is no entry
    assert call["name"] == "run_shell_command" and call["input"]["command"] == "ls -F"
    assert said[2][0] == "tool.completed" and "AgentSessions/" in said[2][1]["output"]
    assert said[-1][1]["content"][0]["text"] == "Hello! I listed the files."


@pytest.mark.parametrize("name", ["small.json", "large.json", "schema_drift.json"])
def test_the_json_fixtures(forest: Forest, name: str) -> None:
    report = forest.import_chats("gemini", FIXTURES / name)
    assert report.ok, [str(f) for f in report.failed]
    sid = report.chats[0].session_id
    users = _texts(forest, sid, "user.message")
    assert users, "no user turn imported"
    if name == "schema_drift.json":
        # The oldest `history` form: parts (with an inline image) and the summary kept.
        (first,) = [e for e in forest.active_path(sid) if e.kind == "user.message"]
        assert [b["type"] for b in first.payload["content"]] == ["text", "image"]
        assert forest._backend.bulk.stored_session(sid).summary == "Redacted session summary"
        meta = [e for e in forest.entries(sid) if e.kind == "provider.notification"]
        assert meta and meta[0].payload["event"]["meta"] == {"model": "gmini-pro"}


def _chat_file(
    root: Path, lines: list[dict[str, Any]], name: str = "session-2026-03-01T10-00-abcd1234"
) -> Path:
    path = root / ".gemini" / "tmp" / "proj" / "chats" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


META = {
    "sessionId": "abcd1234-0000",
    "projectHash": "h",
    "startTime": "2026-03-01T10:00:00.000Z",
    "lastUpdated": "2026-03-01T10:00:00.000Z",
    "kind": "main",
}
CONTEXT = {
    "id": "ctx",
    "timestamp": "2026-03-01T10:00:00.100Z",
    "type": "user",
    "content": [{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}],
}


def _user(mid: str, words: str, second: int) -> dict[str, Any]:
    return {
        "id": mid,
        "timestamp": f"2026-03-01T10:00:{second:02d}.000Z",
        "type": "user",
        "content": [{"text": words}],
    }


def _gemini(mid: str, words: str, second: int, **more: Any) -> dict[str, Any]:
    return {
        "id": mid,
        "timestamp": f"2026-03-01T10:00:{second:02d}.000Z",
        "type": "gemini",
        "content": words,
        "model": "gemini-2.5-flash",
        **more,
    }


def test_the_session_context_is_no_user_turn_and_copies_are_stored_once(
    forest: Forest, tmp_path: Path
) -> None:
    call = {"id": "c1", "name": "run_shell_command", "args": {"command": "ls"}}
    result = [
        {
            "functionResponse": {
                "id": "c1",
                "name": "run_shell_command",
                "response": {"output": "a.txt"},
            }
        }
    ]
    path = _chat_file(
        tmp_path,
        [
            META,
            {"$set": {"messages": [CONTEXT]}},
            _user("u1", "list files", 1),
            {"$set": {"lastUpdated": "x"}},
            _gemini("g1", "listing", 2),  # the message, then two newer copies of it
            _gemini("g1", "listing", 2, toolCalls=[call]),
            _gemini("g1", "listing", 2, toolCalls=[call | {"result": result, "status": "success"}]),
            {
                "id": "u2",
                "timestamp": "2026-03-01T10:00:03.000Z",
                "type": "user",
                "content": result,
            },
            _gemini("g2", "there is a.txt", 4),
        ],
    )
    report = forest.import_chats("gemini", path)
    assert report.ok and report.branches == 0
    sid = report.chats[0].session_id
    path_kinds = [e.kind for e in forest.active_path(sid)]
    assert path_kinds == [
        "system.message",
        "user.message",
        "assistant.message",
        "assistant.message",
        "tool.completed",
        "assistant.message",
    ]
    first = forest.active_path(sid)[0]
    assert (
        first.payload["wrapper"] == "session_context" and forest.session(sid).title == "list files"
    )


def test_a_rewind_and_a_rewritten_history_never_edit_stored_entries(
    forest: Forest, tmp_path: Path
) -> None:
    lines = [
        META,
        _user("u1", "one", 1),
        _gemini("g1", "first", 2),
        _user("u2", "two", 3),
        _gemini("g2", "second", 4),
        {"$rewindTo": "u2"},
        _user("u3", "two, again", 5),
        _gemini("g3", "second, again", 6),
    ]
    path = _chat_file(tmp_path, lines)
    report = forest.import_chats("gemini", path)
    sid = report.chats[0].session_id
    assert report.branches == 1
    assert _texts(forest, sid, "user.message", "assistant.message") == [
        "one",
        "first",
        "two, again",
        "second, again",
    ]
    # /compress: the whole list replaced by a summary: a compaction, then the new history.
    summary = [
        _user("s1", "<state_snapshot>we talked about one and two</state_snapshot>", 7),
        _gemini("s2", "Got it.", 8),
    ]
    with path.open("a") as out:
        out.write(json.dumps({"$set": {"messages": summary}}) + "\n")
        out.write(json.dumps(_user("u4", "three", 9)) + "\n")
    before = {e.id: e for e in forest.entries(sid)}
    again = forest.import_chats("gemini", path)
    assert again.ok
    after = {e.id: e for e in forest.entries(sid)}
    assert all(after[i] == before[i] for i in before)  # nothing stored changed
    active = forest.active_path(sid)
    kinds = [e.kind for e in active]
    assert "compaction" in kinds and kinds.index("compaction") == 4
    assert _texts(forest, sid, "user.message")[-1] == "three"
    # A $set that keeps the first turn and changes the rest: a branch from the shared turn.
    rewritten = [
        _user("s1", "<state_snapshot>we talked about one and two</state_snapshot>", 7),
        _gemini("s9", "Understood.", 10),
    ]
    with path.open("a") as out:
        out.write(json.dumps({"$set": {"messages": rewritten}}) + "\n")
    third = forest.import_chats("gemini", path)
    assert third.branches > again.branches
    assert _texts(forest, sid, "assistant.message")[-1] == "Understood."


def test_a_subagent_chat_is_a_hidden_worker(forest: Forest, tmp_path: Path) -> None:
    main = _chat_file(tmp_path, [META, _user("u1", "delegate it", 1)])
    sub = main.parent / "abcd1234-0000" / "sub-1.jsonl"
    sub.parent.mkdir()
    sub.write_text(
        json.dumps(META | {"sessionId": "sub-1", "kind": "subagent"})
        + "\n"
        + json.dumps(_user("x", "sub task", 2))
        + "\n"
    )
    report = forest.import_chats("gemini", tmp_path / ".gemini" / "tmp")
    assert report.ok and len(report.chats) == 2
    worker = Ids("gemini", "proj/abcd1234-0000/sub-1").session
    assert forest.session(worker).visibility == "hidden"
    agent = forest.agent_for_session(worker)
    assert agent is not None and agent.role == "worker"


def test_a_growing_chat_followed_in_pieces_equals_one_import(tmp_path: Path) -> None:
    source = FIXTURES / "jsonl_v040.jsonl"
    target = tmp_path / "chats" / "session-x.jsonl"
    size = source.stat().st_size
    with Forest.open(tmp_path / "a.db") as pieces:
        grow(pieces, "gemini", source, target, [size * k // 5 + 3 for k in range(1, 5)])
        grown = contents(pieces)
    with Forest.open(tmp_path / "b.db") as whole:
        whole.import_chats("gemini", target)
        assert contents(whole) == grown


@pytest.mark.slow
def test_a_real_gemini_cli_run_with_a_shell_command_a_resume_and_a_saved_chat(
    real_cli: Any, tmp_path: Path
) -> None:
    cli = real_cli("gemini")
    cli.script(Reply(text="hello from the stand-in"))
    cli.run("say hello")
    marker = cli.cwd / "out.txt"
    cli.script(
        Reply(text="running it", tools=[cli.shell(f"expr 40 + 2 > {marker}")]),
        Reply(text="it wrote 42"),
    )
    cli.run("compute it", resume=True)
    assert marker.read_text().strip() == "42"
    cli.run("/chat save mytag", resume=True, check=False)  # saves, then exits 1 in -p mode
    root = cli.home / ".gemini" / "tmp"
    assert list(root.glob("*/checkpoint-mytag.json"))
    with Forest.open(tmp_path / "f.db") as forest:
        report = forest.import_chats("gemini", root)
        assert report.ok, [str(f) for f in report.failed]
        (sid,) = {c.session_id for c in report.chats if c.source_id != "checkpoint-mytag"}
        active = forest.active_path(sid)
        said = [(e.kind, e.payload) for e in active if e.kind != "system.message"]
        assert said[0][1]["content"][0]["text"] == "say hello"
        assert said[1][1]["content"][0]["text"] == "hello from the stand-in"
        assert said[2][1]["content"][0]["text"] == "compute it"  # resumed: the same chat
        call = said[4][1]["content"][0]
        assert call["name"] == "run_shell_command" and "expr 40 + 2" in call["input"]["command"]
        assert said[5][0] == "tool.completed" and said[5][1]["call_id"] == call["id"]
        assert said[-1][1]["content"][0]["text"] == "it wrote 42"
        assert (
            active[0].kind == "system.message" and active[0].payload["wrapper"] == "session_context"
        )
        assert all(e.created_at.endswith("Z") for e in active)
        (mark,) = forest.checkpoints(sid)
        assert mark.payload["label"] == "mytag"
        # The project folder's .project_root is the directory it ran in; the slug its project
        info = forest.session(sid)
        assert (info.origin_cwd, info.origin_project) == (str(cli.cwd), cli.cwd.name)
        assert forest.import_chats("gemini", root).entries == 0


def test_sources_count_a_resume_in_a_later_minute_once(
    forest: Forest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real CLI, resumed in a later minute than its session's file is named by, writes
    a file of that minute holding only the session context and goes on in the first file
    (seen with 0.61.0): `forest sources` counts one chat, and once the first is imported
    neither file is new; a second session in the same project is still new."""
    first = _chat_file(
        tmp_path, [META, {"$set": {"messages": [CONTEXT]}}, _user("u1", "question one", 1)]
    )
    stray = _chat_file(
        tmp_path, [META, {"$set": {"messages": [CONTEXT]}}], "session-2026-03-01T10-07-abcd1234"
    )
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    (before,) = [loc for loc in forest.sources() if loc.harness.format == "gemini"]
    assert (len(before.files), before.chats, before.new) == (2, 1, 2)
    report = forest.import_chats("gemini", first.parent)
    assert report.ok and len({c.session_id for c in report.chats}) == 1
    (after,) = [loc for loc in forest.sources() if loc.harness.format == "gemini"]
    assert (after.chats, after.new, after.imported) == (1, 0, 2)
    other = dict(META, sessionId="ef567890-0000")
    _chat_file(
        tmp_path, [other, _user("u2", "question two", 2)], "session-2026-03-01T11-00-ef567890"
    )
    (later,) = [loc for loc in forest.sources() if loc.harness.format == "gemini"]
    assert (later.chats, later.new, later.imported) == (2, 1, 2)
    assert stray.exists()


def test_a_resumes_stray_file_followed_makes_no_chat_and_stays_at_its_start(
    forest: Forest, tmp_path: Path
) -> None:
    """The stray file of a resume in a later minute holds only the session context: the
    live mirror following it writes nothing and keeps its position at 0 (a chat file
    without a turn yet is read again from its start), while its session's file is
    followed to its end (the real-CLI watcher test counts the pair as caught up so)."""
    first = _chat_file(
        tmp_path, [META, {"$set": {"messages": [CONTEXT]}}, _user("u1", "question one", 1)]
    )
    stray = _chat_file(
        tmp_path, [META, {"$set": {"messages": [CONTEXT]}}], "session-2026-03-01T10-07-abcd1234"
    )
    assert forest.import_followed("gemini", first).report.ok
    assert forest.import_followed("gemini", stray).report.ok
    kept = {Path(r.path).name: r.offset for r in forest.followed_sources()}
    assert kept == {first.name: first.stat().st_size, stray.name: 0}
    assert len(forest.sessions()) == 1
    assert gemini.session_key(first) == gemini.session_key(stray) is not None
