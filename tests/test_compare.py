"""Comparing two branches (`Forest.compare`, `forest diff`), worker chats of a chat
(`Forest.workers`) and node previews, on each backend, real git repositories and the
real Claude Code sample files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from sessionforest import Forest
from sessionforest.cli.main import cli

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def text(t: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": t}]}


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00",
    }
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    (root / "db.py").write_text("timeout = 0\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


def two_branches(forest: Forest, repo: Path | None) -> tuple[str, str, str, str]:
    """A shared opening, then two attempts at the fix, each committing its own change."""
    sid = forest.create_session("lock", cwd=str(repo) if repo else None)
    forest.append(sid, "user.message", text("the nightly import says database is locked"))
    fork = forest.append(sid, "assistant.message", text("Let us look at the connection.")).id
    forest.append(sid, "user.message", text("try WAL mode"))
    if repo:
        (repo / "db.py").write_text("timeout = 0\njournal = 'wal'\n")
        git(repo, "commit", "-qam", "wal")
    forest.append(sid, "assistant.message", text("Switched to WAL."))
    a = forest.append(sid, "user.message", text("thanks")).id
    forest.append(sid, "user.message", text("try a busy timeout"), parent=fork)
    if repo:
        git(repo, "checkout", "-q", "HEAD~1")
        (repo / "db.py").write_text("timeout = 5000\n")
        git(repo, "commit", "-qam", "busy timeout")
        (repo / "notes.txt").write_text("dirty\n")
    forest.append(sid, "assistant.message", text("Set busy_timeout."))
    b = forest.append(sid, "user.message", text("thanks")).id
    return sid, fork, a, b


def test_two_branches_are_aligned_from_their_common_ancestor(forest: Forest) -> None:
    sid, fork, a, b = two_branches(forest, None)
    head = forest.head(sid)
    doc = forest.compare(sid, a, b).to_json()
    assert doc["ancestor"] == fork and doc["shared"] == 2
    assert [e["payload"]["content"][0]["text"] for e in doc["a_entries"]] == [
        "try WAL mode", "Switched to WAL.", "thanks"
    ]  # fmt: skip
    # Turns: the two attempts side by side (they differ), the closing "thanks" the same.
    rows = [(len(r["a"] or []), len(r["b"] or []), r["same"]) for r in doc["rows"]]
    assert rows == [(2, 2, False), (1, 1, True)]
    assert doc["git"]["state"] == "unknown" and "stamp" in doc["git"]["reason"]
    assert forest.head(sid) == head  # comparing writes nothing


def test_one_side_may_be_an_ancestor_of_the_other(forest: Forest) -> None:
    sid, fork, a, _ = two_branches(forest, None)
    doc = forest.compare(sid, fork, a).to_json()
    assert doc["ancestor"] == fork and doc["a_entries"] == []
    assert [r["a"] for r in doc["rows"]] == [None, None]


def test_the_git_diff_between_the_stamped_heads_and_their_dirty_states(
    tmp_path: Path, repo: Path
) -> None:
    forest = Forest.open(tmp_path / "f.db")
    try:
        sid, _, a, b = two_branches(forest, repo)
        git_part = forest.compare(sid, a, b).git
    finally:
        forest.close()
    assert git_part["state"] == "compared", git_part["reason"]
    assert git_part["a_head"] != git_part["b_head"]
    assert "db.py" in git_part["stat"]
    assert "-journal = 'wal'" in git_part["diff"] and "+timeout = 5000" in git_part["diff"]
    assert git_part["dirty_differs"] is True
    assert (git_part["a_dirty_files"], git_part["b_dirty_files"]) == (0, 1)
    # The CLI prints the same comparison.
    out = CliRunner().invoke(cli, ["--db", str(tmp_path / "f.db"), "diff", sid, a, b])
    assert out.exit_code == 0, out.output
    assert "Common ancestor:" in out.output and "A #" in out.output and "B #" in out.output
    assert "db.py" in out.output and "Uncommitted changes differ (A: 0" in out.output
    patch = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "f.db"), "diff", sid, a, b, "--patch", "--json"]
    )
    assert orjson.loads(patch.output)["git"]["diff"] == git_part["diff"]


def test_diff_names_an_unknown_entry(tmp_path: Path) -> None:
    forest = Forest.open(tmp_path / "f.db")
    try:
        sid, _, a, _ = two_branches(forest, None)
    finally:
        forest.close()
    out = CliRunner().invoke(cli, ["--db", str(tmp_path / "f.db"), "diff", sid, a, "zzzzzz"])
    assert out.exit_code != 0 and "zzzzzz" in out.output


def test_previews_say_what_each_entry_is(forest: Forest) -> None:
    sid = forest.create_session("p")
    u = forest.append(sid, "user.message", text("fix   the\nlock " + "x" * 300)).id
    call = {"type": "tool_call", "id": "c1", "name": "Bash", "input": {"command": "pytest -q"}}
    t = forest.append(sid, "assistant.message", {"content": [call]}).id
    r = forest.append(sid, "tool.completed", {"call_id": "c1", "output": "3 passed"}).id
    found = forest.previews(sid, [u, t, r])
    assert found[u].startswith("fix the lock x") and len(found[u]) == 120
    assert found[t] == "Bash pytest -q"
    assert found[r] == "→ 3 passed"


def test_a_chat_list_counts_visible_messages_and_branches(forest: Forest) -> None:
    sid, *_ = two_branches(forest, None)
    forest.append(sid, "provider.notification", {"provider": "x", "event": {}}, visibility="hidden")
    forest.append(sid, "tool.completed", {"call_id": "c1", "output": "ok"})
    empty = forest.create_session("empty")
    counts = forest.chat_counts([empty, sid, empty])
    assert [c.to_json() for c in counts] == [
        {"session_id": empty, "messages": 0, "branches": 0},
        {"session_id": sid, "messages": 8, "branches": 1},
    ]


def test_worker_chats_are_reachable_from_their_parent_and_back(tmp_path: Path) -> None:
    forest = Forest.open(tmp_path / "f.db")
    try:
        forest.import_chats("claude-code", DATA / "claude-code" / "synthetic")
        parents = {}
        for s in forest.sessions(include_hidden=True):
            doc = forest.workers(s.id).to_json()
            if doc["workers"]:
                parents[s.id] = doc["workers"]
        assert parents, "the sample has a chat with worker chats"
        parent, workers = next(iter(parents.items()))
        for w in workers:
            assert forest.session(w["session_id"]).visibility == "hidden"
            back = forest.workers(w["session_id"]).to_json()
            assert back["parent"] is not None and back["parent"]["id"] == parent
            assert back["workers"] == []
    finally:
        forest.close()


def test_the_log_names_the_wrapper_of_a_message_the_harness_wrote(forest: Forest) -> None:
    sid = forest.create_session("w")
    forest.append(sid, "user.message", text("<command-name>/exit</command-name>"))
    forest.append(sid, "user.message", text("fix the lock"))
    logged = forest.log_document(sid)
    assert logged[0]["wrapper"] == "command-name"
    assert "wrapper" not in logged[1]  # the person's own words: no label
