"""Read commands never write, a typo never creates a store, and only stores are opened.

Every read command is run against a clean store (the folder must stay
byte-identical: no -wal/-shm left), another program's database (refused,
untouched) and a path that does not exist (nothing created).
"""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from sessionforest import Forest
from sessionforest.store.sqlite import migrations

if TYPE_CHECKING:
    from conftest import ForestCli

# A store as the version before this one left it: everything up to the
# migrations this version added (pending, in order, on such a store).
_FIRST_NEW = [m.name for m in migrations.MIGRATIONS].index("store_application_id")
BEFORE_THIS_VERSION = migrations.MIGRATIONS[:_FIRST_NEW]
NEW = [m.name for m in migrations.MIGRATIONS[_FIRST_NEW:]]

READS = [
    ["sessions"],
    ["log", "{sid}"],
    ["tree", "{sid}"],
    ["tips", "{sid}"],
    ["status", "{sid}"],
    ["export", "{sid}"],
    ["recall", "{sid}", "hello"],
    ["find", "hello"],
    ["check", "--no-quarantine"],
]
IDS = [" ".join(r) for r in READS]


def files(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


def args(command: list[str], sid: str) -> list[str]:
    return [part.format(sid=sid) for part in command]


@pytest.mark.parametrize("command", READS, ids=IDS)
def test_read_commands_leave_a_store_byte_identical(
    forest: ForestCli, branched: dict[str, str], command: list[str]
) -> None:
    before = files(forest.db.parent)
    forest.ok(*args(command, branched["session"]))
    assert files(forest.db.parent) == before


@pytest.mark.parametrize("command", READS, ids=IDS)
def test_read_commands_refuse_another_programs_database(
    forest: ForestCli, command: list[str]
) -> None:
    with closing(sqlite3.connect(forest.db)) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    before = files(forest.db.parent)
    line = forest.fail(5, *args(command, "s"))
    assert str(forest.db) in line and "not a sessionforest store" in line and "invoices" in line
    assert files(forest.db.parent) == before


@pytest.mark.parametrize("command", READS, ids=IDS)
def test_read_commands_on_a_missing_path_create_nothing(
    forest: ForestCli, tmp_path: Path, command: list[str]
) -> None:
    forest.db = tmp_path / "no" / "such" / "forest.db"
    line = forest.fail(5, *args(command, "s"))
    assert str(forest.db) in line and "nothing was created" in line
    assert list(tmp_path.iterdir()) == []


def test_write_commands_to_a_missing_store_create_nothing(
    forest: ForestCli, tmp_path: Path
) -> None:
    for command in (
        ["append", "s", "-k", "user.message", "-t", "x"],
        ["seek", "s", "1"],
        ["checkpoint", "s", "label"],
        ["end", "s"],
        ["check"],
        ["bind", "s", str(tmp_path)],
        ["migrate"],
    ):
        assert "nothing was created" in forest.fail(5, *command)
    assert list(tmp_path.iterdir()) == []


def test_a_typed_path_in_a_missing_directory_is_not_created(
    forest: ForestCli, tmp_path: Path
) -> None:
    forest.db = tmp_path / "tpyo" / "forest.db"
    assert "does not exist" in forest.fail(5, "new")
    assert list(tmp_path.iterdir()) == []


def test_the_default_store_is_created_on_first_write(isolated_home: Path) -> None:
    from click.testing import CliRunner

    from sessionforest.cli.main import cli

    runner = CliRunner()
    missing = runner.invoke(cli, ["sessions"])
    assert missing.exit_code == 5 and "nothing was created" in missing.stderr
    assert not isolated_home.exists()
    assert runner.invoke(cli, ["new"]).exit_code == 0
    assert (isolated_home / "forest.db").exists()


def test_migrate_upgrades_what_read_commands_refuse_to(
    forest: ForestCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(migrations, "MIGRATIONS", BEFORE_THIS_VERSION)
        Forest.open(forest.db).close()
    before = files(forest.db.parent)
    line = forest.fail(5, "sessions")
    assert ", ".join(NEW) in line
    assert f"forest --db {forest.db} migrate" in line
    assert files(forest.db.parent) == before
    assert forest.json("migrate") == {
        "path": str(forest.db),
        "applied": NEW,
    }
    assert forest.ok("migrate").strip() == f"{forest.db} is up to date"
    assert forest.json("sessions") == []
