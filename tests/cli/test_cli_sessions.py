"""`forest new` and `forest sessions`: ids, listings and their JSON shapes.

Also `--help`, which must list every command the group registers.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from sessionforest import Forest as Store
from sessionforest import InvalidArgument
from sessionforest.cli.main import cli
from sessionforest.cli.sessions import plain_table

if TYPE_CHECKING:
    from conftest import ForestCli


def test_new_prints_an_id_that_sessions_lists(forest: ForestCli) -> None:
    sid = forest.ok("new", "--title", "Fix the lock", "--harness", "claude-code").strip()
    assert len(sid) == 26
    lines = forest.ok("sessions").splitlines()
    assert lines[0].split() == ["ID", "STATUS", "ENTRIES", "UPDATED", "HARNESS", "TITLE"]
    assert lines[1].startswith(sid)
    assert lines[1].endswith("Fix the lock")
    assert "claude-code" in lines[1]


def test_new_json_and_sessions_json_fields(forest: ForestCli, tmp_path: Path) -> None:
    created = forest.json("new", "--title", "t", "--harness", "h", "--cwd", str(tmp_path))
    [info] = forest.json("sessions")
    assert created == info  # `new --json` answers with the session as `sessions` lists it
    assert {"id", "title", "harness", "status", "cwd", "head", "entry_count"} <= info.keys()
    assert info["id"] == created["id"]
    assert (info["title"], info["harness"], info["status"]) == ("t", "h", "active")
    assert info["cwd"] == str(tmp_path.resolve())
    assert info["entry_count"] == 0


def test_sessions_on_an_empty_store_prints_a_hint_to_stderr(forest: ForestCli) -> None:
    forest.create_store()
    result = forest.run("sessions")
    assert result.exit_code == 0
    assert result.stdout == ""
    assert "forest demo" in result.stderr
    assert forest.json("sessions") == []


def test_hidden_sessions_are_listed_only_with_all(forest: ForestCli) -> None:
    shown = forest.ok("new").strip()
    with Store.open(forest.db) as store:
        hidden = store.create_session("worker", visibility="hidden")
    assert [s["id"] for s in forest.json("sessions")] == [shown]
    assert {s["id"] for s in forest.json("sessions", "--all")} == {shown, hidden}


def test_rename_gives_a_chat_the_users_title_by_a_prefix_of_its_id(forest: ForestCli) -> None:
    sid = forest.ok("new", "--title", "Fix the lock").strip()
    assert forest.ok("rename", sid[:10], "WAL, not the lock") == f"{sid} WAL, not the lock\n"
    assert forest.ok("sessions").splitlines()[1].endswith("WAL, not the lock")
    info = forest.json("rename", sid, "Once more")
    assert (info["id"], info["title"]) == (sid, "Once more")


def test_rename_refuses_an_empty_or_long_title_and_an_unknown_chat(forest: ForestCli) -> None:
    sid = forest.ok("new", "--title", "kept").strip()
    assert "invalid title: empty" in forest.fail(1, "rename", sid, "   ")
    too_long = forest.fail(1, "rename", sid, "x" * 201)
    assert "201 characters; a title holds at most 200" in too_long
    assert "unknown session: 01nosuch" in forest.fail(3, "rename", "01nosuch", "t")
    assert forest.json("sessions")[0]["title"] == "kept"


def test_plain_table_aligns_columns_and_keeps_titles_whole(tmp_path: Path) -> None:
    with Store.open(tmp_path / "t.db") as store:
        store.create_session("a short one", harness="x")
        store.create_session("a much longer title " * 5, harness="longer-harness")
        lines = plain_table(store.sessions())
    title_column = lines[0].index("TITLE")
    # Both were created in the same millisecond, so their order is not pinned.
    assert {line[title_column:] for line in lines[1:]} == {
        "a short one",
        ("a much longer title " * 5).rstrip(),
    }


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in (
        "new",
        "sessions",
        "rename",
        "append",
        "seek",
        "checkpoint",
        "seek-checkpoint",
        "log",
        "tree",
        "tips",
        "export",
        "import",
        "check",
        "demo",
    ):
        assert f"  {name} " in result.stdout, name
    assert result.stdout.startswith("Usage: forest ")


def _ticking(start: datetime) -> Callable[[], datetime]:
    moments = (start + timedelta(minutes=n) for n in itertools.count())
    return lambda: next(moments)


def test_sessions_lists_the_latest_activity_first(forest: ForestCli) -> None:
    with Store.open(forest.db, clock=_ticking(datetime(2025, 3, 1, tzinfo=UTC))) as store:
        first = store.create_session("first")  # 00:00, never touched again
        busy = store.create_session("busy")  # 00:01
        last = store.create_session("last")  # 00:02
        store.append(busy, "user.message", {"content": [{"type": "text", "text": "hi"}]})  # 00:03
        # Library callers keep creation order unless they ask for another.
        assert [s.id for s in store.sessions()] == [first, busy, last]
        assert [s.id for s in store.sessions(order="updated")] == [busy, last, first]
        with pytest.raises(InvalidArgument):
            store.sessions(order="title")
    listed = forest.json("sessions")
    assert [s["id"] for s in listed] == [busy, last, first]
    assert [s["updated_at"][11:16] for s in listed] == ["00:03", "00:02", "00:00"]
    rows = forest.ok("sessions").splitlines()[1:]
    assert [row.split()[0] for row in rows] == [busy, last, first]


def test_sessions_help_says_how_it_sorts() -> None:
    text = " ".join(CliRunner().invoke(cli, ["sessions", "--help"]).stdout.split())
    assert "most recently active first" in text
    assert "web UI's sidebar" in text


def test_new_and_status_changes_answer_json_with_the_session(forest: ForestCli) -> None:
    created = forest.json("new", "--title", "t")
    assert (created["title"], created["status"], created["head"]) == ("t", "active", None)
    ended = forest.json("end", created["id"])
    assert ended == created | {"status": "ended"}
    assert forest.json("archive", created["id"])["status"] == "archived"
    assert forest.json("unarchive", created["id"])["status"] == "active"
    # Only an archived chat comes back: an ended one stays ended.
    forest.json("end", created["id"])
    assert forest.json("unarchive", created["id"])["status"] == "ended"
