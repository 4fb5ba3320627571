"""`forest resume`: hand a branch of any chat to Claude Code, Codex or Gemini CLI.

`resume` writes the path from the root to an entry (default: the head) as a
NEW transcript where the target harness looks for its sessions, one module
per target (claude_code.py, codex.py, gemini.py, over the harness-neutral
turns of path.py), and records the hand-off in the store, so importing that
transcript later (or following it live) joins the harness's new turns under
the entry instead of copying the shared history (io/handoff.py). Nothing a
harness wrote is touched; every hand-off is a new session id. The installed
CLI's version is checked first (versions.py).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypedDict

from ..errors import EmptySession, InvalidArgument, ResumeRefused
from ..ids import Clock, iso, utc_now
from ..io.handoff import Plan
from ..store.base import Handoff
from . import claude_code, codex, gemini, versions
from .path import Folded, turns

if TYPE_CHECKING:
    from ..forest import Forest

__all__ = ["TARGETS", "Resumed", "resume"]

_MODULES = {"claude-code": claude_code, "codex": codex, "gemini": gemini}
TARGETS = tuple(_MODULES)


class Resumed(TypedDict):
    """What `forest resume --json` prints and `sessions/resume` answers."""

    session_id: str  # the chat handed off
    entry_id: str  # the entry the new transcript continues
    target: str
    path: str  # the transcript written
    id: str  # the harness's id of the new session
    cwd: str  # where the command runs
    command: str  # the one command that continues it (with `cd` when cwd is elsewhere)
    argv: list[str]  # that command without the `cd`, to run in `cwd`
    version: str  # the CLI version the transcript is written for
    installed: str | None  # the installed CLI's version (None: not on PATH)
    turns: int  # messages written
    folded: list[str]  # what was folded into text or left out, counted
    notes: list[str]  # what the hand-off chose for the user (a working directory not found)


def resume(
    forest: Forest,
    session: str,
    *,
    to: str,
    at: str | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    any_version: bool = False,
    clock: Clock | None = None,
    here: str | None = None,
) -> Resumed:
    """Write the path to `at` (default: the head) of `session` as a new `to` transcript
    and record the hand-off (module docstring). `cwd`: the directory the harness runs
    in (default: the chat's own, else `here`, the current directory); `env`: where
    HOME and the harnesses' variables are read (default: os.environ).

    Refused before anything is written: an unknown session or entry (UnknownSession,
    UnknownEntry), an empty chat (EmptySession), an unknown target (InvalidArgument),
    a read-only store, an untested CLI version or a folder that cannot be written
    (ResumeRefused)."""
    module = _MODULES.get(to)
    if module is None:
        raise InvalidArgument("target", f"expected one of {', '.join(TARGETS)}; got {to!r}")
    env = os.environ if env is None else env
    session_id = forest.resolve_session(session)
    entry_id = forest.resolve_entry(session_id, at) if at else forest.head(session_id)
    if entry_id is None:
        raise EmptySession(session_id)
    if forest.readonly_why is not None:
        raise ResumeRefused(to, f"store {forest.location}", f"read-only ({forest.readonly_why})")
    info = forest.session(session_id)
    directory, notes = _directory(to, cwd, info.cwd or info.origin_cwd, here)
    if str(info.visibility) == "hidden":
        notes.append(_worker_note(forest, session_id))
    installed = versions.check(to, env, any_version=any_version)
    path = forest.path_to(session_id, entry_id)
    folded = Folded()
    messages = turns(path, module.CAN, folded)
    if not messages:
        raise ResumeRefused(to, f"entry {entry_id}", "its path holds no message to resend")
    when = {e.id: e.created_at for e in path}
    times = [when[t.entries[-1]] for t in messages]
    written = module.write(
        messages, times, cwd=directory, version=installed.writes, env=env,
    )  # fmt: skip
    # The last line stands for the entry itself: what the harness writes next continues it.
    lines = dict(written.lines)
    lines[written.prefix] = entry_id
    now = iso((clock or utc_now)())
    forest.keep_handoff(
        Handoff(
            written.format, written.source_id, session_id, entry_id, str(written.path), to,
            Plan(written.prefix, lines).to_text(), now,
        )
    )  # fmt: skip
    command = shlex.join(written.argv)
    if directory != os.path.abspath(here or os.getcwd()):
        command = f"cd {shlex.quote(directory)} && {command}"
    return Resumed(
        session_id=session_id,
        entry_id=entry_id,
        target=to,
        path=str(written.path),
        id=written.new_id,
        cwd=directory,
        command=command,
        argv=written.argv,
        version=installed.writes,
        installed=installed.version,
        turns=len(messages),
        folded=folded.lines(),
        notes=notes,
    )


def _worker_note(forest: Forest, session_id: str) -> str:
    """What a hand-off of a hidden worker chat (a sub-agent's) does: its own path (the task
    it was given, its work) becomes a session of its own in the target, the orchestrator's
    turns not in it; imported back, the new turns join the worker chat, which stays a
    hidden worker of its parent."""
    agent = forest.agent_for_session(session_id)
    parent = forest.agent(agent.parent_id).session_id if agent and agent.parent_id else None
    of = f" of chat {parent}" if parent else ""
    return (
        f"{session_id} is a hidden worker chat{of}: its own task and work are continued as "
        "a session of their own (its orchestrator's turns are not in it); imported back, "
        "the new turns join the worker chat (forest sessions --all lists it)"
    )


def _directory(
    to: str, cwd: str | None, recorded: str | None, here: str | None
) -> tuple[str, list[str]]:
    """Where the harness runs: `cwd` (it must be a directory), else the chat's own when
    it is on this machine, else the current directory (and a note says so)."""
    current = os.path.abspath(here or os.getcwd())
    if cwd is not None:
        directory = os.path.abspath(cwd)
        if not os.path.isdir(directory):
            why = "is not a directory" if os.path.exists(directory) else "does not exist"
            raise ResumeRefused(to, f"--cwd {directory}", why)
        return directory, []
    if recorded is None:
        return current, []
    if os.path.isdir(recorded):
        return os.path.abspath(recorded), []
    note = (
        f"the chat ran in {recorded}, which is not a directory on this machine: "
        f"continuing in the current directory, {current} (--cwd chooses another)"
    )
    return current, [note]
