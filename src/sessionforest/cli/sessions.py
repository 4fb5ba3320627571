"""Session commands: `forest new` creates a session, `forest sessions` lists them,
`forest rename` gives one the user's own title, `forest bind` a directory to stamp.

The listing is plain aligned columns rather than a rich table: rich cuts ids
(the thing users copy) to fit the terminal, and a pipe gets no box drawing.
Every cell is escaped, so a title holding a newline or ESC stays in its row.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from ..errors import InvalidArgument
from ..model import SessionInfo
from ..text import escape
from .common import State, emit_json, json_option, pass_state

COLUMNS = ("ID", "STATUS", "ENTRIES", "UPDATED", "HARNESS", "TITLE")


def _row(info: SessionInfo) -> tuple[str, ...]:
    status = "quarantined" if info.quarantine is not None else info.status
    cells = (info.id, status, str(info.entry_count), info.updated_at, info.harness, info.title)
    return tuple(map(escape, cells))


def plain_table(infos: Sequence[SessionInfo]) -> list[str]:
    """Space-aligned columns; the title comes last so it never needs cutting."""
    rows = [COLUMNS, *(_row(info) for info in infos)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS) - 1)]
    return [
        "  ".join(
            [*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]]
        ).rstrip()
        for row in rows
    ]


@click.command()
@click.option("--title", default="", help="A human title for the session.")
@click.option("--harness", default="", help="The agent harness that drives it (display only).")
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, resolve_path=True, path_type=Path),
    help="The working directory the session belongs to.",
)
@json_option
@pass_state
def new(state: State, title: str, harness: str, cwd: Path | None, as_json: bool) -> None:
    """Create an empty session and print its id (--json: the session as `sessions` lists it)."""
    sid = state.creator.create_session(title, harness, cwd)
    if as_json:
        emit_json(state.forest.session(sid).to_json())
    else:
        click.echo(sid)


@click.command()
@click.argument("session")
@click.argument("title")
@json_option
@pass_state
def rename(state: State, session: str, title: str, as_json: bool) -> None:
    """Give SESSION your own TITLE; prints `ID TITLE` (--json: the session as listed).

    The title is yours: importing the chat's source again (`forest import`,
    the watcher) keeps it instead of the harness's title or first request.
    It is one line of at most 200 characters and shows wherever titles do
    (`forest sessions`, `forest find`, the web UI).
    """
    forest = state.forest
    info = forest.rename(forest.resolve_session(session), title)
    if as_json:
        emit_json(info.to_json())
    else:
        click.echo(escape(f"{info.id} {info.title}"))


@click.command()
@click.option("--all", "show_all", is_flag=True, help="Include hidden (worker) sessions.")
@json_option
@pass_state
def sessions(state: State, show_all: bool, as_json: bool) -> None:
    """List sessions, most recently active first.

    Sorted by the UPDATED column (the newest entry's append, else creation;
    moving the head is not activity), newest at the top: the order the web UI's
    sidebar uses. --json lists them in the same order.
    """
    infos = state.reader.sessions(include_hidden=show_all, order="updated")
    if as_json:
        emit_json([info.to_json() for info in infos])
    elif not infos:
        click.echo(
            "no sessions yet: `forest new` creates one, `forest demo` builds a sample", err=True
        )
    else:
        header, *rows = plain_table(infos)
        click.echo(click.style(header, bold=True))  # plain when piped: click strips styles
        for line in rows:
            click.echo(line)


@click.command()
@click.argument("session")
@click.argument(
    "directory",
    required=False,
    type=click.Path(exists=True, file_okay=False, resolve_path=True, path_type=Path),
)
@json_option
@pass_state
def bind(state: State, session: str, directory: Path | None, as_json: bool) -> None:
    """Bind SESSION to DIRECTORY (default: where an imported chat was recorded).

    Appends to a bound session are stamped with that directory's git state
    and `forest status` compares against it. Imported chats start unbound:
    git never runs in a directory a transcript names until you bind it. A
    bound directory never changes.
    """
    forest = state.forest
    session = forest.resolve_session(session)
    if directory is None:
        origin = forest.session(session).origin_cwd
        if origin is None:
            raise InvalidArgument(
                "directory", f"session {session} has no recorded directory; name one"
            )
        directory = Path(origin)
    info = forest.bind(session, directory)
    if as_json:
        emit_json(info.to_json())
    else:
        click.echo(f"{session} bound to {info.cwd}")
