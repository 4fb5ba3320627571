"""Worktree stamps and divergence, on real git repositories in temp dirs."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from sessionforest import Forest
from sessionforest.cli.main import cli
from sessionforest.gitstamp import Stamper
from sessionforest.model import CheckpointRef

MSG = {"content": [{"type": "text", "text": "hi"}]}


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    (root / "a.txt").write_text("alpha\n")
    (root / "dir with space").mkdir()
    (root / "dir with space" / "ünï.txt").write_text("unicode\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


@pytest.fixture
def forest(tmp_path: Path) -> Forest:
    return Forest.open(tmp_path / "forest.db")


def stamp(repo: Path, **env: str) -> dict[str, Any] | None:
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return Stamper().stamp(repo)
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_unbound_sessions_are_never_stamped(forest: Forest, repo: Path) -> None:
    sid = forest.create_session(title="no cwd")
    entry = forest.append(sid, "user.message", MSG)
    assert entry.stamp is None and forest.entry(sid, entry.id).stamp is None
    assert forest.divergence(sid).state == "unknown"
    assert "not bound" in forest.divergence(sid).reason


def test_bound_appends_carry_head_and_dirty_hash(forest: Forest, repo: Path) -> None:
    sid = forest.create_session(cwd=repo)
    entry = forest.append(sid, "user.message", MSG)
    stored = forest.entry(sid, entry.id).stamp
    assert stored is not None and stored == entry.stamp
    assert stored["head"] == git(repo, "rev-parse", "HEAD")
    assert stored["dirty_files"] == 0
    assert forest.divergence(sid).state == "match"
    # The stamp lives beside the payload, never inside it.
    assert "head" not in orjson.dumps(forest.entry(sid, entry.id).payload).decode()


def test_two_different_edits_of_one_file_give_different_hashes(repo: Path) -> None:
    (repo / "a.txt").write_text("beta\n")
    first = stamp(repo)
    (repo / "a.txt").write_text("gama\n")  # same length, same porcelain line
    second = stamp(repo)
    assert first is not None and second is not None
    assert first["dirty"] != second["dirty"]
    (repo / "a.txt").write_text("beta\n")
    assert stamp(repo) == first  # same state, same hash


def test_untracked_content_counts_and_ignored_files_do_not(repo: Path) -> None:
    base = stamp(repo)
    (repo / "notes.md").write_text("one")
    with_untracked = stamp(repo)
    (repo / "notes.md").write_text("two")
    edited_untracked = stamp(repo)
    assert len({str(base), str(with_untracked), str(edited_untracked)}) == 3
    (repo / "debug.log").write_text("ignored")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_bytes(b"\0" * 100)
    assert stamp(repo) == edited_untracked


def test_hash_ignores_order_locale_config_and_timestamps(repo: Path) -> None:
    for i in range(30):
        (repo / f"z{i:02d}.txt").write_text(str(i))
    (repo / "a.txt").write_text("changed\n")
    (repo / "dir with space" / "ünï.txt").write_text("changed too\n")
    git(repo, "add", "z05.txt")
    reference = stamp(repo)
    # Timestamps: touching files without changing them is not a change.
    for path in repo.glob("z*.txt"):
        os.utime(path, (1_000_000, 1_000_000))
    assert stamp(repo) == reference
    # Locale and git configuration that would change git's output.
    for key, value in [
        ("status.renames", "copies"),
        ("diff.renames", "true"),
        ("core.quotepath", "true"),
        ("status.showUntrackedFiles", "no"),
        ("status.branch", "true"),
        ("status.showStash", "true"),
    ]:
        git(repo, "config", key, value)
    assert stamp(repo, LC_ALL="de_DE.UTF-8", LANG="fr_FR.UTF-8") == reference


def test_staged_and_unstaged_states_differ(repo: Path) -> None:
    (repo / "a.txt").write_text("next\n")
    unstaged = stamp(repo)
    git(repo, "add", "a.txt")
    staged = stamp(repo)
    assert unstaged is not None and staged is not None
    assert unstaged["dirty"] != staged["dirty"]


def test_divergence_reports_what_differs(forest: Forest, repo: Path) -> None:
    sid = forest.create_session(cwd=repo)
    entry = forest.append(sid, "user.message", MSG)
    (repo / "a.txt").write_text("edited\n")
    dirty = forest.divergence(sid)
    assert (dirty.state, dirty.what) == ("diverged", "dirty")
    git(repo, "commit", "-q", "-am", "edit")
    committed = forest.divergence(sid)
    # Clean again, but on another commit.
    assert (committed.state, committed.what) == ("diverged", "head")
    (repo / "a.txt").write_text("edited again\n")
    assert forest.divergence(sid).what == "both"
    later = forest.append(sid, "assistant.message", MSG)
    assert forest.divergence(sid).state == "match"
    assert forest.divergence(sid, entry.id).state == "diverged"
    assert forest.divergence(sid, later.id).state == "match"


def test_unknown_for_unstamped_missing_and_non_repository(forest: Forest, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    sid = forest.create_session(cwd=plain)
    forest.append(sid, "user.message", MSG)
    found = forest.divergence(sid)
    assert found.state == "unknown" and "not a git repository" in found.reason
    gone = tmp_path / "gone"
    gone.mkdir()
    other = forest.create_session(cwd=gone)
    forest.append(other, "user.message", MSG)
    gone.rmdir()
    assert "does not exist" in forest.divergence(other).reason
    repo_dir = tmp_path / "r"
    repo_dir.mkdir()
    git(repo_dir, "init", "-q")
    legacy = forest.create_session(cwd=repo_dir)
    forest.append(legacy, "user.message", MSG, stamp=None)  # as an importer writes
    found = forest.divergence(legacy)
    assert found.state == "unknown" and "no stamp" in found.reason


def test_unborn_head_is_stamped_as_none(forest: Forest, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    (fresh / "x").write_text("x")
    sid = forest.create_session(cwd=fresh)
    entry = forest.append(sid, "user.message", MSG)
    assert entry.stamp is not None and entry.stamp["head"] is None
    assert entry.stamp["dirty_files"] == 1
    assert forest.divergence(sid).state == "match"


def _tree_state(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under root (the .git directory included): content hash and mtime."""
    state = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            state[str(path.relative_to(root))] = (
                hashlib.sha256(data).hexdigest(),
                path.stat().st_mtime_ns,
            )
    return state


def test_seeking_and_branching_leave_the_worktree_byte_identical(
    forest: Forest, repo: Path
) -> None:
    (repo / "a.txt").write_text("work in progress\n")
    (repo / "new.txt").write_text("untracked\n")
    sid = forest.create_session(cwd=repo)
    first = forest.append(sid, "user.message", MSG)
    forest.append(sid, "assistant.message", MSG)
    forest.checkpoint(sid, "cp")
    before = _tree_state(repo)
    forest.move_head(sid, first.id)
    forest.append(sid, "assistant.message", MSG)  # a new branch, stamped
    forest.seek_checkpoint(sid, "cp")
    forest.snapshot(sid)
    forest.divergence(sid)
    assert _tree_state(repo) == before


def test_snapshot_has_tree_path_tips_checkpoints_and_divergence(forest: Forest, repo: Path) -> None:
    sid = forest.create_session(cwd=repo)
    root = forest.append(sid, "user.message", MSG)
    left = forest.append(sid, "assistant.message", MSG)
    cp = forest.checkpoint(sid, "left")
    forest.move_head(sid, root.id)
    right = forest.append(sid, "assistant.message", MSG)
    snap = forest.snapshot(sid)
    assert snap.head == right.id and snap.selected == right.id
    assert snap.active_path == (root.id, right.id)
    assert snap.tips == (cp.id, right.id)
    assert snap.checkpoints == (CheckpointRef(cp.id, "left"),)
    assert [n.id for n in snap.nodes] == [root.id, left.id, cp.id, right.id]
    assert snap.divergence.state == "match"
    as_json = snap.to_json()
    assert as_json["divergence"] == "match"
    assert snap_selected(forest, sid, left.id) == left.id


def snap_selected(forest: Forest, sid: str, entry: str) -> str | None:
    return forest.snapshot(sid, entry).selected


def test_cli_status_and_marks(tmp_path: Path, repo: Path) -> None:
    db = str(tmp_path / "cli.db")
    runner = CliRunner()

    def run(*args: str) -> str:
        result = runner.invoke(cli, ["--db", db, *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    sid = run("new", "--title", "t", "--cwd", str(repo)).strip()
    run("append", sid, "--kind", "user.message", "--text", "first")
    assert orjson.loads(run("status", sid, "--json"))["divergence"] == "match"
    (repo / "a.txt").write_text("drift\n")
    report = orjson.loads(run("status", sid, "--json"))
    assert report["divergence"] == "diverged" and report["dirty_differs"] is True
    assert report["head_differs"] is False
    assert "diverged (dirty)" in run("status", sid)
    assert "[diverged: dirty]" in run("log", sid)
    assert "[diverged: dirty]" in run("tree", sid)
    assert orjson.loads(run("log", sid, "--json"))[0]["diverged"] is True
    plain = run("new", "--title", "no dir").strip()
    run("append", plain, "--kind", "user.message", "--text", "x")
    assert orjson.loads(run("status", plain, "--json"))["divergence"] == "unknown"
    assert "[diverged" not in run("log", plain)


def test_a_session_known_unbound_is_stamped_without_the_store(forest: Forest, repo: Path) -> None:
    # Forest.stamp_known: what the server's event loop uses instead of a stamping thread.
    loose = forest.create_session(title="no cwd")
    bound = forest.create_session(cwd=repo)
    assert forest.stamp_known(loose) is None  # not seen yet: ask the store (stamp_ahead)
    forest.append(loose, "user.message", MSG)
    forest.append(bound, "user.message", MSG)
    known = forest.stamp_known(loose)
    assert known is not None and known == forest.stamp_ahead(loose) and known.cwd is None
    assert forest.stamp_known(bound) is None  # bound: git must run, never on the loop
    forest.bind(loose, repo)
    assert forest.stamp_known(loose) is None
