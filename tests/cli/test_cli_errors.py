"""The error boundary: one `error:` line on stderr and an exit code from one table.

Covers store errors, click usage errors and a store file that cannot be opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
import pytest

from sessionforest.cli.main import exit_code_for
from sessionforest.errors import (
    DeltaRefused,
    HeadMoved,
    InvalidPayload,
    UnknownCheckpoint,
    UnknownEntry,
    UnknownSession,
)

if TYPE_CHECKING:
    from conftest import ForestCli

MISSING = "01nosuchsession0000000000"


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (HeadMoved("s", "a", "b"), 4),
        (UnknownSession("s"), 3),
        (UnknownEntry("e"), 3),
        (UnknownCheckpoint("l"), 3),
        (InvalidPayload("user.message", "content", "is required"), 1),
        (DeltaRefused("x.delta"), 1),
        (click.UsageError("bad"), 2),
        (click.BadParameter("bad"), 2),
        (click.ClickException("bad"), 1),
    ],
)
def test_exit_code_table(exc: Exception, code: int) -> None:
    assert exit_code_for(exc) == code


@pytest.mark.parametrize(
    "args",
    [
        ["log", MISSING],
        ["tree", MISSING],
        ["tree", MISSING, "--json"],
        ["tips", MISSING],
        ["export", MISSING],
        ["append", MISSING, "-k", "user.message", "-t", "x"],
        ["checkpoint", MISSING, "label"],
        ["seek-checkpoint", MISSING, "label"],
        ["seek", MISSING, "1"],
    ],
)
def test_unknown_session_exits_3_with_one_line(forest: ForestCli, args: list[str]) -> None:
    forest.create_store()
    assert forest.fail(3, *args) == f"error: unknown session: {MISSING}"


def test_unknown_entry_and_checkpoint_exit_3(forest: ForestCli, branched: dict[str, str]) -> None:
    sid = branched["session"]
    assert "nope" in forest.fail(3, "seek", sid, "nope")
    assert "99" in forest.fail(3, "seek", sid, "99")
    assert "99" in forest.fail(3, "append", sid, "-k", "user.message", "-t", "x", "--parent", "99")
    assert "missing-label" in forest.fail(3, "seek-checkpoint", sid, "missing-label")


def test_bad_payload_names_kind_and_field(forest: ForestCli, session: str) -> None:
    line = forest.fail(1, "append", session, "-k", "user.message", "-p", '{"content": "hi"}')
    assert "user.message" in line
    assert "'content'" in line
    line = forest.fail(1, "append", session, "-k", "tool.started", "-p", '{"call_id": "c"}')
    assert "tool.started" in line
    assert "'name'" in line
    assert forest.json("log", session) == []


def test_text_with_a_kind_that_needs_a_payload(forest: ForestCli, session: str) -> None:
    line = forest.fail(2, "append", session, "-k", "tool.completed", "-t", "output")
    assert "tool.completed" in line
    assert "--payload" in line


def test_malformed_payload_json_is_named(forest: ForestCli, session: str) -> None:
    line = forest.fail(2, "append", session, "-k", "user.message", "-p", '{"content": [')
    assert "--payload" in line
    assert "not valid JSON" in line


def test_a_non_object_payload_is_refused_by_the_store(forest: ForestCli, session: str) -> None:
    line = forest.fail(1, "append", session, "-k", "user.message", "-p", "[1, 2]")
    assert "must be a JSON object" in line


@pytest.mark.parametrize("content", [["-t", "hi"], ["-p", "{}"]])
def test_delta_kinds_are_refused(forest: ForestCli, session: str, content: list[str]) -> None:
    line = forest.fail(1, "append", session, "-k", "assistant.message.delta", *content)
    assert "'assistant.message.delta'" in line
    assert "delta" in line.split("'assistant.message.delta'")[1]


@pytest.mark.parametrize(("kind", "word"), [("user.prompt", "legacy"), ("no.such", "unknown")])
def test_legacy_and_unknown_kinds_are_refused(
    forest: ForestCli, session: str, kind: str, word: str
) -> None:
    assert word in forest.fail(1, "append", session, "-k", kind, "-p", "{}")


@pytest.mark.parametrize("content", [[], ["-t", "a", "-p", "{}"]])
def test_exactly_one_of_text_and_payload(
    forest: ForestCli, session: str, content: list[str]
) -> None:
    line = forest.fail(2, "append", session, "-k", "user.message", *content)
    assert "exactly one of --text or --payload" in line


def test_usage_errors_are_one_line_too(forest: ForestCli) -> None:
    assert "--bogus" in forest.fail(2, "--bogus", "sessions")
    assert "'SESSION'" in forest.fail(2, "log")
    assert "--visibility" in forest.fail(
        2, "append", "s", "-k", "user.message", "-t", "x", "--visibility", "sometimes"
    )


def test_a_file_that_is_not_a_database(forest: ForestCli) -> None:
    forest.db.write_bytes(b"this is not sqlite, just some text " * 100)
    line = forest.fail(5, "sessions")
    assert str(forest.db) in line


def test_a_store_that_cannot_be_created(forest: ForestCli, tmp_path: Path) -> None:
    (tmp_path / "plain-file").write_text("x")
    forest.db = tmp_path / "plain-file" / "forest.db"
    assert "cannot open" in forest.fail(5, "sessions")
