"""`forest status`: does the conversation still match the files on disk?

Compares the selected entry's worktree stamp (default: the head's) with the
session directory's git state now: match, diverged (HEAD, dirty state or
both) or unknown (no stamp, no directory, not a repository).
"""

from __future__ import annotations

import click

from .common import State, emit_json, json_option, pass_state, resolve_entry


@click.command()
@click.argument("session")
@click.option("--entry", "entry_ref", metavar="ENTRY", help="Entry to compare (default: head).")
@json_option
@pass_state
def status(state: State, session: str, entry_ref: str | None, as_json: bool) -> None:
    """Say whether SESSION's conversation and its worktree have diverged."""
    forest = state.reader
    entry = resolve_entry(forest, session, entry_ref) if entry_ref else None
    snapshot = forest.snapshot(session, entry)
    found = snapshot.divergence
    if as_json:
        emit_json(
            {"session_id": session, "entry": snapshot.selected, "head": snapshot.head}
            | found.to_json()
        )
        return
    info = forest.session(session)
    directory = info.cwd or "(none)"
    if info.cwd is None and info.origin_cwd is not None:
        directory += f"; recorded in {info.origin_cwd} (`forest bind {session}` to use it)"
    click.echo(f"session {session}  directory {directory}")
    click.echo(f"entry   {snapshot.selected or '(none)'}")
    line = found.state if found.state != "diverged" else f"diverged ({found.what})"
    click.echo(f"status  {line}: {found.reason}")
