"""`forest hooks install|uninstall|status` and `forest hook claude-code` (the hook itself).

Thin over mirror/hooks.py. `forest hook claude-code` is what Claude Code runs:
it reads the hook's JSON on stdin, imports that transcript incrementally,
prints nothing and exits 0 whatever happened (the log says what did).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..mirror import hooks
from ..render import escape
from ..text import plural
from .common import State, emit_json, json_option, pass_state

HARNESSES = ("claude-code",)
F = TypeVar("F", bound=Callable[..., Any])


def _settings(project: Path | None) -> Path:
    return hooks.settings_path(project)


def _store(state: State) -> str | None:
    """The store the hook will write to, as install was given it (absolute)."""
    import os

    given = state.db if state.db is not None else os.environ.get("FOREST_DB") or None
    if given is None:
        return None
    text = str(given)
    return text if "://" in text else str(Path(text).expanduser().absolute())


def _where(f: F) -> F:
    f = click.option(
        "--project",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="The project directory whose .claude/settings.json to change.",
    )(f)
    return click.option(
        "--user",
        is_flag=True,
        help="The user's ~/.claude/settings.json (the default).",
    )(f)


@click.group("hooks")
def hooks_group() -> None:
    """Install or remove the hooks that mirror a harness's chats as they happen."""


@hooks_group.command("install")
@click.argument("harness", type=click.Choice(HARNESSES))
@_where
@json_option
@pass_state
def install(state: State, harness: str, user: bool, project: Path | None, as_json: bool) -> None:
    """Add HARNESS's hooks (Stop, SubagentStop, PreCompact, SessionEnd) to its
    settings.json, beside the hooks there; each turn is then imported into the
    store given by --db or FOREST_DB (else the default store) as it ends."""
    if user and project is not None:
        raise click.UsageError("give --user or --project, not both")
    path = _settings(project)
    command = hooks.hook_command(_store(state))
    events = hooks.install(path, command)
    if as_json:
        emit_json({"settings": str(path), "events": events, "command": command})
        return
    click.echo(escape(f"installed the {harness} hooks ({', '.join(events)}) in {path}"))
    click.echo(escape(f"  command: {command}"))


@hooks_group.command("uninstall")
@click.argument("harness", type=click.Choice(HARNESSES))
@_where
@json_option
def uninstall(harness: str, user: bool, project: Path | None, as_json: bool) -> None:
    """Remove exactly the hooks `forest hooks install` added (other hooks stay)."""
    if user and project is not None:
        raise click.UsageError("give --user or --project, not both")
    path = _settings(project)
    events = hooks.uninstall(path)
    if as_json:
        emit_json({"settings": str(path), "events": events})
    elif events:
        click.echo(escape(f"removed the {harness} hooks ({', '.join(events)}) from {path}"))
    else:
        click.echo(escape(f"no {harness} hooks of sessionforest in {path}"))


@hooks_group.command("status")
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also look at this project's .claude/settings.json (default: the current one).",
)
@json_option
def status(project: Path | None, as_json: bool) -> None:
    """Say where the hooks are installed, what the last runs did and their last errors."""
    places = {"user": _settings(None), "project": _settings(project or Path.cwd())}
    found = {name: hooks.installed(path) for name, path in places.items()}
    runs = hooks.runs()
    errors = [r for r in runs if not r.ok][-5:]
    last = runs[-1] if runs else None
    if as_json:
        emit_json(
            {
                "settings": {
                    name: {
                        "path": str(places[name]),
                        "events": sorted(events),
                        "commands": sorted(set(events.values())),
                    }
                    for name, events in found.items()
                },
                "log": str(hooks.log_path()),
                "last_run": last.to_json() if last is not None else None,
                "errors": [r.to_json() for r in errors],
            }
        )
        return
    for name, events in found.items():
        where = places[name]
        if events:
            commands = ", ".join(sorted(set(events.values())))
            click.echo(escape(f"{name}: {', '.join(sorted(events))} in {where}: {commands}"))
        else:
            click.echo(escape(f"{name}: not installed ({where})"))
    if last is None:
        click.echo(escape(f"no hook has run yet (log: {hooks.log_path()})"))
    else:
        state = "ok" if last.ok else "failed"
        click.echo(
            escape(
                f"last run {last.at}: {last.event} of {last.session_id or '?'}, {state}, "
                f"+{plural(last.added, 'entry', 'entries')} in {last.seconds:.2f} s"
            )
        )
    for run in errors:
        click.echo(escape(f"error {run.at} {run.event} {run.session_id}: {run.error}"))


@click.group("hook")
def hook_group() -> None:
    """What a harness's hook runs (installed by `forest hooks install`)."""


@hook_group.command("claude-code")
@pass_state
def claude_code(state: State) -> None:
    """Import the transcript a Claude Code hook names (its JSON on stdin), from where
    its last import stopped. Prints nothing and exits 0 even when it fails: the
    failure is logged where `forest hooks status` finds it."""
    hooks.run(sys.stdin.buffer.read(), state.db)
