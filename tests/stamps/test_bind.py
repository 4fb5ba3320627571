"""Imported chats never make git run until the user binds them to a directory.

A `git` shim first on PATH records every call, so "git never ran" is seen,
not assumed. The directory a transcript names is kept as `origin_cwd`
(shown, exported, migrated out of `cwd` for chats imported before), and
`Forest.bind` / `forest bind` turn it (or another directory) into the bound
directory stamps use.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from sessionforest import Forest, InvalidArgument, SessionBound, UnknownSession
from sessionforest.cli.main import cli
from sessionforest.store.sqlite import migrations

CLAUDE = Path(__file__).resolve().parents[3] / "shared" / "data" / "claude-code"
REWIND = CLAUDE / "real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
MSG = {"content": [{"type": "text", "text": "hi"}]}

# A store as the version before this one left it: everything up to the
# migrations this version added (pending, in order, on such a store).
_FIRST_NEW = [m.name for m in migrations.MIGRATIONS].index("store_application_id")
BEFORE_THIS_VERSION = migrations.MIGRATIONS[:_FIRST_NEW]
NEW = [m.name for m in migrations.MIGRATIONS[_FIRST_NEW:]]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x.invalid"}  # fmt: skip
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)
    return root


@pytest.fixture
def git_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A log of every git call sessionforest makes (a shim in front of the real git)."""
    log = tmp_path / "git-calls.log"
    log.touch()
    shim = tmp_path / "shim"
    shim.mkdir()
    real = shutil.which("git")
    (shim / "git").write_text(f'#!/bin/sh\necho "$PWD $*" >> "{log}"\nexec "{real}" "$@"\n')
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    return log


@pytest.fixture
def transcript(tmp_path: Path, repo: Path) -> Path:
    """A real Claude Code session whose records say it ran in `repo`."""
    out = tmp_path / "claude" / REWIND.name
    out.parent.mkdir()
    lines = []
    for raw in REWIND.read_bytes().splitlines():
        record = orjson.loads(raw)
        if "cwd" in record:
            record["cwd"] = str(repo)
        lines.append(orjson.dumps(record))
    out.write_bytes(b"\n".join(lines) + b"\n")
    return out


def calls(log: Path) -> list[str]:
    return log.read_text().splitlines()


def test_an_imported_chat_runs_no_git_until_it_is_bound(
    tmp_path: Path, transcript: Path, repo: Path, git_calls: Path
) -> None:
    forest = Forest.open(tmp_path / "forest.db")
    [chat] = forest.import_chats("claude-code", transcript).chats
    sid = chat.session_id
    info = forest.session(sid)
    assert (info.cwd, info.origin_cwd) == (None, str(repo))
    appended = forest.append(sid, "user.message", MSG)
    forest.append_many(sid, [("assistant.message", MSG, None)])
    assert appended.stamp is None and forest.current_stamp(sid) is None
    assert "not bound" in forest.divergence(sid).reason
    assert forest.snapshot(sid).divergence.state == "unknown"
    forest.close()
    runner = CliRunner()
    status = runner.invoke(cli, ["--db", str(tmp_path / "forest.db"), "status", sid])
    assert status.exit_code == 0, status.output
    assert f"recorded in {repo}" in status.stdout and f"forest bind {sid}" in status.stdout
    assert calls(git_calls) == []
    # Binding (here with the directory the chat recorded) turns stamping on.
    bound = runner.invoke(cli, ["--db", str(tmp_path / "forest.db"), "bind", sid])
    assert bound.exit_code == 0, bound.output
    assert bound.stdout.strip() == f"{sid} bound to {repo}"
    with Forest.open(tmp_path / "forest.db") as forest:
        stamped = forest.append(sid, "user.message", MSG)
        assert stamped.stamp is not None and forest.divergence(sid).state == "match"
    assert calls(git_calls) and all(line.startswith(str(repo)) for line in calls(git_calls))


def test_bind_refuses_a_second_directory_and_one_that_does_not_exist(
    tmp_path: Path, repo: Path
) -> None:
    forest = Forest.open(tmp_path / "forest.db")
    sid = forest.create_session("t")
    with pytest.raises(InvalidArgument, match="does not exist"):
        forest.bind(sid, tmp_path / "missing")
    with pytest.raises(UnknownSession):
        forest.bind("no-such-session", repo)
    assert forest.bind(sid, repo).cwd == str(repo)
    assert forest.bind(sid, repo).cwd == str(repo)  # the same directory again: nothing changes
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(SessionBound) as caught:
        forest.bind(sid, other)
    assert (caught.value.cwd, caught.value.requested) == (str(repo), str(other))
    assert forest.session(sid).cwd == str(repo)
    forest.close()


def test_the_cli_bind_needs_a_directory_when_none_was_recorded(tmp_path: Path) -> None:
    runner = CliRunner()
    db = ["--db", str(tmp_path / "forest.db")]
    sid = runner.invoke(cli, [*db, "new"]).stdout.strip()
    result = runner.invoke(cli, [*db, "bind", sid])
    assert result.exit_code == 1
    assert "has no recorded directory" in result.stderr
    gone = runner.invoke(cli, [*db, "bind", sid, str(tmp_path / "missing")])
    assert gone.exit_code == 2 and "does not exist" in gone.stderr
    assert runner.invoke(cli, [*db, "bind", sid, str(tmp_path)]).exit_code == 0
    again = runner.invoke(cli, [*db, "bind", sid, "/"])
    assert again.exit_code == 4 and f"already bound to {tmp_path}" in again.stderr


def test_a_bind_by_another_forest_is_seen_by_the_next_append(tmp_path: Path, repo: Path) -> None:
    first = Forest.open(tmp_path / "forest.db")
    sid = first.create_session("t")
    assert first.append(sid, "user.message", MSG).stamp is None  # cached as unbound
    with Forest.open(tmp_path / "forest.db") as second:
        second.bind(sid, repo)
    assert first.append(sid, "user.message", MSG).stamp is not None
    assert first.append_many(sid, [("user.message", MSG, None)])[0].stamp is not None
    assert first.divergence(sid).state == "match"
    first.close()


def test_sessions_json_shows_where_an_imported_chat_was_recorded(
    tmp_path: Path, transcript: Path, repo: Path
) -> None:
    runner = CliRunner()
    db = ["--db", str(tmp_path / "forest.db")]
    assert runner.invoke(cli, [*db, "import", "claude-code", str(transcript)]).exit_code == 0
    [listed] = orjson.loads(runner.invoke(cli, [*db, "sessions", "--json"]).stdout)
    assert (listed["cwd"], listed["origin_cwd"]) == (None, str(repo))


def test_the_migration_moves_only_imported_sessions_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "older.db"
    with monkeypatch.context() as patch:
        patch.setattr(migrations, "MIGRATIONS", BEFORE_THIS_VERSION)
        Forest.open(path).close()
    with closing(sqlite3.connect(path)) as conn, conn:
        # As the previous version stored them: imports put the source's cwd in cwd.
        conn.execute(
            "INSERT INTO sessions(id, title, harness, cwd, created_at, source_format, "
            "source_path, source_id) VALUES "
            "('imported', '', 'claude-code', '/src/theirs', 'now', 'claude-code', 'f', 's1'), "
            "('imported-nowhere', '', 'chatgpt', NULL, 'now', 'chatgpt', 'f', 's2'), "
            "('mine', '', '', '/src/mine', 'now', NULL, NULL, NULL)"
        )
    with Forest.open(path) as forest:
        assert "session_origin_cwd" in forest.migrated
        got = {s.id: (s.cwd, s.origin_cwd) for s in forest.sessions()}
    assert got == {
        "imported": (None, "/src/theirs"),
        "imported-nowhere": (None, None),
        "mine": ("/src/mine", None),
    }


def test_native_export_and_import_keep_both_directories(
    tmp_path: Path, transcript: Path, repo: Path
) -> None:
    with Forest.open(tmp_path / "a.db") as forest:
        [chat] = forest.import_chats("claude-code", transcript).chats
        sid = chat.session_id
        forest.bind(sid, tmp_path)
        dump = tmp_path / "chat.jsonl"
        with dump.open("w") as out:
            forest.export_jsonl(sid, out)
    header = orjson.loads(dump.read_bytes().splitlines()[0])
    assert (header["cwd"], header["origin_cwd"]) == (str(tmp_path), str(repo))
    with Forest.open(tmp_path / "b.db") as forest:
        info = forest.import_native(dump)
        assert (info.cwd, info.origin_cwd) == (str(tmp_path), str(repo))
    # A file written before origin_cwd existed still imports.
    lines = dump.read_bytes().splitlines()
    del header["origin_cwd"]
    older = tmp_path / "older.jsonl"
    older.write_bytes(b"\n".join([orjson.dumps(header), *lines[1:]]) + b"\n")
    with Forest.open(tmp_path / "c.db") as forest:
        info = forest.import_native(older)
        assert (info.cwd, info.origin_cwd) == (str(tmp_path), None)
