"""`forest status`: does the conversation still match the files on disk?

Compares the selected entry's worktree stamp (default: the head's) with the
session directory's git state now: match, diverged (HEAD, dirty state or
both) or unknown (no stamp, no directory, not a repository).
"""

from __future__ import annotations

import click

from ..render import escape
from .common import State, emit_json, json_option, pass_state, resolve_entry


@click.command()
@click.argument("session")
@click.option(
    "--entry",
    "entry_ref",
    metavar="ENTRY",
    help="Entry to compare (id, id prefix or sequence number; default: the head).",
)
@json_option
@pass_state
def status(state: State, session: str, entry_ref: str | None, as_json: bool) -> None:
    """Say whether SESSION's conversation and its worktree have diverged."""
    forest = state.reader
    sid = forest.resolve_session(session)
    entry = resolve_entry(forest, sid, entry_ref) if entry_ref else None
    snapshot = forest.snapshot(sid, entry)
    found = snapshot.divergence
    if as_json:
        emit_json(
            {"session_id": sid, "entry": snapshot.selected, "head": snapshot.head} | found.to_json()
        )
        return
    info = forest.session(sid)
    directory = info.cwd or "(none)"
    if info.cwd is None and info.origin_cwd is not None:
        directory += f"; recorded in {info.origin_cwd} (`forest bind {sid}` to use it)"
    click.echo(escape(f"session {sid}  directory {directory}"))
    click.echo(escape(f"entry   {snapshot.selected or '(none)'}"))
    line = found.state if found.state != "diverged" else f"diverged ({found.what})"
    click.echo(escape(f"status  {line}: {found.reason}"))
