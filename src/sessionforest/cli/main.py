"""The `forest` command: the group, its global `--db` option and the error boundary.

Every error a command lets escape is turned into one `error: <message>` line on
stderr and an exit code from `EXIT_CODES`, here and nowhere else.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import click

from ..errors import ForestError, HeadMoved, UnknownCheckpoint, UnknownEntry, UnknownSession
from . import admin, entries, io, search, sessions, status
from .common import State

# Looked up along the exception's MRO, so the most specific class wins.
EXIT_CODES: dict[type[BaseException], int] = {
    ForestError: 1,
    click.ClickException: 1,
    sqlite3.Error: 1,  # the environment: a locked, read-only or full database
    click.UsageError: 2,
    UnknownSession: 3,
    UnknownEntry: 3,
    UnknownCheckpoint: 3,
    HeadMoved: 4,
}


def exit_code_for(exc: BaseException) -> int:
    for cls in type(exc).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return 1


def _message(exc: BaseException) -> str:
    if isinstance(exc, click.UsageError):
        text = exc.format_message().rstrip(".")
        if exc.ctx is not None:
            text += f" (see '{exc.ctx.command_path} --help')"
        return text
    if isinstance(exc, click.ClickException):
        return exc.format_message()
    if isinstance(exc, sqlite3.Error):
        return f"database error: {exc}"
    return str(exc)


@contextmanager
def _converted() -> Iterator[None]:
    try:
        yield
    except (ForestError, click.ClickException, sqlite3.Error) as exc:
        # Flattened: a message is one line even if some day one has a newline.
        click.echo("error: " + " ".join(_message(exc).split()), err=True)
        # Exit, not a ClickException: click's main exits with it and prints nothing more.
        raise click.exceptions.Exit(exit_code_for(exc)) from exc


class ForestGroup(click.Group):
    """A group whose parsing and invocation errors pass through `_converted`.

    Parsing the group's own options happens in `make_context`, a subcommand's
    (and running it) in `invoke`; the two overrides cover every error path.
    """

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        with _converted():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with _converted():
            return super().invoke(ctx)


@click.group("forest", cls=ForestGroup)
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    help="SQLite store to use (default: $FOREST_DB, else forest.db in the user data dir).",
)
@click.version_option(package_name="sessionforest", prog_name="forest")
@click.pass_context
def cli(ctx: click.Context, db: Path | None) -> None:
    """Durable, branchable AI-agent conversation history.

    Start with `forest demo` to build and draw a sample session.
    """
    state = State(db)
    ctx.obj = state
    ctx.call_on_close(state.close)


cli.add_command(sessions.new)
cli.add_command(sessions.sessions)
cli.add_command(entries.append)
cli.add_command(entries.seek)
cli.add_command(entries.checkpoint)
cli.add_command(entries.seek_checkpoint)
cli.add_command(entries.log)
cli.add_command(entries.tree)
cli.add_command(entries.tips)
cli.add_command(status.status)
cli.add_command(io.export)
cli.add_command(io.import_group)
cli.add_command(admin.check)
cli.add_command(admin.repair)
cli.add_command(admin.demo)
for command in (search.recall, search.find, search.end, search.archive):
    cli.add_command(command)


def main(args: Sequence[str] | None = None) -> NoReturn:
    """The console-script entry point (`forest = sessionforest.cli.main:main`)."""
    cli.main(args=args, prog_name="forest")
