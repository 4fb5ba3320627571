"""File commands: `forest export` writes sessions out, `forest import <format>` reads them in.

`export` takes a session (`--format native|yoagent`) or the `gasp` subcommand;
`import` has one subcommand per format (claude-code, chatgpt, pi, yoagent,
jsonl). Imports draw a rich progress bar on a terminal and end with a summary.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

import click

from .. import Forest
from ..errors import ForestError
from ..io.claude_code import DEFAULT_ROOT
from ..io.sources import HARNESSES, Harness
from ..model import ImportReport
from ..render import escape, plural
from .common import State, emit_json, json_option, pass_state, store_location

F = TypeVar("F", bound=Callable[..., Any])
PROGRESS_FROM = 1 << 20  # imports smaller than this finish before a bar is worth drawing


def _to_file(output: Path, write: Callable[[IO[str]], Any]) -> Any:
    """Write through a temporary file so a failed export never leaves a partial one."""
    try:
        fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.", suffix=".tmp")
    except OSError as exc:
        raise click.ClickException(f"cannot write {output}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            result = write(handle)
        os.replace(tmp, output)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return result


class _ExportGroup(click.Group):
    """`forest export SESSION ...` runs the `session` subcommand: anything that is not a
    subcommand name is a session id (`forest export session gasp` exports one named gasp)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ctx.help_option_names):
            args = ["session", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_ExportGroup)
def export() -> None:
    """Export a session: `forest export SESSION` or `forest export gasp SESSION DIR`."""


@export.command("session")
@click.argument("session")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["native", "yoagent"]),
    default="native",
    show_default=True,
    help="native: every branch, exactly; yoagent: the active tree as yoagent's Session writes it.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="Write to this file instead of stdout.",
)
@pass_state
def export_session(state: State, session: str, fmt: str, output: Path | None) -> None:
    """Export SESSION as native JSONL (default) or yoagent JSONL."""
    forest = state.reader
    session = forest.resolve_session(session)
    forest.session(session)  # an unknown session fails before any file is made
    if fmt == "native":

        def write(out: IO[str]) -> str:
            return plural(forest.export_jsonl(session, out), "entry", "entries")

    else:

        def write(out: IO[str]) -> str:
            lines, left_out = forest.export_yoagent(session, out)
            if not left_out:
                return plural(lines, "message")
            below = plural(left_out, "entry", "entries")
            return f"{plural(lines, 'message')} ({below} below the head left out)"

    if output is None or str(output) == "-":
        write(sys.stdout)
        return
    what = _to_file(output, write)
    # stderr: the file is the result; stdout stays free for scripts.
    click.echo(escape(f"exported {what} to {output}"), err=True)


@export.command("gasp")
@click.argument("session")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--run-id", help="Name of the transcript file (default: the session id).")
@json_option
@pass_state
def export_gasp(
    state: State, session: str, directory: Path, run_id: str | None, as_json: bool
) -> None:
    """Write DIRECTORY/transcripts/<run-id>.jsonl.gz (GASP) and print its sha256."""
    forest = state.reader
    transcript = forest.export_gasp(forest.resolve_session(session), directory, run_id)
    if as_json:
        emit_json(transcript.to_json())
    else:
        # sha256sum's format: `cd DIRECTORY && sha256sum -c` checks it.
        click.echo(escape(f"{transcript.sha256}  {transcript.relative}"))


@click.group("import", invoke_without_command=True)
@click.option(
    "--skip-bad", is_flag=True, help="Skip (and report) bad lines instead of failing their chat."
)
@json_option
@click.pass_context
def import_group(ctx: click.Context, skip_bad: bool, as_json: bool) -> None:
    """Import chats from files other tools wrote (one subcommand per format).

    With no format: everything `forest sources` finds on this machine, each
    harness from where it keeps its history; run it again to bring in only
    what is new. Each chat is imported on its own: one that fails is not
    imported, the others are, and the command ends by naming each failure and
    exits 1.
    """
    if ctx.invoked_subcommand is not None:
        return
    state = ctx.find_object(State)
    assert state is not None
    with _bar() as bar:
        reports = state.creator.import_everything(skip_bad=skip_bad, progress=bar)
    if as_json:
        emit_json([r.to_json() for r in reports])
    else:
        if not reports:
            click.echo(
                "no harness history found on this machine (forest sources lists where it looks)"
            )
        for report in reports:
            click.echo(escape(f"{report.format}: imported {report.summary()}"))
            for note in report.notes:
                click.echo(escape(f"note: {note}"), err=True)
    failed = [f for r in reports for f in r.failed]
    for failure in failed:
        click.echo(escape(f"error: {failure}"), err=True)
    if failed:
        raise click.exceptions.Exit(1)


@click.command("sources")
@json_option
@pass_state
def sources(state: State, as_json: bool) -> None:
    """List every harness location found on this machine (the harnesses' own variables
    first: CODEX_HOME, CLAUDE_CONFIG_DIR, XDG_DATA_HOME, ..., then their defaults), with
    file and chat counts and what is new since the last import."""
    try:
        found = state.reader.sources()
    except ForestError:  # no store yet: everything is new
        from ..io.sources import find

        found = find({})
    if as_json:
        emit_json([location.to_json() for location in found])
        return
    if not found:
        click.echo("no harness history found on this machine")
        return
    for location in found:
        data = location.to_json()
        where = f"{data['path']} ({data['from']})"
        counts = (
            f"{plural(data['files'], 'file')}, {plural(data['chats'], 'chat')}; "
            f"{data['new']} new, {data['changed']} changed since the last import"
        )
        click.echo(escape(f"{data['name']:<12} {where}"))
        click.echo(escape(f"{'':<12} {counts}"))


class _Bar:
    """The rich progress bar on stderr, drawn only on a terminal and for long imports."""

    def __init__(self) -> None:
        self._progress: Any = None
        self._task: Any = None

    def begin(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        console = Console(stderr=True)
        if total < PROGRESS_FROM or not console.is_terminal:
            return
        self._progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._progress.start()
        self._task = self._progress.add_task("importing", total=total)

    def advance(self, done: int) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, done)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


@contextmanager
def _bar() -> Iterator[_Bar]:
    bar = _Bar()
    try:
        yield bar
    finally:
        bar.close()


def _show(report: ImportReport, as_json: bool) -> None:
    """What was imported (stdout), then notes and each failure (stderr); exit 1 if any failed.

    With `--json` the report (its `failed` list included) is the one document on
    stdout, and the failures are still on stderr, as every command's errors are.
    """
    if as_json:
        emit_json(report.to_json())
    else:
        click.echo(f"imported {report.summary()}")
        for skipped in report.skipped:
            click.echo(escape(f"skipped {skipped}"))
        for note in report.notes:
            click.echo(escape(f"note: {note}"), err=True)
    for failure in report.failed:
        click.echo(escape(f"error: {failure}"), err=True)
    if report.failed and (report.chats or len(report.failed) > 1):
        click.echo(
            f"error: {plural(len(report.failed), 'chat')} failed (listed above); "
            "everything else was imported",
            err=True,
        )
    if report.failed:
        raise click.exceptions.Exit(1)


def _run(state: State, fmt: str, path: Path, skip_bad: bool, as_json: bool) -> None:
    with _bar() as bar:
        report = state.creator.import_chats(fmt, path, skip_bad=skip_bad, progress=bar)
    _show(report, as_json)


def import_options(fn: F) -> F:
    """`--skip-bad` and `--json`, shared by every format."""
    fn = click.option(
        "--skip-bad",
        is_flag=True,
        help="Skip (and report) bad lines instead of failing their chat.",
    )(fn)
    return json_option(fn)


_EXISTING = click.Path(exists=True, path_type=Path)
_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


@import_group.command("claude-code")
@click.argument("directory", required=False, type=_EXISTING)
@import_options
@pass_state
def import_claude_code(state: State, directory: Path | None, skip_bad: bool, as_json: bool) -> None:
    """Import Claude Code transcripts (DIRECTORY defaults to ~/.claude/projects)."""
    if directory is None:
        directory = DEFAULT_ROOT.expanduser()
        if not directory.is_dir():
            raise click.UsageError(f"no Claude Code transcripts at {directory}; name a directory")
    _run(state, "claude-code", directory, skip_bad, as_json)


def _harness_command(harness: Harness) -> None:
    """`forest import NAME [PATH]`: PATH a file or a directory, defaulting to where the
    harness keeps its history (the first location `forest sources` finds)."""

    @import_group.command(
        harness.name,
        help=f"Import {harness.what} (PATH: a file or a directory; default: where "
        "the harness keeps them, as `forest sources` lists).",
    )
    @click.argument("path", required=False, type=_EXISTING)
    @import_options
    @pass_state
    def command(state: State, path: Path | None, skip_bad: bool, as_json: bool) -> None:
        if path is None:
            found = [p for p, _ in harness.roots() if p.exists()]
            if not found:
                where = ", ".join(str(p) for p, _ in harness.roots())
                raise click.UsageError(f"no {harness.what} at {where}; name a file or a directory")
            path = found[0]
        _run(state, harness.format, path, skip_bad, as_json)


@import_group.command("chatgpt")
@click.argument("file", type=_FILE)
@import_options
@pass_state
def import_chatgpt(state: State, file: Path, skip_bad: bool, as_json: bool) -> None:
    """Import a ChatGPT export: conversations.json, one conversation, or the export .zip."""
    _run(state, "chatgpt", file, skip_bad, as_json)


@import_group.command("pi")
@click.argument("path", type=_EXISTING)
@import_options
@pass_state
def import_pi(state: State, path: Path, skip_bad: bool, as_json: bool) -> None:
    """Import pi coding-agent sessions (one .jsonl file or a directory of them)."""
    _run(state, "pi", path, skip_bad, as_json)


@import_group.command("yoagent")
@click.argument("file", type=_FILE)
@import_options
@pass_state
def import_yoagent(state: State, file: Path, skip_bad: bool, as_json: bool) -> None:
    """Import a yoagent Session JSONL file (as `Session::to_jsonl` writes it)."""
    _run(state, "yoagent", file, skip_bad, as_json)


@import_group.command("jsonl")
@click.argument("file", type=_FILE)
@json_option
@pass_state
def import_jsonl(state: State, file: Path, as_json: bool) -> None:
    """Import one native JSONL session (as written by `forest export`); all or nothing.

    Prints the session's id (--json: the session as `sessions` lists it).
    """
    sid = state.creator.import_native(file).id
    if as_json:
        emit_json(state.forest.session(sid).to_json())
    else:
        click.echo(escape(sid))


@click.command("copy")
@click.option(
    "--from",
    "source",
    required=True,
    callback=store_location,
    metavar="PATH|URL",
    help="The store to copy from (opened read-only).",
)
@click.option(
    "--to",
    "target",
    required=True,
    callback=store_location,
    metavar="PATH|URL",
    help="The store to copy into (created if need be).",
)
@json_option
def copy(source: Path | str, target: Path | str, as_json: bool) -> None:
    """Copy every session from one store into another: SQLite and PostgreSQL either way.

    One transaction per session; sessions the target already holds are not
    written again. Every session is then counted and hashed on both sides;
    exits 1 naming each one that differs. Quarantined sessions are not copied.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with contextlib.ExitStack() as stack:
        src = Forest.open(source, readonly=True)
        stack.callback(src.close)
        dst = Forest.open(target)
        stack.callback(dst.close)
        console = Console(stderr=True)
        bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        )
        with bar:
            task = bar.add_task("copying sessions", total=None)

            def advance(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            report = src.copy_to(dst, progress=advance)
        if as_json:
            emit_json(report.to_json())
        else:
            click.echo(
                f"copied {plural(len(report.copied), 'session')} "
                f"({plural(report.entries, 'entry', 'entries')}) from {src.location} to "
                f"{dst.location}; {len(report.present)} already there; "
                f"verified {plural(report.verified, 'session')} on both sides"
            )
        for sid in report.quarantined:
            click.echo(f"skipped quarantined session {sid} (forest check, repair)", err=True)
        for sid in report.mismatched:
            click.echo(f"error: session {sid} differs between the two stores", err=True)
        if not report.ok:
            raise SystemExit(1)


for _harness in HARNESSES:
    if _harness.name not in import_group.commands:
        _harness_command(_harness)
