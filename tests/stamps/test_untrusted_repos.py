"""Hostile repositories and a leaked environment: git, run for stamps, executes nothing.

Every program setting a repository (or the caller's GIT_* variables) can name
points at one script that leaves a marker file. Each setting is first shown
to fire under plain git (the trap is armed), then shown not to fire through
`gitsafe` and through everything that stamps: append, divergence, snapshot
and `forest status`. The stamp must equal that of a twin repository with the
same commits and files and no hostile config.
"""

from __future__ import annotations

import os
import pty
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from sessionforest import Forest
from sessionforest.cli.main import cli
from sessionforest.gitsafe import SafeGit, invocation
from sessionforest.gitstamp import Stamper

MSG = {"content": [{"type": "text", "text": "hi"}]}

# Identical commits in both repositories: same author, dates and content.
COMMIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z",
}

HOOKS = ("pre-commit", "commit-msg", "post-commit", "post-index-change", "post-checkout")


def git(repo: Path, *args: str, env: dict[str, str] | None = None, **kw: object) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**clean, **COMMIT_ENV, **(env or {})},
        **kw,  # type: ignore[call-overload]
    )
    return str(done.stdout).strip()


def make_repo(root: Path) -> Path:
    """Two commits of ordinary files, attributes naming filters and a diff driver."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".gitattributes").write_text("*.txt filter=cl\n*.dat filter=pr\n*.md diff=tc\n")
    (root / "a.txt").write_text("alpha\n")
    (root / "b.dat").write_text("bravo\n")
    (root / "c.md").write_text("charlie\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    (root / "c.md").write_text("charlie two\n")
    git(root, "commit", "-q", "-am", "two")
    return root


def dirty(root: Path) -> None:
    """Worktree changes that make git re-read content (so it would run clean filters)."""
    for name in ("a.txt", "b.dat"):
        os.utime(root / name, (2_000_000_000, 2_000_000_000))  # same bytes, new stat
    (root / "c.md").write_text("charlie three\n")
    (root / "new.txt").write_text("untracked\n")


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    found = tmp_path / "markers"
    found.mkdir()
    return found


@pytest.fixture
def program(tmp_path: Path, markers: Path) -> Path:
    """`program NAME`: leaves markers/NAME; filters and pagers pass stdin through."""
    script = tmp_path / "bin" / "program"
    script.parent.mkdir()
    script.write_text(
        f'#!/bin/sh\ntouch "{markers}/$1"\n'
        'case "$1" in *clean|*smudge|*process|*pager*) exec cat ;; esac\nexit 0\n'
    )
    script.chmod(0o755)
    # askpass programs are run without a shell, so they take no argument.
    for name in ("askpass", "env-askpass", "env-ssh-askpass"):
        single = script.parent / name
        single.write_text(f'#!/bin/sh\ntouch "{markers}/{name}"\n')
        single.chmod(0o755)
    return script


@pytest.fixture
def hostile(tmp_path: Path, program: Path) -> Path:
    root = make_repo(tmp_path / "hostile")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in HOOKS:
        for folder in (hooks, root / ".git" / "hooks"):
            hook = folder / name
            hook.write_text(f"#!/bin/sh\n{program} hook-{name} </dev/null\n")
            hook.chmod(0o755)
    settings = {
        "core.fsmonitor": f"{program} fsmonitor",
        "core.hooksPath": str(hooks),
        "core.sshCommand": f"{program} ssh",
        "core.pager": f"{program} pager",
        "pager.log": f"{program} pager-log",
        "core.askPass": str(program.parent / "askpass"),
        "core.editor": f"{program} editor",
        "credential.helper": f"{program} credential",
        "credential.https://example.invalid.helper": f"{program} credential-url",
        "diff.external": f"{program} external-diff",
        "diff.tc.textconv": f"{program} textconv",
        "filter.cl.clean": f"{program} clean",
        "filter.cl.smudge": f"{program} smudge",
        "filter.cl.required": "true",
        "filter.pr.process": f"{program} process",
        "user.name": "t",
        "user.email": "t@example.invalid",
    }
    for key, value in settings.items():
        git(root, "config", key, value)
    dirty(root)
    return root


@pytest.fixture
def twin(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "twin")
    dirty(root)
    return root


@pytest.fixture
def leaked_env(tmp_path: Path, program: Path, monkeypatch: pytest.MonkeyPatch, twin: Path) -> None:
    """A caller whose environment would redirect git or name programs of its own."""
    elsewhere = tmp_path / "elsewhere"
    make_repo(elsewhere)
    for key, value in {
        "GIT_DIR": str(elsewhere / ".git"),
        "GIT_WORK_TREE": str(elsewhere),
        "GIT_INDEX_FILE": str(tmp_path / "no-index"),
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": f"{program} env-fsmonitor",
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{program} env-parameters'",
        "GIT_CONFIG_GLOBAL": str(tmp_path / "no-global"),
        "GIT_EXEC_PATH": str(tmp_path / "no-exec-path"),
        "GIT_PAGER": f"{program} env-git-pager",
        "PAGER": f"{program} env-pager",
        "GIT_EXTERNAL_DIFF": f"{program} env-external-diff",
        "GIT_SSH_COMMAND": f"{program} env-ssh",
        "GIT_ASKPASS": str(program.parent / "env-askpass"),
        "SSH_ASKPASS": str(program.parent / "env-ssh-askpass"),
        "GIT_EDITOR": f"{program} env-editor",
    }.items():
        monkeypatch.setenv(key, value)


def fired(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


def run_plain(repo: Path, args: list[str], stdin: str = "", tty: bool = False) -> None:
    """Plain git with the repository's own config (the armed control)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    _run(["git", *args], env, repo, stdin, tty)


def run_safe(repo: Path, args: list[str], stdin: str = "", tty: bool = False) -> None:
    """The same command through gitsafe's argv and environment."""
    root = Stamper().root(repo)
    assert root is not None
    pairs = SafeGit().pairs(root, [str(repo / ".git")])
    argv, env = invocation(args, pairs)
    _run(argv, env, repo, stdin, tty)


def _run(argv: list[str], env: dict[str, str], cwd: Path, stdin: str, tty: bool) -> None:
    if not tty:
        subprocess.run(
            argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=30
        )
        return
    # A terminal on stdout: what makes git start a pager.
    leader, follower = pty.openpty()
    try:
        subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=follower,
                       stderr=follower, timeout=30)  # fmt: skip
    finally:
        os.close(follower)
        os.close(leader)


# (what it tries, git arguments, stdin, needs a terminal, the markers plain git leaves)
TRIES = [
    ("fsmonitor and filters on status", ["status", "--porcelain"], "", False,
     {"fsmonitor", "clean", "process"}),
    ("smudge filter on checkout", ["checkout", "--", "a.txt"], "", False, {"smudge"}),
    ("hooks on commit", ["commit", "-q", "--allow-empty", "-m", "x"], "", False,
     {"hook-pre-commit", "hook-commit-msg", "hook-post-commit"}),
    ("pagers", ["log", "-1"], "", True, {"pager-log"}),
    ("external diff", ["diff", "c.md"], "", False, {"external-diff"}),
    ("textconv", ["diff", "--no-ext-diff", "c.md"], "", False, {"textconv"}),
    ("ssh", ["ls-remote", "ssh://example.invalid/repo.git"], "", False, {"ssh"}),
    ("credential helpers and askpass", ["credential", "fill"],
     "protocol=https\nhost=example.invalid\n\n", False,
     {"credential", "credential-url", "askpass"}),
    ("editor", ["commit", "-q", "--allow-empty", "--no-verify"], "", False, {"editor"}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "stdin", "tty", "expected"),
    [t[1:] for t in TRIES],
    ids=[t[0] for t in TRIES],
)
def test_each_program_setting_fires_under_plain_git_and_never_through_gitsafe(
    hostile: Path, markers: Path, args: list[str], stdin: str, tty: bool, expected: set[str]
) -> None:
    for runner in (run_safe, run_plain):
        if "a.txt" in args:
            (hostile / "a.txt").unlink()  # checkout must write it back through smudge
        runner(hostile, args, stdin, tty)
        if runner is run_safe:
            assert fired(markers) == []
    assert expected <= set(fired(markers)), "the trap did not fire: the test proves nothing"


def test_stamping_status_divergence_and_snapshot_run_nothing(
    hostile: Path, twin: Path, markers: Path, tmp_path: Path, leaked_env: None
) -> None:
    forest = Forest.open(tmp_path / "forest.db")
    sid = forest.create_session(cwd=hostile)
    entry = forest.append(sid, "user.message", MSG)
    many = forest.append_many(sid, [("assistant.message", MSG, None)])
    divergence = forest.divergence(sid)
    snapshot = forest.snapshot(sid)
    current = forest.current_stamp(sid)
    forest.close()
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "forest.db"), "status", sid])
    assert result.exit_code == 0, result.output
    assert fired(markers) == []
    # The stamp is the hostile repository's own (not GIT_DIR's) and what the
    # twin without hostile config gets: the overrides change nothing else.
    reference = Stamper().stamp(twin)
    assert reference is not None and reference["dirty_files"] == 2
    assert entry.stamp == reference == many[0].stamp == current
    assert divergence.state == snapshot.divergence.state == "match"
    assert "match" in result.output
    assert fired(markers) == []


def test_a_config_change_between_stamps_is_seen(
    hostile: Path, twin: Path, markers: Path, program: Path
) -> None:
    stamper = Stamper()
    first = stamper.stamp(hostile)
    # A new filter driver after the overrides were cached must be blanked too.
    git(hostile, "config", "filter.late.clean", f"{program} late-clean")
    (hostile / ".gitattributes").write_text("*.txt filter=late\n*.dat filter=pr\n*.md diff=tc\n")
    os.utime(hostile / "a.txt", (2_100_000_000, 2_100_000_000))
    second = stamper.stamp(hostile)
    assert fired(markers) == []
    assert first is not None and second is not None and first != second


def test_includes_are_followed_and_watched(tmp_path: Path, markers: Path, program: Path) -> None:
    root = make_repo(tmp_path / "included")
    extra = tmp_path / "extra.gitconfig"
    extra.write_text("[core]\n\tpager = less\n")
    git(root, "config", "include.path", str(extra))
    dirty(root)
    stamper = Stamper()
    assert stamper.stamp(root) is not None
    # The included file now names a filter: the cached overrides must notice.
    extra.write_text(f'[filter "cl"]\n\tclean = {program} included-clean\n')
    os.utime(root / "a.txt", (2_200_000_000, 2_200_000_000))
    assert stamper.stamp(root) is not None
    assert fired(markers) == []


def test_a_repository_owned_by_another_user_is_refused_by_git(
    hostile: Path, markers: Path, tmp_path: Path
) -> None:
    # Tests run as root, who may hand the tree to another uid; git's
    # safe.directory check then refuses it, and we keep that check.
    for path in [hostile, *hostile.rglob("*")]:
        os.lchown(path, 4242, 4242)
    assert stat.S_ISDIR(os.stat(hostile).st_mode) and os.stat(hostile).st_uid == 4242
    forest = Forest.open(tmp_path / "forest.db")
    sid = forest.create_session(cwd=hostile)
    entry = forest.append(sid, "user.message", MSG)
    assert entry.stamp is None
    found = forest.divergence(sid)
    assert found.state == "unknown"
    assert "another user" in found.reason and "safe.directory" in found.reason
    assert fired(markers) == []
    forest.close()
