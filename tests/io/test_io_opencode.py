"""OpenCode: a real OpenCode database (opened read-only while a writer holds it), the older
storage/ trees, child sessions as workers, revert as a branch, and following the database."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness_cli import git_repo
from sessionforest import Forest
from sessionforest.io.common import Ids
from standin import Reply

DATA = Path(__file__).parents[2].parent / "shared" / "data"
FIXTURES = DATA / "format-fixtures" / "agent-sessions" / "opencode"


def _talk(forest: Forest, sid: str) -> list[tuple[str, Any]]:
    out = []
    for e in forest.active_path(sid):
        if e.kind == "tool.completed":
            out.append((e.kind, e.payload["output"]))
        elif e.kind in ("user.message", "assistant.message"):
            block = e.payload["content"][0]
            out.append((e.kind, block.get("text", block.get("thinking", block.get("name")))))
        elif e.kind == "compaction":
            out.append((e.kind, e.payload["summary"]))
    return out


def test_the_storage_trees(forest: Forest) -> None:
    report = forest.import_chats("opencode", FIXTURES / "storage_v2")
    assert report.ok and len(report.chats) == 2
    large = Ids("opencode", "s_stage0_large").session
    talk = _talk(forest, large)
    assert talk[0] == ("user.message", "Step 1")
    assert ("compaction", "(compacted automatically)") in talk
    assert ("assistant.message", "Investigating failing command.") in talk  # reasoning
    assert ("assistant.message", "bash") in talk and talk[
        talk.index(("assistant.message", "bash")) + 1
    ][0] == "tool.completed"
    info = forest.session(large)
    assert info.title == "OpenCode Large" and info.origin_cwd == "/tmp/large"
    assert info.origin_project == "proj_test"  # the session's projectID (no project file)
    assert info.harness == "opencode"
    hidden = Counter(
        e.payload["event"]["part"]["type"]
        for e in forest.entries(large)
        if e.kind == "provider.notification" and "part" in e.payload["event"]
    )
    assert hidden == {"file": 1, "patch": 1, "step-start": 1, "step-finish": 1}  # kept as they were
    legacy = forest.import_chats("opencode", FIXTURES / "storage_legacy")
    assert legacy.ok
    drift = Ids("opencode", "s_stage0_drift").session
    talk = _talk(forest, drift)
    assert talk[0] == ("user.message", "Open README")  # a user message without parts: its summary
    assert ("tool.completed", "# Title\n\nBody\n") in talk
    assert forest.import_chats("opencode", FIXTURES / "storage_v2").entries == 0


def _real_database(real_cli: Any) -> tuple[Any, Path]:
    cli = real_cli("opencode")
    git_repo(cli.cwd, "main")  # OpenCode names a git project by its worktree
    cli.script(Reply(text="hello from the stand-in"))
    cli.run("say hello")
    marker = cli.cwd / "out.txt"
    cli.script(
        Reply(text="running it", tools=[cli.shell(f"expr 40 + 2 > {marker}")]),
        Reply(text="it wrote 42"),
    )
    cli.run("compute it", resume=True)
    assert marker.read_text().strip() == "42"
    (database,) = cli.transcripts()
    return cli, database


@pytest.mark.slow
def test_a_real_opencode_database_read_only_while_a_writer_holds_it(
    real_cli: Any, tmp_path: Path
) -> None:
    cli, database = _real_database(real_cli)
    before = _dump(database)
    writer = sqlite3.connect(database)
    writer.execute("BEGIN IMMEDIATE")  # OpenCode in the middle of a write
    try:
        with Forest.open(tmp_path / "f.db") as forest:
            report = forest.import_chats("opencode", database.parent)  # the data folder
            assert report.ok, [str(f) for f in report.failed]
            (chat,) = report.chats
            talk = _talk(forest, chat.session_id)
            assert talk[0][0] == "user.message" and "say hello" in talk[0][1]
            assert talk[1] == ("assistant.message", "hello from the stand-in")
            assert "compute it" in talk[2][1]  # resumed (--continue): the same session
            assert talk[3] == ("assistant.message", "running it")
            assert talk[4] == ("assistant.message", "bash")
            assert talk[5] == ("tool.completed", "(no output)")  # as OpenCode recorded it
            assert talk[6] == ("assistant.message", "it wrote 42")
            call = next(
                e
                for e in forest.active_path(chat.session_id)
                if e.kind == "assistant.message" and e.payload["content"][0]["type"] == "tool_call"
            )
            assert "expr 40 + 2" in call.payload["content"][0]["input"]["command"]
            info = forest.session(chat.session_id)
            assert info.origin_cwd == str(cli.cwd) and info.harness == "opencode"
            assert info.origin_project == str(cli.cwd)  # the project's worktree
            assert all(e.created_at.endswith("Z") for e in forest.entries(chat.session_id))
    finally:
        writer.rollback()
        writer.close()
    assert _dump(database) == before  # never migrated, never written


def _say(
    db: sqlite3.Connection, session: str, mid: str, words: str, at: int = 9999999999999
) -> None:
    """A user message as OpenCode stores one: a message row and its text part."""
    db.execute(
        "INSERT INTO message (id, session_id, time_created, time_updated, data) "
        'VALUES (?, ?, ?, ?, \'{"role":"user"}\')',
        (mid, session, at, at),
    )
    part = '{"type":"text","text":"' + words + '"}'
    db.execute(
        "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
        "VALUES (?, ?, ?, 1, 1, ?)",
        (f"prt_{mid}", mid, session, part),
    )


def _dump(database: Path) -> list[str]:
    """Every schema statement and row of the database (read-only)."""
    conn = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def _copy(database: Path, into: Path) -> Path:
    into.mkdir()
    source = sqlite3.connect(database)
    target = sqlite3.connect(into / "opencode.db")
    source.backup(target)
    source.close()
    target.close()
    return into / "opencode.db"


@pytest.mark.slow
def test_revert_is_a_branch_and_child_sessions_are_workers(real_cli: Any, tmp_path: Path) -> None:
    _, database = _real_database(real_cli)
    copy = _copy(database, tmp_path / "oc")
    db = sqlite3.connect(copy)
    (sid,) = db.execute("SELECT id FROM session").fetchone()
    rows = db.execute(
        "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created", (sid,)
    )
    users = [mid for mid, data in rows if '"role":"user"' in data]
    db.execute(
        "UPDATE session SET revert = ? WHERE id = ?", (f'{{"messageID": "{users[1]}"}}', sid)
    )
    # A child session (as OpenCode's task tool makes): a copy of the row with parent_id set.
    columns = [r[1] for r in db.execute("PRAGMA table_info(session)")]
    row = dict(
        zip(
            columns,
            db.execute("SELECT * FROM session WHERE id = ?", (sid,)).fetchone(),
            strict=True,
        )
    )
    row |= {"id": "ses_child", "parent_id": sid, "revert": None, "title": "child task"}
    db.execute(
        f"INSERT INTO session ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
        list(row.values()),
    )
    _say(db, "ses_child", "msg_child", "sub task", 1)
    db.commit()
    with Forest.open(tmp_path / "f.db") as forest:
        report = forest.import_chats("opencode", copy)
        assert report.ok, [str(f) for f in report.failed]
        chat = Ids("opencode", sid).session
        assert [k for k, _ in _talk(forest, chat)] == [
            "user.message",
            "assistant.message",
        ]  # head before the reverted turn
        worker = Ids("opencode", "ses_child").session
        assert forest.session(worker).visibility == "hidden"
        agent = forest.agent_for_session(worker)
        assert agent is not None and agent.role == "worker"
        # OpenCode deletes the reverted messages when the user goes on: the new turn branches.
        (since,) = db.execute(
            "SELECT time_created FROM message WHERE id = ?", (users[1],)
        ).fetchone()
        gone = [
            r[0]
            for r in db.execute(
                "SELECT id FROM message WHERE session_id = ? AND time_created >= ?", (sid, since)
            )
        ]
        for mid in gone:
            db.execute("DELETE FROM part WHERE message_id = ?", (mid,))
            db.execute("DELETE FROM message WHERE id = ?", (mid,))
        db.execute(
            "UPDATE session SET revert = NULL, time_updated = time_updated + 1 WHERE id = ?", (sid,)
        )
        _say(db, sid, "msg_zz_new", "another way")
        db.commit()
        again = forest.import_chats("opencode", copy)
        assert again.ok and again.branches == 1
        talk = _talk(forest, chat)
        assert talk[-1] == ("user.message", "another way") and len(talk) == 3
        assert len(forest.entries(chat)) > len(forest.active_path(chat))  # the reverted turn kept
    db.close()


@pytest.mark.slow
def test_following_the_database_reads_only_changed_sessions(real_cli: Any, tmp_path: Path) -> None:
    _, database = _real_database(real_cli)
    copy = _copy(database, tmp_path / "oc")
    with Forest.open(tmp_path / "f.db") as forest:
        report, position = forest.import_source("opencode", copy)
        assert report.entries > 0
        again, same = forest.import_source("opencode", copy, position.to_json())
        assert again.chats == [] and same.state == position.state  # nothing changed: nothing read
        db = sqlite3.connect(copy)
        (sid,) = db.execute("SELECT id FROM session").fetchone()
        _say(db, sid, "msg_zz", "later")
        db.execute("UPDATE session SET time_updated = time_updated + 5 WHERE id = ?", (sid,))
        db.commit()
        db.close()
        third, _ = forest.import_source("opencode", copy, same)
        assert third.entries == 2 and len(third.chats) == 1  # the new part and its message
