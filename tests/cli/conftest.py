"""Fixtures for the `forest` CLI tests: an isolated home and a CliRunner bound to one store.

Every test gets HOME/XDG_DATA_HOME inside tmp_path and no FOREST_DB, so nothing
here can reach a real user store.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from sessionforest import Forest
from sessionforest.cli.main import cli


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("FOREST_DB", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "sessionforest"


class ForestCli:
    """Runs `forest --db <db> ...` in-process and checks the outcome."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.runner = CliRunner()

    def create_store(self) -> None:
        """An empty store at `db` (read commands never create one)."""
        Forest.open(self.db).close()

    def run(self, *args: str, input: str | None = None, db: bool = True) -> Result:
        argv: Sequence[str] = ["--db", str(self.db), *args] if db else list(args)
        return self.runner.invoke(cli, argv, input=input)

    def ok(self, *args: str, input: str | None = None) -> str:
        result = self.run(*args, input=input)
        assert result.exit_code == 0, (result.stderr, result.exception)
        return result.stdout

    def json(self, *args: str) -> Any:
        return orjson.loads(self.ok(*args, "--json"))

    def fail(self, code: int, *args: str, input: str | None = None) -> str:
        """Assert exit `code` with exactly one `error:` line on stderr; return that line."""
        result = self.run(*args, input=input)
        assert result.exit_code == code, (result.stdout, result.stderr, result.exception)
        lines = result.stderr.splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("error: ")
        assert "Traceback" not in result.output
        return lines[0]


@pytest.fixture
def forest(tmp_path: Path) -> ForestCli:
    return ForestCli(tmp_path / "forest.db")


@pytest.fixture
def fresh(tmp_path: Path) -> ForestCli:
    """A second, empty store: the target of imports."""
    return ForestCli(tmp_path / "fresh.db")


@pytest.fixture
def session(forest: ForestCli) -> str:
    return forest.ok("new", "--title", "test").strip()


@pytest.fixture
def branched(forest: ForestCli, session: str) -> dict[str, str]:
    """hello -> hi -> [start] -> first; head rewound to [start] -> second (the head)."""
    ids = {"session": session}
    ids["hello"] = forest.ok("append", session, "-k", "user.message", "-t", "hello").strip()
    ids["hi"] = forest.ok("append", session, "-k", "assistant.message", "-t", "hi").strip()
    ids["start"] = forest.ok("checkpoint", session, "start", "--summary", "greeted").strip()
    ids["first"] = forest.ok("append", session, "-k", "user.message", "-t", "first").strip()
    assert forest.ok("seek-checkpoint", session, "start").strip() == ids["start"]
    ids["second"] = forest.ok("append", session, "-k", "user.message", "-t", "second").strip()
    return ids
