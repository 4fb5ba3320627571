"""`forest watch`: follow every agent's transcripts into the store as they are written.

Thin over mirror/watcher.py: which locations (every harness's default, or
those given), one line per change on stdout (`--json`: JSON lines), and a
clean stop: SIGINT or SIGTERM lets the file being imported finish (its
transactions commit or roll back whole) and exits 0.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import click
import orjson

from ..io.importers import FORMATS
from ..mirror.sources import Location, default_locations, location_for
from ..mirror.watcher import Change, Watcher
from .common import State, pass_state


def locations_of(paths: tuple[Path, ...], fmt: str | None) -> list[Location]:
    """The locations a command line names (none: every harness's default place)."""
    known = default_locations()
    if not paths:
        return known
    return [location_for(path, fmt, known) for path in paths]


def _printer(as_json: bool) -> Callable[[Change], None]:
    def emit(change: Change) -> None:
        if as_json:
            sys.stdout.write(orjson.dumps(change.to_json()).decode() + "\n")
        else:
            sys.stdout.write(change.line() + "\n")
        sys.stdout.flush()  # a line as it happens, even into a pipe

    return emit


@click.command("watch")
@click.argument("locations", nargs=-1, type=click.Path(path_type=Path), metavar="[LOCATION]...")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="The format of every LOCATION given (default: the harness whose transcripts it lies in).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per change.")
@pass_state
def watch(state: State, locations: tuple[Path, ...], fmt: str | None, as_json: bool) -> None:
    """Follow agent transcripts into the store as they are written.

    With no LOCATION, every harness's transcripts at their default place
    (~/.claude/projects, ~/.codex/sessions, ...; a place that does not exist
    yet is followed once it does). Catches up on what changed since the last
    run first, then imports each change as the system reports it: a file that
    grew from where its import stopped (whole lines only), a rewritten one
    read again, a new one as a new chat. Prints one line per chat changed.
    Ctrl-C or SIGTERM finishes the file being imported and exits 0.
    """
    where = locations_of(locations, fmt)
    forest = state.creator
    forest.maintain()  # a backlog of index and vectors from before is worked off too
    stop = threading.Event()

    def stopping(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, stopping) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        shown = ", ".join(f"{loc.format} {loc.root}" for loc in where)
        click.echo(f"watching {shown} into {forest.location} (Ctrl-C stops)", err=True)
        Watcher(forest, where, _printer(as_json)).run(stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
