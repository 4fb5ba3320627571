"""`forest hooks install|uninstall|status` on real settings files, and `forest hook
claude-code` as the real process Claude Code runs: it merges with the user's own
hooks, removes exactly what it added, prints nothing, exits 0 on its own failures
(logged where status finds them) and is safe when many run at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest
from sessionforest.mirror import hooks

from .conftest import turn_lines

FOREST = [sys.executable, "-m", "sessionforest.cli.main"]

# A user's own settings: hooks of theirs on two of our events and one other, and keys
# that have nothing to do with hooks. Install and uninstall must leave all of it.
THEIRS: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreCompact": [
            {"matcher": "manual", "hooks": [{"type": "command", "command": "backup.sh"}]}
        ],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}],
    },
}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    found = {**os.environ, "HOME": str(home), "XDG_STATE_HOME": str(home / ".state")}
    for name in ("FOREST_DB", "CLAUDE_CONFIG_DIR", hooks.LOG_VARIABLE):
        found.pop(name, None)
    return found


def forest(
    env: dict[str, str], *args: str, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*FOREST, *args], env=env, input=stdin, capture_output=True, timeout=120, check=False
    )


def settings_of(env: dict[str, str]) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(Path(env["HOME"], ".claude", "settings.json").read_text())
    return found


def test_install_merges_with_the_users_hooks_and_uninstall_removes_exactly_ours(
    env: dict[str, str], tmp_path: Path
) -> None:
    settings = Path(env["HOME"], ".claude", "settings.json")
    settings.parent.mkdir()
    settings.write_text(json.dumps(THEIRS, indent=2))
    db = tmp_path / "store.db"
    done = forest(env, "--db", str(db), "hooks", "install", "claude-code")
    assert done.returncode == 0, done.stderr
    after = settings_of(env)
    assert {k: v for k, v in after.items() if k != "hooks"} == {
        k: v for k, v in THEIRS.items() if k != "hooks"
    }
    for event in hooks.EVENTS:
        commands = [h["command"] for g in after["hooks"][event] for h in g["hooks"]]
        ours = [c for c in commands if hooks.is_ours(c)]
        assert len(ours) == 1 and f"--db {db}" in ours[0]
    # Theirs are still there, in their places.
    assert after["hooks"]["Stop"][0] == THEIRS["hooks"]["Stop"][0]
    assert after["hooks"]["PreCompact"][0] == THEIRS["hooks"]["PreCompact"][0]
    assert after["hooks"]["PreToolUse"] == THEIRS["hooks"]["PreToolUse"]
    # Installing again replaces ours: still one each.
    assert forest(env, "hooks", "install", "claude-code").returncode == 0
    again = settings_of(env)
    for event in hooks.EVENTS:
        ours = [h for g in again["hooks"][event] for h in g["hooks"] if hooks.is_ours(h["command"])]
        assert len(ours) == 1
    assert forest(env, "hooks", "uninstall", "claude-code").returncode == 0
    assert settings_of(env) == THEIRS
    # Nothing of ours left: a second uninstall changes nothing and says so.
    second = forest(env, "hooks", "uninstall", "claude-code")
    assert b"no claude-code hooks" in second.stdout and settings_of(env) == THEIRS


def test_a_project_install_and_a_settings_file_that_is_not_json(
    env: dict[str, str], tmp_path: Path
) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    done = forest(env, "hooks", "install", "claude-code", "--project", str(project), "--json")
    assert done.returncode == 0, done.stderr
    path = project / ".claude" / "settings.json"
    assert json.loads(done.stdout)["settings"] == str(path)
    assert set(hooks.installed(path)) == set(hooks.EVENTS)
    broken = Path(env["HOME"], ".claude", "settings.json")
    broken.parent.mkdir()
    broken.write_text('{"hooks": {')  # half written by hand
    refused = forest(env, "hooks", "install", "claude-code")
    assert refused.returncode != 0
    assert b"not valid JSON" in refused.stderr and str(broken).encode() in refused.stderr
    assert broken.read_text() == '{"hooks": {'  # left exactly as it was


def hook_input(transcript: Path, session: str, event: str = "Stop") -> bytes:
    body = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(transcript.parent),
        "hook_event_name": event,
    }
    return json.dumps(body).encode()


def test_the_hook_imports_incrementally_prints_nothing_and_logs_its_failures(
    env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "store.db"
    transcript = tmp_path / "projects" / "p" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(b"".join(turn_lines("s1", 0, 4)))
    first = forest(env, "--db", str(db), "hook", "claude-code", stdin=hook_input(transcript, "s1"))
    assert (first.returncode, first.stdout) == (0, b"")
    with transcript.open("ab") as out:
        out.write(b"".join(turn_lines("s1", 4, 2)))
    second = forest(env, "--db", str(db), "hook", "claude-code", stdin=hook_input(transcript, "s1"))
    assert (second.returncode, second.stdout) == (0, b"")
    with Forest.open(db) as store:
        (chat,) = store.sessions()
        assert chat.entry_count == 6
    # Its own failures: bad input, a transcript that is not there, a store it cannot
    # open. Each exits 0 with nothing on stdout, and is logged.
    bad = [
        ("", b"not json at all"),
        ("", json.dumps({"hook_event_name": "Stop", "session_id": "x"}).encode()),
        ("", hook_input(tmp_path / "missing.jsonl", "gone")),
        (str(tmp_path / "no-such-dir" / "store.db"), hook_input(transcript, "s1")),
    ]
    for store_path, stdin in bad:
        args = ["--db", store_path] if store_path else ["--db", str(db)]
        failed = forest(env, *args, "hook", "claude-code", stdin=stdin)
        assert (failed.returncode, failed.stdout) == (0, b"")
    status = json.loads(forest(env, "hooks", "status", "--json").stdout)
    assert status["last_run"]["ok"] is False
    errors = [e["error"] for e in status["errors"]]
    assert len(errors) == 4
    assert "JSONDecodeError" in errors[0] and "transcript_path" in errors[1]
    assert "missing.jsonl" in errors[2] and "no-such-dir" in errors[3]
    text = forest(env, "hooks", "status").stdout.decode()
    assert "not installed" in text and "error" in text


def test_many_hooks_of_many_sessions_at_once_store_every_turn_once(
    env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "store.db"
    Forest.open(db).close()
    files = []
    for k in range(4):
        transcript = tmp_path / "projects" / "p" / f"s{k}.jsonl"
        transcript.parent.mkdir(parents=True, exist_ok=True)
        transcript.write_bytes(b"".join(turn_lines(f"s{k}", 0, 10)))
        files.append(transcript)
    # Each session's hook three times at once (Stop, SubagentStop, SessionEnd racing).
    jobs = [(path, event) for path in files for event in ("Stop", "SubagentStop", "SessionEnd")]
    with ThreadPoolExecutor(len(jobs)) as pool:
        done = list(
            pool.map(
                lambda job: forest(
                    env, "--db", str(db), "hook", "claude-code",
                    stdin=hook_input(job[0], job[0].stem, job[1]),
                ),
                jobs,
            )
        )  # fmt: skip
    assert all((d.returncode, d.stdout) == (0, b"") for d in done)
    with Forest.open(db) as store:
        chats = store.sessions()
        assert sorted(c.entry_count for c in chats) == [10, 10, 10, 10]
        assert store.check().ok
    log = Path(env["XDG_STATE_HOME"], "sessionforest", "hooks.log").read_text().splitlines()
    assert len(log) == len(jobs) and all(json.loads(line)["ok"] for line in log)
