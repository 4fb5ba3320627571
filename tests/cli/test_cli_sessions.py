"""`forest new` and `forest sessions`: ids, listings and their JSON shapes.

Also `--help`, which must list every command the group registers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from click.testing import CliRunner

from sessionforest import Forest as Store
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
    assert list(created) == ["id"]
    [info] = forest.json("sessions")
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
