"""Running git in directories we do not trust: nothing they (or a leaked environment) name runs.

Sessions name directories, and imported transcripts name other people's. A
repository's config can name programs git runs on its own (fsmonitor, clean
filters, hooks, pagers, ssh, credential helpers, textconv...). `SafeGit` runs
git with every such setting overridden in command-line scope, which beats
every config file, and with the caller's GIT_* variables removed.

Filters and diff drivers are named by `.gitattributes`, so their names are
read from the repository's config first (`git config --list`, which runs
nothing) and each program key found is blanked. That read is cached per
repository and redone whenever any config file it came from changes (stat).
Git's own ownership check (`safe.directory`) is kept: a repository owned by
another user is refused by git, and we report that instead of stamping.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# Pinned for every call. The empty value disables a program setting (git
# runs nothing for an empty filter, helper or askpass); ":" is git's "no
# editor"; "cat" is git's "no pager"; protocol.allow=never refuses every
# transport, so a lazy fetch (partial clones) can never reach ssh,
# credential helpers, askpass or a remote helper.
FIXED: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.sshCommand", ""),
    ("core.askPass", ""),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("gpg.program", ""),
    ("protocol.allow", "never"),
)

# (section, variable) of keys under a user-chosen subsection that name a
# program: `filter.<driver>.clean`, `diff.<driver>.textconv`, ... Any found
# in the config is blanked. (A required filter is made optional too, or git
# would refuse to work without the program we just removed.)
PROGRAM_KEYS = {
    ("filter", "clean"),
    ("filter", "smudge"),
    ("filter", "process"),
    ("diff", "textconv"),
    ("diff", "command"),
    ("merge", "driver"),
    ("credential", "helper"),
    ("gpg", "program"),
    ("difftool", "cmd"),
    ("mergetool", "cmd"),
    ("remote", "uploadpack"),
    ("remote", "receivepack"),
}

# Variables the caller's environment may set that redirect or reconfigure git
# (GIT_DIR, GIT_WORK_TREE, GIT_CONFIG_*, GIT_EXEC_PATH, GIT_SSH_COMMAND,
# GIT_PAGER, GIT_EXTERNAL_DIFF, GIT_ASKPASS, ...): every GIT_* goes, plus these.
DROPPED_ENV = ("PAGER", "SSH_ASKPASS")

# LC_ALL=C: messages and sorting independent of locale. GIT_OPTIONAL_LOCKS=0:
# `git status` must never write to the repository (no index refresh).
BASE_ENV = {
    "LC_ALL": "C",
    "LANG": "C",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
}

# Read to learn which programs to blank; `--show-origin` says which files to watch.
CONFIG_ARGS = ("config", "-z", "--list", "--show-origin")
COMMAND_LINE = "command line:"

Stat = tuple[int, int, int, int] | None


class GitRefused(Exception):
    """Internal: git failed, or refused the directory; the message is git's (or ours)."""


class GitTooSlow(GitRefused):
    """Internal: git did not finish within the time it was given (it was killed)."""


@dataclass(frozen=True, slots=True)
class _Overrides:
    pairs: tuple[tuple[str, str], ...]
    watched: tuple[tuple[str, Stat], ...]  # None: never reuse (a branch-dependent include)


def _stat(path: str) -> Stat:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)


def _environment(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_") and key not in DROPPED_ENV
    }
    env.update(BASE_ENV)
    pairs = list(pairs)
    # GIT_CONFIG_KEY_n/VALUE_n rather than `-c k=v`: a subsection may contain
    # "=", which `-c` would split in the wrong place.
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for n, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    return env


def invocation(
    args: Iterable[str], pairs: Iterable[tuple[str, str]] = FIXED
) -> tuple[list[str], dict[str, str]]:
    """The argv and environment `run` uses (tests run them under a terminal too)."""
    return ["git", "--no-pager", *args], _environment(pairs)


def run(
    cwd: str,
    args: Iterable[str],
    pairs: Iterable[tuple[str, str]] = FIXED,
    timeout: float | None = None,
) -> bytes:
    """Run `git --no-pager ARGS` in `cwd` with `pairs` pinned; stdout, or GitRefused
    (GitTooSlow past `timeout` seconds, default 60: git is killed)."""
    argv, env = invocation(args, pairs)
    limit = 60.0 if timeout is None else max(timeout, 0.001)
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
            timeout=limit,
        )
    except subprocess.TimeoutExpired:
        raise GitTooSlow(f"git {argv[2]} took longer than {limit:g} s") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitRefused(str(exc)) from exc
    if done.returncode != 0:
        raise GitRefused(done.stderr.decode(errors="replace").strip())
    return done.stdout


def _global_files() -> list[str]:
    """Config files git reads outside the repository (watched even while absent)."""
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return ["/etc/gitconfig", os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")]


def _include_target(origin_file: str, value: str) -> str:
    path = os.path.expanduser(value)
    return path if os.path.isabs(path) else os.path.join(os.path.dirname(origin_file), path)


def _parse(output: bytes, root: str) -> tuple[list[tuple[str, str]], set[str], bool]:
    """(program keys to blank, files to watch, whether the answer depends on HEAD)."""
    fields = output.split(b"\0")
    blanks: list[tuple[str, str]] = []
    files: set[str] = set()
    saw_command_line = False
    branch_dependent = False
    for origin_raw, entry in zip(fields[0::2], fields[1::2], strict=False):
        origin = origin_raw.decode(errors="surrogateescape")
        name_raw, _, value_raw = entry.partition(b"\n")
        name = name_raw.decode(errors="surrogateescape")
        if origin == COMMAND_LINE:
            saw_command_line = True
            continue
        origin_file = ""
        if origin.startswith("file:"):
            origin_file = os.path.join(root, origin[len("file:") :])
            files.add(origin_file)
        section, _, rest = name.partition(".")
        subsection, _, variable = rest.rpartition(".")
        if section in ("include", "includeif") and variable == "path":
            if section == "includeif" and subsection.startswith("onbranch:"):
                branch_dependent = True
            value = value_raw.decode(errors="surrogateescape")
            files.add(_include_target(origin_file or root, value))
        elif subsection and (section, variable) in PROGRAM_KEYS:
            blanks.append((name, ""))
            if section == "filter":
                blanks.append((f"filter.{subsection}.required", "false"))
    if not saw_command_line:
        # Git older than 2.31 ignores GIT_CONFIG_COUNT: nothing above would be pinned.
        raise GitRefused("git 2.31 or newer is needed to run git safely (GIT_CONFIG_COUNT)")
    return blanks, files, branch_dependent


class SafeGit:
    """Runs git in repositories with every program setting blanked; caches the config read."""

    def __init__(self) -> None:
        self._cache: dict[str, _Overrides] = {}

    def pairs(
        self, root: str, git_dirs: Iterable[str] = (), timeout: float | None = None
    ) -> tuple[tuple[str, str], ...]:
        """FIXED plus a blank for every program key the repository's config names."""
        cached = self._cache.get(root)
        if cached is not None and all(_stat(path) == seen for path, seen in cached.watched):
            return cached.pairs
        candidates = [
            *_global_files(),
            *(os.path.join(d, name) for d in git_dirs for name in ("config", "config.worktree")),
        ]
        # Stat before reading: a change between the two then shows next time.
        before = {path: _stat(path) for path in candidates}
        blanks, files, branch_dependent = _parse(run(root, CONFIG_ARGS, timeout=timeout), root)
        pairs = FIXED + tuple(dict.fromkeys(blanks))
        if branch_dependent:
            self._cache.pop(root, None)
        else:
            watched = {**{path: _stat(path) for path in files}, **before}
            self._cache[root] = _Overrides(pairs, tuple(watched.items()))
        return pairs

    def run(
        self,
        root: str,
        args: Iterable[str],
        git_dirs: Iterable[str] = (),
        deadline: float | None = None,
    ) -> bytes:
        """`run` with this repository's program keys blanked; `deadline` (monotonic) bounds
        both git calls (GitTooSlow)."""
        pairs = self.pairs(root, git_dirs, _left(deadline))
        return run(root, args, pairs, _left(deadline))


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()


def refusal(message: str, directory: str | os.PathLike[str]) -> str:
    """A user-facing reason for a directory git would not stamp."""
    if "dubious ownership" in message:
        return (
            f"{Path(directory)} belongs to another user and git refuses to read it "
            "(git's safe.directory check); nothing was run there"
        )
    return f"{Path(directory)} is not a git repository"
