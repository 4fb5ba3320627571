"""Which CLI versions a hand-off was tested with, and the check before anything is written.

A transcript is written with the fields the resume needs as the pinned CLI
writes them (tests/tools pins the versions; tests/resume runs them). An
installed CLI of another major version (for 0.x, another minor: semver's
breaking step) may read other fields, so `check` refuses before writing
unless the caller overrides it; a CLI not on PATH is not checked (the
transcript is written for the pinned version, and the command says which).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ResumeRefused

# target -> (the CLI's command, the version tests/tools pins and tests/resume runs)
PINNED: dict[str, tuple[str, str]] = {
    "claude-code": ("claude", "2.1.197"),
    "codex": ("codex", "0.171.0"),
    "gemini": ("gemini", "0.61.0"),
}
VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
TIMEOUT = 30.0  # seconds a `--version` may take (node CLIs start slowly on a busy machine)


@dataclass(frozen=True, slots=True)
class Installed:
    """What the check found: the CLI's path and version (None: not on PATH)."""

    command: str
    path: str | None
    version: str | None
    tested: str

    @property
    def writes(self) -> str:
        """The version the transcript says wrote it: the installed one when tested."""
        return self.version or self.tested


def step(version: str) -> tuple[int, ...]:
    """The part of a version that breaks compatibility: the major, or 0.minor."""
    found = VERSION.search(version)
    if found is None:
        return ()
    major, minor = int(found[1]), int(found[2])
    return (major,) if major > 0 else (0, minor)


def check(target: str, env: Mapping[str, str], *, any_version: bool = False) -> Installed:
    """The installed CLI of `target`, refused (ResumeRefused) when its version is of an
    untested major (module docstring) and `any_version` is not set."""
    command, tested = PINNED[target]
    path = shutil.which(command, path=env.get("PATH", os.defpath))
    if path is None:
        return Installed(command, None, None, tested)
    try:
        done = subprocess.run(
            [path, "--version"],
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ResumeRefused(target, f"{path} --version", str(exc)) from None
    found = VERSION.search(done.stdout + done.stderr)
    if found is None:
        if any_version:
            return Installed(command, path, None, tested)
        raise ResumeRefused(
            target,
            f"{path} --version",
            f"printed no version ({(done.stdout + done.stderr).strip()[:80]!r}); "
            "--any-version writes for the tested one anyway",
        )
    version = found[0]
    if step(version) != step(tested) and not any_version:
        raise ResumeRefused(
            target,
            f"{command} {version} at {path}",
            f"only {command} {tested} (and its major version) was tested; --any-version "
            "writes the transcript anyway",
        )
    return Installed(command, path, version, tested)
