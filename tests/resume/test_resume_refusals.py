"""What `forest resume` refuses, before it writes anything: an unknown session or entry, an
empty chat, a folder it cannot write, an untested CLI version, a read-only store; and the
command's own output (the text, `--json`, exit codes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from resume_helpers import branched_chat
from sessionforest import Forest, ResumeRefused, UnknownEntry, UnknownSession
from sessionforest.cli.main import cli
from sessionforest.errors import EmptySession
from sessionforest.resume import resume


def _env(home: Path, path: str = "/nonexistent") -> dict[str, str]:
    """A HOME of its own and a PATH without the CLIs (so no version is checked)."""
    return {"HOME": str(home), "PATH": path}


def _nothing_written(home: Path) -> None:
    written = [p for p in home.rglob("*") if p.is_file()] if home.exists() else []
    assert written == [], written


@pytest.fixture
def forest(tmp_path: Path) -> Forest:
    with Forest.open(tmp_path / "forest.db") as f:
        yield f


def test_an_unknown_session_is_refused_by_name(forest: Forest, tmp_path: Path) -> None:
    with pytest.raises(UnknownSession, match="nosuchsession"):
        resume(forest, "nosuchsession", to="claude-code", env=_env(tmp_path / "h"))
    _nothing_written(tmp_path / "h")


def test_an_unknown_entry_is_refused_by_name(forest: Forest, tmp_path: Path) -> None:
    sid, _ = branched_chat(forest)
    with pytest.raises(UnknownEntry, match="zzzzzz"):
        resume(forest, sid, to="codex", at="zzzzzz", env=_env(tmp_path / "h"))
    _nothing_written(tmp_path / "h")
    assert forest.handoffs(sid) == []


def test_an_empty_chat_has_nothing_to_hand_off(forest: Forest, tmp_path: Path) -> None:
    sid = forest.create_session("empty")
    with pytest.raises(EmptySession):
        resume(forest, sid, to="claude-code", env=_env(tmp_path / "h"))


def test_a_folder_that_cannot_be_made_is_named(forest: Forest, tmp_path: Path) -> None:
    sid, _ = branched_chat(forest)
    home = tmp_path / "h"
    home.mkdir()
    (home / ".claude").write_text("a file where Claude Code's folder should be")
    with pytest.raises(ResumeRefused, match=r"folder .*\.claude/projects") as caught:
        resume(forest, sid, to="claude-code", cwd=str(tmp_path), env=_env(home))
    assert caught.value.target == "claude-code"
    assert forest.handoffs(sid) == []
    codex_home = home / "codex-home"
    codex_home.write_text("not a folder")
    env = _env(home) | {"CODEX_HOME": str(codex_home)}
    with pytest.raises(ResumeRefused, match="codex-home"):
        resume(forest, sid, to="codex", cwd=str(tmp_path), env=env)


def _fake_cli(folder: Path, name: str, version: str) -> str:
    """A `name` on PATH that reports `version` (a release this checkout never tested)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(f"#!/bin/sh\necho '{version}'\n")
    script.chmod(0o755)
    return str(folder)


@pytest.mark.parametrize(
    ("target", "name", "version"),
    [
        ("claude-code", "claude", "3.0.1 (Claude Code)"),
        ("codex", "codex", "codex-cli 0.172.0"),
        ("gemini", "gemini", "0.62.1"),
    ],
)
def test_an_untested_cli_version_is_refused_before_writing(
    forest: Forest, tmp_path: Path, target: str, name: str, version: str
) -> None:
    sid, _ = branched_chat(forest)
    home = tmp_path / "h"
    env = _env(home, _fake_cli(tmp_path / "bin", name, version))
    with pytest.raises(ResumeRefused, match=rf"{name} {version.split()[-1].strip('()')}|"
                       rf"{name} \d") as caught:  # fmt: skip
        resume(forest, sid, to=target, cwd=str(tmp_path), env=env)
    assert "--any-version" in str(caught.value) and "tested" in str(caught.value)
    _nothing_written(home)
    # The override writes for the installed version, and says so.
    done = resume(forest, sid, to=target, cwd=str(tmp_path), env=env, any_version=True)
    assert Path(done["path"]).is_file() and done["installed"] == done["version"]


def test_a_read_only_store_is_refused(tmp_path: Path) -> None:
    with Forest.open(tmp_path / "forest.db") as f:
        sid, _ = branched_chat(f)
    with (
        Forest.open(tmp_path / "forest.db", readonly=True) as reader,
        pytest.raises(ResumeRefused, match="read-only"),
    ):
        resume(reader, sid, to="claude-code", env=_env(tmp_path / "h"))
    _nothing_written(tmp_path / "h")


def test_the_command_prints_the_command_and_json(tmp_path: Path) -> None:
    db = tmp_path / "forest.db"
    with Forest.open(db) as f:
        sid, ids = branched_chat(f)
    home = tmp_path / "h"
    env = _env(home) | {"FOREST_SEMANTIC": "off"}
    runner = CliRunner()
    work = tmp_path / "work"
    work.mkdir()
    args = ["--db", str(db), "resume", sid[:8], "--at", ids["old"], "--to", "codex"]
    done = runner.invoke(cli, [*args, "--cwd", str(work), "--json"], env=env)
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    assert doc["session_id"] == sid and doc["entry_id"] == ids["old"]
    assert doc["command"] == f"cd {work} && codex resume {doc['id']}"
    assert doc["argv"] == ["codex", "resume", doc["id"]] and doc["installed"] is None
    assert Path(doc["path"]).is_file() and doc["path"].startswith(str(home / ".codex/sessions"))
    text = runner.invoke(cli, [*args, "--cwd", str(work)], env=env)
    assert text.exit_code == 0, text.output
    assert "Continue with:" in text.output and "codex resume" in text.output
    assert "6 messages" in text.output  # the text and the call of a turn are one message
    missing = runner.invoke(cli, ["--db", str(db), "resume", "nosuch", "--to", "codex"], env=env)
    assert missing.exit_code == 3 and "nosuch" in missing.output
    bad = runner.invoke(cli, ["--db", str(db), "resume", sid, "--to", "aider"], env=env)
    assert bad.exit_code == 2


@pytest.mark.parametrize("target", ["claude-code", "codex", "gemini"])
def test_a_cwd_that_is_no_directory_is_refused_by_name(
    forest: Forest, tmp_path: Path, target: str
) -> None:
    sid, _ = branched_chat(forest)
    home = tmp_path / "h"
    missing = tmp_path / "no" / "such" / "dir"
    with pytest.raises(ResumeRefused, match=f"--cwd {missing}: does not exist"):
        resume(forest, sid, to=target, cwd=str(missing), env=_env(home))
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory")
    with pytest.raises(ResumeRefused, match=f"--cwd {a_file}: is not a directory"):
        resume(forest, sid, to=target, cwd=str(a_file), env=_env(home))
    _nothing_written(home)
    assert forest.handoffs(sid) == []
    assert not missing.exists()


def _ran_in(tmp_path: Path, cwd: str) -> Path:
    """A store holding one Codex chat that ran in `cwd` (its session_meta says so)."""
    rollout = tmp_path / "rollout-2026-03-01T10-00-00-t.jsonl"
    meta = {"id": "t", "cwd": cwd, "cli_version": "0.171.0", "source": "cli"}
    lines = [
        {"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta", "payload": meta},
        {"timestamp": "2026-03-01T10:00:01Z", "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}},
        {"timestamp": "2026-03-01T10:00:02Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "hello"}]}},
    ]  # fmt: skip
    rollout.write_text("".join(json.dumps(line) + "\n" for line in lines))
    db = tmp_path / "forest.db"
    with Forest.open(db) as f:
        assert f.import_chats("codex", rollout).ok
    return db


def test_a_recorded_cwd_gone_from_this_machine_falls_back_here_and_says_so(
    tmp_path: Path,
) -> None:
    gone = "/nonexistent/where/the/chat/ran"
    db = _ran_in(tmp_path, gone)
    here = tmp_path / "here"
    here.mkdir()
    home = tmp_path / "h"
    with Forest.open(db) as f:
        (sid,) = [s.id for s in f.sessions()]
        done = resume(f, sid, to="codex", env=_env(home), here=str(here))
    assert done["cwd"] == str(here)
    (note,) = done["notes"]
    assert gone in note and str(here) in note and "--cwd" in note
    assert json.loads(Path(done["path"]).read_text().splitlines()[0])["payload"]["cwd"] == str(here)
    # the command line: the note in --json and as a line of the text
    env = _env(home) | {"FOREST_SEMANTIC": "off"}
    runner = CliRunner()
    args = ["--db", str(db), "resume", sid, "--to", "claude-code"]
    shown = runner.invoke(cli, [*args, "--json"], env=env)
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.output)
    assert doc["cwd"] == os.getcwd() and gone in doc["notes"][0]
    text = runner.invoke(cli, args, env=env)
    assert text.exit_code == 0, text.output
    assert f"Note: the chat ran in {gone}" in text.output


def test_a_recorded_cwd_that_exists_is_used_without_a_note(tmp_path: Path) -> None:
    there = tmp_path / "there"
    there.mkdir()
    db = _ran_in(tmp_path, str(there))
    with Forest.open(db) as f:
        (sid,) = [s.id for s in f.sessions()]
        done = resume(f, sid, to="gemini", env=_env(tmp_path / "h"), here=str(tmp_path))
    assert done["cwd"] == str(there) and done["notes"] == []
