"""File commands: `forest export` writes native JSONL, `forest import <format>` reads it.

`import` is a group with one subcommand per format (`jsonl` today), so later
importers slot in beside it without changing what existing scripts type.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import click

from .common import State, emit_json, json_option, pass_state


def _export_to_file(state: State, session: str, output: Path) -> int:
    """Write through a temporary file so a failed export never leaves a partial one."""
    forest = state.forest
    forest.session(session)  # an unknown session fails before any file is made
    try:
        fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.", suffix=".tmp")
    except OSError as exc:
        raise click.ClickException(f"cannot write {output}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            count = forest.export_jsonl(session, handle)
        os.replace(tmp, output)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


@click.command()
@click.argument("session")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="Write to this file instead of stdout.",
)
@pass_state
def export(state: State, session: str, output: Path | None) -> None:
    """Export SESSION, every branch, as native JSONL."""
    if output is None or str(output) == "-":
        state.forest.export_jsonl(session, sys.stdout)
        return
    count = _export_to_file(state, session, output)
    # stderr: the file is the result; stdout stays free for scripts.
    click.echo(f"exported {count} entries to {output}", err=True)


@click.group("import")
def import_group() -> None:
    """Import a session from a file (one subcommand per format)."""


@import_group.command("jsonl")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option
@pass_state
def import_jsonl(state: State, file: Path, as_json: bool) -> None:
    """Import one native JSONL session (as written by `forest export`); all or nothing."""
    sid = state.forest.import_jsonl(file)
    if as_json:
        emit_json({"id": sid})
    else:
        click.echo(sid)
