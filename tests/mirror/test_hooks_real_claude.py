"""The real Claude Code CLI (the pinned test tool) with `forest hooks install claude-code`
in its temporary HOME, driven with `-p` against the stand-in model: every turn is in
the forest when the CLI exits, and a `--resume` turn lands in the same chat."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest
from standin import Reply

pytestmark = pytest.mark.slow

FOREST = [sys.executable, "-m", "sessionforest.cli.main"]


def forest_cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [*FOREST, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def texts(forest: Forest, session_id: str) -> list[tuple[str, str]]:
    """(kind, text) of each message on the chat's active path."""
    found = []
    for entry in forest.active_path(session_id):
        if entry.kind in ("user.message", "assistant.message"):
            blocks = entry.payload.get("content") or []
            text = " ".join(b.get("text", "") for b in blocks if isinstance(b, dict))
            found.append((entry.kind, text))
    return found


def test_every_turn_is_in_the_forest_when_the_cli_exits_and_a_resume_joins_it(
    real_cli: Any, tmp_path: Path
) -> None:
    cli = real_cli("claude")
    db = tmp_path / "forest.db"
    env = {**os.environ, **cli.env}
    env.pop("FOREST_DB", None)
    installed = json.loads(
        forest_cli(env, "--db", str(db), "hooks", "install", "claude-code", "--json")
    )
    assert installed["settings"] == str(cli.home / ".claude" / "settings.json")

    cli.script(Reply(text="The lighthouse keeper's answer is forty-two."))
    cli.run("what does the lighthouse keeper say?")
    with Forest.open(db) as forest:  # the hook ran before the CLI exited
        (chat,) = forest.sessions(include_hidden=False)
        said = texts(forest, chat.id)
    assert ("user.message", "what does the lighthouse keeper say?") in said
    assert ("assistant.message", "The lighthouse keeper's answer is forty-two.") in said

    cli.script(Reply(text="Still forty-two, said the keeper."))
    cli.run("and again?", resume=True)
    with Forest.open(db) as forest:
        (same,) = forest.sessions(include_hidden=False)
        assert same.id == chat.id  # the resumed turn joined the chat it continues
        again = texts(forest, same.id)
        assert again[: len(said)] == said
        assert ("user.message", "and again?") in again
        assert ("assistant.message", "Still forty-two, said the keeper.") in again
        assert forest.check().ok
        # The transcript's position is stored: nothing is left to import.
        (row,) = forest.followed_sources()
        assert row.error is None
        (transcript,) = cli.transcripts()
        assert row.offset == transcript.stat().st_size

    status = json.loads(forest_cli(env, "hooks", "status", "--json"))
    assert sorted(status["settings"]["user"]["events"]) == sorted(
        ["Stop", "SubagentStop", "PreCompact", "SessionEnd"]
    )
    assert status["last_run"]["ok"] and status["errors"] == []
    forest_cli(env, "hooks", "uninstall", "claude-code")
    settings = json.loads((cli.home / ".claude" / "settings.json").read_text())
    assert "hooks" not in settings
