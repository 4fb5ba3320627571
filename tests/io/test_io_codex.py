"""Codex CLI rollouts: the shared recording and fixtures, a real Codex run, rewinds, forks,
sub-agents, and following a rollout as it grows."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from follow_helpers import contents, grow
from harness_cli import git_repo
from sessionforest import Forest
from sessionforest.cli.main import cli as forest_cli
from sessionforest.io.common import Ids
from standin import Reply

DATA = Path(__file__).parents[2].parent / "shared" / "data"
RECORDING = DATA / "codex" / "ai-sessions" / "codex-pomodor-timer.jsonl"
FIXTURES = DATA / "format-fixtures" / "agent-sessions" / "codex"


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _kinds(forest: Forest, sid: str) -> Counter[str]:
    return Counter(e.kind for e in forest.entries(sid))


def test_the_recording_maps_every_item_once(forest: Forest) -> None:
    report = forest.import_chats("codex", RECORDING)
    assert report.ok and len(report.chats) == 1
    (chat,) = report.chats
    records = _records(RECORDING)
    items = Counter(r["payload"]["type"] for r in records if r["type"] == "response_item")
    kinds = _kinds(forest, chat.session_id)
    calls = items["function_call"] + items["custom_tool_call"]
    # reasoning, tool calls and assistant messages are assistant entries; the event_msg
    # copies of the same texts (user_message, agent_message, agent_reasoning) are not stored.
    assert kinds["assistant.message"] == items["reasoning"] + calls + 3
    assert kinds["tool.completed"] == calls
    assert kinds["user.message"] == 3 and kinds["system.message"] == 1  # environment_context
    entries = forest.entries(chat.session_id)
    called = {
        b["id"]
        for e in entries
        if e.kind == "assistant.message"
        for b in e.payload["content"]
        if b["type"] == "tool_call"
    }
    answered = {e.payload["call_id"] for e in entries if e.kind == "tool.completed"}
    assert called == answered and len(called) == calls
    texts = [b["text"] for e in entries if e.kind == "user.message" for b in e.payload["content"]]
    assert texts[0].startswith("Build a simple Pomodoro timer")
    session = forest.session(chat.session_id)
    assert (
        session.harness == "codex" and session.origin_cwd == "/Users/yoavfarhi/dev/pomodoro/codex"
    )
    assert session.source_id == records[0]["payload"]["id"]
    # Each entry keeps its line's time (UTC); token counts are hidden, never turns.
    times = {r["timestamp"].replace("Z", "") for r in records}
    assert all(e.created_at.rstrip("Z")[:23] in {t[:23] for t in times} for e in entries)
    tokens = [
        e
        for e in entries
        if e.kind == "provider.notification"
        and e.payload["event"].get("payload", {}).get("type") == "token_count"
    ]
    assert tokens and all(str(e.context_visibility) == "hidden" for e in tokens)
    path = [e.kind for e in forest.active_path(chat.session_id)]
    assert "provider.notification" not in path  # the hidden chain never forks the talk
    again = forest.import_chats("codex", RECORDING)
    assert again.entries == 0 and again.unchanged == len(entries)


@pytest.mark.parametrize("name", ["small.jsonl", "large.jsonl", "schema_drift.jsonl"])
def test_the_fixtures_import_keeping_what_is_unknown(forest: Forest, name: str) -> None:
    report = forest.import_chats("codex", FIXTURES / name)
    assert report.ok, [str(f) for f in report.failed]
    (chat,) = report.chats
    kinds = _kinds(forest, chat.session_id)
    records = _records(FIXTURES / name)
    if name == "schema_drift.jsonl":
        # The older flat form: a call and its result paired by name, the texts as turns,
        # and the newer world_state kept hidden.
        assert kinds == Counter(
            {
                "user.message": 1,
                "assistant.message": 2,
                "tool.completed": 1,
                "provider.notification": 1,
            }
        )
        (done,) = [e for e in forest.entries(chat.session_id) if e.kind == "tool.completed"]
        assert done.payload["output"] == "hola"
        return
    if name == "small.jsonl":
        assert kinds["compaction"] == sum(r["type"] == "compacted" for r in records)
        assert kinds["checkpoint"] == 1  # the ghost_snapshot (a git snapshot for /undo)
        # session_meta's cwd and git, as the file's first session_meta states them
        info = forest.session(chat.session_id)
        assert (info.origin_cwd, info.git_branch) == ("/tmp/repo", "main")
        assert info.git_commit == "0" * 40
        assert info.git_repository == "https://example.invalid/repo.git"
    unknown = sum(
        1 for r in records if r["type"] not in ("response_item", "compacted", "event_msg")
    )
    assert kinds["provider.notification"] >= unknown


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _line(kind: str, payload: dict[str, Any], second: int) -> dict[str, Any]:
    return {"timestamp": f"2026-03-01T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def _msg(role: str, words: str, second: int) -> dict[str, Any]:
    part = "output_text" if role == "assistant" else "input_text"
    content = [{"type": part, "text": words}]
    return _line("response_item", {"type": "message", "role": role, "content": content}, second)


def _meta(thread: str, **extra: Any) -> dict[str, Any]:
    payload = {
        "id": thread,
        "cwd": "/work/repo",
        "originator": "codex_cli_rs",
        "cli_version": "0.171.0",
        "source": "cli",
        "git": {"commit_hash": "abc123", "branch": "main"},
    } | extra
    return _line("session_meta", payload, 0)


def test_a_rollback_is_a_branch_from_before_the_dropped_turns(
    forest: Forest, tmp_path: Path
) -> None:
    path = _write(
        tmp_path / "rollout-2026-03-01T10-00-00-t1.jsonl",
        [
            _meta("t1"),
            _msg("user", "first question", 1),
            _msg("assistant", "first answer", 2),
            _msg("user", "second question", 3),
            _msg("assistant", "second answer", 4),
            _line("event_msg", {"type": "thread_rolled_back", "num_turns": 1}, 5),
            _msg("user", "second question, asked better", 6),
            _msg("assistant", "better", 7),
        ],
    )
    report = forest.import_chats("codex", path)
    assert report.ok and report.branches == 1
    sid = report.chats[0].session_id
    by_text = {
        e.payload["content"][0].get("text"): e
        for e in forest.entries(sid)
        if e.kind in ("user.message", "assistant.message")
    }
    first_answer = by_text["first answer"].id
    assert by_text["second question"].parent_id == first_answer
    assert by_text["second question, asked better"].parent_id == first_answer
    path_texts = [
        e.payload["content"][0]["text"]
        for e in forest.active_path(sid)
        if e.kind in ("user.message", "assistant.message")
    ]
    assert path_texts == [
        "first question",
        "first answer",
        "second question, asked better",
        "better",
    ]
    info = forest.session(sid)
    assert info.origin_cwd == "/work/repo"


def test_a_fork_branches_off_its_parent_chat(forest: Forest, tmp_path: Path) -> None:
    shared = [_msg("user", "plan it", 1), _msg("assistant", "the plan", 2)]
    parent = _write(
        tmp_path / "s" / "rollout-2026-03-01T10-00-00-p.jsonl",
        [_meta("p"), *shared, _msg("user", "go on", 3), _msg("assistant", "went on", 4)],
    )
    fork = _write(
        tmp_path / "s" / "rollout-2026-03-01T11-00-00-f.jsonl",
        [
            _meta("f", forked_from_id="p"),
            *shared,
            _msg("user", "try another way", 5),
            _msg("assistant", "another way", 6),
        ],
    )
    report = forest.import_chats("codex", tmp_path / "s")
    assert report.ok, [str(f) for f in report.failed]
    sid = Ids("codex", "p").session
    assert {c.session_id for c in report.chats} == {sid}  # one chat, the fork a branch of it
    entries = forest.entries(sid)
    texts = Counter(
        e.payload["content"][0].get("text") for e in entries if e.kind.endswith("message")
    )
    assert texts["plan it"] == 1 and texts["the plan"] == 1  # the shared prefix once
    plan = next(e for e in entries if e.payload.get("content", [{}])[0].get("text") == "the plan")
    other = next(
        e for e in entries if e.payload.get("content", [{}])[0].get("text") == "try another way"
    )
    assert other.parent_id == plan.id
    info = forest.session(sid)
    assert info.source_path == str(parent)
    # The fork's branch keeps the parent chat's provenance (the fork states its own git)
    assert (info.git_branch, info.git_commit, info.origin_cwd) == ("main", "abc123", "/work/repo")
    assert forest.import_chats("codex", fork).entries == 0
    assert forest.session(sid).git_branch == "main"


def test_a_rollout_outside_git_has_no_git_provenance(forest: Forest, tmp_path: Path) -> None:
    meta = _meta("n")
    meta["payload"].pop("git")
    path = _write(tmp_path / "rollout-2026-03-01T10-00-00-n.jsonl", [meta, _msg("user", "hi", 1)])
    assert forest.import_chats("codex", path).ok
    info = forest.session(Ids("codex", "n").session)
    assert (info.git_branch, info.git_commit, info.git_repository) == (None, None, None)
    assert info.origin_cwd == "/work/repo"


def test_a_subagent_thread_is_a_hidden_worker_of_its_parent(forest: Forest, tmp_path: Path) -> None:
    root = tmp_path / "s"
    _write(root / "rollout-2026-03-01T10-00-00-p.jsonl", [_meta("p"), _msg("user", "delegate", 1)])
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "p", "depth": 1}}}
    _write(
        root / "rollout-2026-03-01T10-00-05-w.jsonl",
        [_meta("w", source=spawn), _msg("user", "sub task", 2), _msg("assistant", "done", 3)],
    )
    report = forest.import_chats("codex", root)
    assert report.ok
    worker = Ids("codex", "w").session
    assert forest.session(worker).visibility == "hidden"
    agent = forest.agent_for_session(worker)
    assert agent is not None and agent.role == "worker"
    parent_agent = forest.agent_for_session(Ids("codex", "p").session)
    assert parent_agent is not None and parent_agent.role == "orchestrator"


def test_a_growing_rollout_followed_in_pieces_equals_one_import(tmp_path: Path) -> None:
    target = tmp_path / "rollout-x.jsonl"
    size = RECORDING.stat().st_size
    with Forest.open(tmp_path / "a.db") as pieces:
        grow(pieces, "codex", RECORDING, target, [size * k // 7 + 11 for k in range(1, 7)])
        grown = contents(pieces)
    with Forest.open(tmp_path / "b.db") as whole:
        whole.import_chats("codex", target)
        assert contents(whole) == grown


@pytest.mark.slow
def test_a_real_codex_run_imports_every_turn_tool_pair_and_time(
    real_cli: Any, tmp_path: Path
) -> None:
    cli = real_cli("codex")
    remote = "https://example.com/acme/widgets.git"
    commit = git_repo(cli.cwd, "feature/provenance", remote)
    cli.script(Reply(text="hello from the stand-in"))
    cli.run("say hello")
    cli.script(
        Reply(text="", tools=[cli.shell("expr 40 + 2")]),
        Reply(text="it printed 42"),
    )
    cli.run("compute it", resume=True)
    (rollout,) = cli.transcripts()
    with Forest.open(tmp_path / "f.db") as forest:
        report = forest.import_chats("codex", cli.home / ".codex" / "sessions")
        assert report.ok, [str(f) for f in report.failed]
        (chat,) = report.chats
        talk = [
            e
            for e in forest.active_path(chat.session_id)
            if e.kind in ("user.message", "assistant.message", "tool.completed")
        ]
        said = [
            (
                e.kind,
                e.payload.get("content", [{}])[0].get("text")
                if e.kind != "tool.completed"
                else e.payload["output"],
            )
            for e in talk
        ]
        assert said[0] == ("user.message", "say hello")
        assert said[1] == ("assistant.message", "hello from the stand-in")
        assert said[2] == ("user.message", "compute it")  # the resumed turn, same chat
        call = talk[3].payload["content"][0]
        assert call["type"] == "tool_call" and call["name"] == "exec_command"
        assert call["input"]["cmd"] == "expr 40 + 2"
        assert talk[4].kind == "tool.completed" and talk[4].payload["call_id"] == call["id"]
        assert "42" in talk[4].payload["output"]  # Codex ran it and recorded the output
        assert said[-1] == ("assistant.message", "it printed 42")
        stamps = [json.loads(line)["timestamp"] for line in rollout.read_text().splitlines()]
        assert all(e.created_at.endswith("Z") for e in talk)
        assert {e.created_at[:19] for e in talk} <= {t[:19] for t in stamps}
        info = forest.session(chat.session_id)
        assert info.origin_cwd == str(cli.cwd) and info.harness == "codex"
    # The git state Codex recorded in session_meta, as `forest sessions --json` shows it
    listed = CliRunner().invoke(forest_cli, ["--db", str(tmp_path / "f.db"), "sessions", "--json"])
    assert listed.exit_code == 0, listed.output
    (shown,) = json.loads(listed.output)
    assert shown["origin_cwd"] == str(cli.cwd)
    assert (shown["git_branch"], shown["git_commit"]) == ("feature/provenance", commit)
    assert shown["git_repository"] == remote


def _rollout(path: Path, records: list[dict[str, Any]], first: int = 0) -> list[int]:
    """Write `records` as Codex 0.171 does (each with its ordinal, from `first`); returns
    the byte offset where each line ends."""
    ends, size, lines = [], 0, []
    for ordinal, record in enumerate(records, first):
        line = json.dumps({"timestamp": record["timestamp"], "ordinal": ordinal} | record) + "\n"
        size += len(line.encode())
        lines.append(line)
        ends.append(size)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines))
    return ends


def _turn(n: int, words: str, second: int) -> list[dict[str, Any]]:
    """One 0.171 turn: the events around it, and its messages (with ids, as 0.171 gives)."""
    done = {"type": "task_complete", "turn_id": f"turn-{n}"}
    return [
        _line("event_msg", {"type": "task_started", "turn_id": f"turn-{n}"}, second),
        _msg("user", words, second) | {"id": f"u{n}"},
        _msg("assistant", f"answer to {words}", second + 1) | {"id": f"a{n}"},
        _line("event_msg", done, second + 1),
    ]


def _segment_meta(thread: str, base: str | None, ordinal: int, offset: int) -> dict[str, Any]:
    meta = _meta(thread)
    if base is not None:
        meta["payload"]["history_base"] = {
            "thread_id": base,
            "end_ordinal_exclusive": ordinal,
            "end_byte_offset": offset,
        }
    return meta


def _said(forest: Forest, sid: str) -> dict[str, Any]:
    return {
        e.payload["content"][0]["text"]: e
        for e in forest.entries(sid)
        if e.kind in ("user.message", "assistant.message")
    }


def test_a_tui_rewind_segment_branches_from_the_kept_history(
    forest: Forest, tmp_path: Path
) -> None:
    """Codex 0.171's TUI rewind, in the shapes it writes (recorded from the real TUI, see
    the real-CLI test below): the thread's file stays; each rewind writes
    `rollout-<ts>-<thread>_<segment>.jsonl` with the same thread id and a `history_base`
    naming the file (by the id its name ends with) and where its kept history ends."""
    day = tmp_path / "sessions" / "2026" / "03" / "01"
    thread = "t-0171"
    original = day / f"rollout-2026-03-01T10-00-00-{thread}.jsonl"
    head = [_meta(thread)]
    ends = _rollout(original, [*head, *_turn(1, "q1", 1), *_turn(2, "q2", 3), *_turn(3, "q3", 5)])
    # rewind 1: back to q3 (the kept history ends before q3's turn: 1 + 4 + 4 records)
    seg1 = day / f"rollout-2026-03-01T10-01-00-{thread}_s1.jsonl"
    kept = 1 + 4 + 4
    seg1_ends = _rollout(
        seg1,
        [_segment_meta(thread, thread, kept, ends[kept - 1]), *_turn(4, "q3b", 10),
         *_turn(5, "q4b", 12)],
        first=kept,
    )  # fmt: skip
    # rewind 2, in the segment: back to q4b (kept: segment 1 up to q4b's turn)
    kept2 = kept + 1 + 4
    seg2 = day / f"rollout-2026-03-01T10-02-00-{thread}_s2.jsonl"
    _rollout(
        seg2,
        [_segment_meta(thread, "s1", kept2, seg1_ends[kept2 - kept - 1]), *_turn(6, "q4c", 20)],
        first=kept2,
    )
    # rewind 3, from segment 2 to before the segment began: back to q2 in the original
    seg3 = day.parent / "02" / f"rollout-2026-03-02T09-00-00-{thread}_s3.jsonl"
    _rollout(seg3, [_segment_meta(thread, thread, 5, ends[4]), *_turn(7, "q2d", 30)], first=5)

    report = forest.import_chats("codex", tmp_path / "sessions")
    assert report.ok, [str(f) for f in report.failed]
    sid = Ids("codex", thread).session
    assert {c.session_id for c in report.chats} == {sid}  # every segment is the one chat
    said = _said(forest, sid)
    texts = Counter(
        e.payload["content"][0]["text"]
        for e in forest.entries(sid)
        if e.kind in ("user.message", "assistant.message")
    )
    assert set(texts.values()) == {1}  # the kept history once: no repeated prefix
    parent = {words: said[words].parent_id for words in said}
    assert parent["q3"] == parent["q3b"] == said["answer to q2"].id
    assert parent["q4b"] == parent["q4c"] == said["answer to q3b"].id
    assert parent["q2"] == parent["q2d"] == said["answer to q1"].id
    path = [
        e.payload["content"][0]["text"]
        for e in forest.active_path(sid)
        if e.kind in ("user.message", "assistant.message")
    ]
    assert path == ["q1", "answer to q1", "q2d", "answer to q2d"]  # the newest segment
    info = forest.session(sid)
    assert info.source_path == str(original) and info.title == "q1"
    again = forest.import_chats("codex", tmp_path / "sessions")
    assert again.ok and again.entries == 0


def test_a_rewind_to_the_first_prompt_and_a_lost_base(forest: Forest, tmp_path: Path) -> None:
    """A rewind to the first prompt writes a segment with no history_base (a fresh start
    of the same thread): a new root in the chat. A segment whose base file is gone says
    so and imports its own turns."""
    day = tmp_path / "sessions" / "2026" / "03" / "01"
    original = day / "rollout-2026-03-01T10-00-00-t.jsonl"
    _rollout(original, [_meta("t"), *_turn(1, "q1", 1)])
    _rollout(day / "rollout-2026-03-01T10-01-00-t_s1.jsonl", [_meta("t"), *_turn(2, "q1b", 5)])
    lost = day / "rollout-2026-03-01T10-02-00-u_s9.jsonl"
    _rollout(lost, [_segment_meta("u", "gone", 9, 999), *_turn(3, "q9", 9)], first=9)
    report = forest.import_chats("codex", tmp_path / "sessions")
    assert report.ok, [str(f) for f in report.failed]
    sid = Ids("codex", "t").session
    said = _said(forest, sid)
    assert said["q1"].parent_id is None and said["q1b"].parent_id is None
    assert forest.session(sid).title == "q1"
    heads = [e.payload["content"][0]["text"] for e in forest.active_path(sid)]
    assert heads[-1] == "answer to q1b"
    assert any(str(lost) in n and "was not found" in n for n in report.notes)
    assert _said(forest, Ids("codex", "u").session)["q9"].parent_id is None


@pytest.mark.slow
def test_a_real_codex_tui_rewind_is_a_branch(real_cli: Any, tmp_path: Path) -> None:
    """The real Codex TUI in a pseudo-terminal: three turns, Esc Esc Enter (back to the
    last prompt), a new turn, then a second rewind inside the new segment; each rewind
    is a branch of the one chat from the entry before the rewound prompt."""
    cli = real_cli("codex")
    cli.script(*[Reply(text=f"answer {n}") for n in range(1, 7)])
    tui = cli.tui()
    try:
        for words in ("question one", "question two", "question three"):
            tui.ask(words)
        tui.rewind()
        tui.ask("question three, again")
        tui.ask("question four")
        tui.rewind()
        tui.ask("question four, again")
    finally:
        tui.close()
    files = cli.transcripts()
    assert len(files) == 3  # the thread's file and one segment per rewind
    metas = [json.loads(f.read_text().splitlines()[0])["payload"] for f in files]
    assert len({m["id"] for m in metas}) == 1 and "history_base" in metas[2]
    with Forest.open(tmp_path / "f.db") as forest:
        report = forest.import_chats("codex", cli.home / ".codex" / "sessions")
        assert report.ok, [str(f) for f in report.failed]
        (sid,) = {c.session_id for c in report.chats}
        said = _said(forest, sid)
        entries = forest.entries(sid)
        users = Counter(
            e.payload["content"][0]["text"] for e in entries if e.kind == "user.message"
        )
        assert set(users.values()) == {1}  # the shared prefix once
        assert said["question three"].parent_id == said["answer 2"].id
        assert said["question three, again"].parent_id == said["answer 2"].id
        assert said["question four"].parent_id == said["answer 4"].id
        assert said["question four, again"].parent_id == said["answer 4"].id
        path = [
            e.payload["content"][0]["text"]
            for e in forest.active_path(sid)
            if e.kind in ("user.message", "assistant.message")
        ]
        assert path == ["question one", "answer 1", "question two", "answer 2",
                        "question three, again", "answer 4", "question four, again",
                        "answer 6"]  # fmt: skip
        assert forest.import_chats("codex", cli.home / ".codex" / "sessions").entries == 0


def test_a_fork_with_a_history_base_branches_at_the_fork_point(
    forest: Forest, tmp_path: Path
) -> None:
    """Codex 0.171's fork copies nothing: its session_meta has `forked_from_id` and a
    `history_base` naming the parent's file and where the fork was taken."""
    day = tmp_path / "sessions" / "2026" / "03" / "01"
    ends = _rollout(day / "rollout-2026-03-01T10-00-00-p.jsonl",
                    [_meta("p"), *_turn(1, "q1", 1), *_turn(2, "q2", 3)])  # fmt: skip
    fork = _segment_meta("f", "p", 5, ends[4])
    fork["payload"]["forked_from_id"] = "p"
    _rollout(day / "rollout-2026-03-01T11-00-00-f.jsonl", [fork, *_turn(3, "q2f", 20)], first=5)
    report = forest.import_chats("codex", tmp_path / "sessions")
    assert report.ok, [str(f) for f in report.failed]
    sid = Ids("codex", "p").session
    assert {c.session_id for c in report.chats} == {sid}
    said = _said(forest, sid)
    assert said["q2"].parent_id == said["q2f"].parent_id == said["answer to q1"].id
    hidden = [e for e in forest.entries(sid) if e.kind == "provider.notification"]
    events = Counter(_dump(e.payload["event"]) for e in hidden)
    assert set(events.values()) == {1}  # the parent's records kept once, not again
    assert forest.session(sid).title == "q1"


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@pytest.mark.slow
def test_a_real_codex_fork_is_a_branch_of_its_parent_chat(real_cli: Any, tmp_path: Path) -> None:
    cli = real_cli("codex")
    cli.script(Reply(text="answer 1"), Reply(text="answer 2"), Reply(text="answer forked"))
    cli.run("question one")
    cli.run("question two", resume=True)
    (first,) = cli.transcripts()
    thread = json.loads(first.read_text().splitlines()[0])["payload"]["id"]
    tui = cli.tui("fork", thread)
    try:
        tui.ask("question forked")
    finally:
        tui.close()
    (fork,) = [p for p in cli.transcripts() if p != first]
    meta = json.loads(fork.read_text().splitlines()[0])["payload"]
    assert meta["forked_from_id"] == thread and meta["history_base"]["thread_id"] == thread
    with Forest.open(tmp_path / "f.db") as forest:
        report = forest.import_chats("codex", cli.home / ".codex" / "sessions")
        assert report.ok, [str(f) for f in report.failed]
        (sid,) = {c.session_id for c in report.chats}
        said = _said(forest, sid)
        path = forest.path_to(sid, said["question forked"].id)
        texts = [e.payload["content"][0]["text"] for e in path if e.kind == "user.message"]
        assert texts[-3:] == ["question one", "question two", "question forked"]
        users = Counter(
            e.payload["content"][0]["text"] for e in forest.entries(sid) if e.kind == "user.message"
        )
        assert set(users.values()) == {1}
        assert forest.head(sid) == said["answer forked"].id


def test_sources_count_a_rewound_thread_once(
    forest: Forest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`forest sources`: a thread's rewind segments are that thread's one chat, and once
    imported (into the thread's chat) they are not reported as new."""
    home = tmp_path / "codex"
    day = home / "sessions" / "2026" / "03" / "01"
    thread = "01a23786-095e-7c61-809b-285dd62a7f81"
    ends = _rollout(day / f"rollout-2026-03-01T10-00-00-{thread}.jsonl",
                    [_meta(thread), *_turn(1, "q1", 1), *_turn(2, "q2", 3)])  # fmt: skip
    segment = f"rollout-2026-03-01T10-01-00-{thread}_01a23786-2872-72b1-aa0f-8078865fe8c0.jsonl"
    _rollout(day / segment, [_segment_meta(thread, thread, 5, ends[4]), *_turn(3, "q2b", 9)], 5)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CODEX_HOME", str(home))
    (before,) = [loc for loc in forest.sources() if loc.harness.format == "codex"]
    assert (len(before.files), before.chats, before.new) == (2, 1, 2)
    assert forest.import_chats("codex", home / "sessions").ok
    (after,) = [loc for loc in forest.sources() if loc.harness.format == "codex"]
    assert (after.chats, after.new, after.imported) == (1, 0, 2)
