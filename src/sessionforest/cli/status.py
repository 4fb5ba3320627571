"""`forest status [SESSION]`: the store's state, or does a conversation match its files?

Without SESSION: what waits behind the store's writes (entries not yet in the
full-text index, entries without the semantic leg's vectors) and the
transcript files the live mirror follows. With SESSION: compares the
selected entry's worktree stamp (default: the head's) with the session
directory's git state now: match, diverged (HEAD, dirty state or both) or
unknown (no stamp, no directory, not a repository).
"""

from __future__ import annotations

import click

from ..forest import Forest
from ..render import escape
from ..text import plural
from .common import State, emit_json, json_option, pass_state, resolve_entry


@click.command()
@click.argument("session", required=False)
@click.option(
    "--entry",
    "entry_ref",
    metavar="ENTRY",
    help="Entry to compare (id, id prefix or sequence number; default: the head).",
)
@json_option
@pass_state
def status(state: State, session: str | None, entry_ref: str | None, as_json: bool) -> None:
    """Say what waits behind the store's writes (no SESSION), or whether SESSION's
    conversation and its worktree have diverged."""
    forest = state.reader
    if session is None:
        if entry_ref is not None:
            raise click.UsageError("--entry needs a SESSION")
        _store_status(forest, as_json)
        return
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


def _store_status(forest: Forest, as_json: bool) -> None:
    backlog = forest.backlog()
    followed = forest.followed_sources()
    failing = [f for f in followed if f.error is not None]
    if as_json:
        emit_json(
            {
                "path": forest.location,
                "backlog": backlog.to_json(),
                "followed": len(followed),
                "followed_errors": [{"path": f.path, "error": f.error} for f in failing],
            }
        )
        return
    click.echo(escape(f"store    {forest.location}"))
    pending = backlog.index_pending
    click.echo(
        "index    up to date"
        if not pending
        else f"index    {plural(pending, 'entry', 'entries')} wait for the full-text index "
        "(the next search or writer indexes them)"
    )
    if backlog.vectors_pending is None:
        click.echo("vectors  off (no [semantic] extra, or FOREST_SEMANTIC=off)")
    elif not backlog.vectors_pending:
        click.echo("vectors  up to date")
    else:
        chats = plural(backlog.vector_chats_pending or 0, "chat")
        click.echo(
            f"vectors  {plural(backlog.vectors_pending, 'entry', 'entries')} ({chats}) wait "
            "for vectors: `forest watch` and `forest serve` compute them in the background, "
            "`forest index --semantic` now"
        )
    if followed:
        latest = max(f.updated_at for f in followed)
        click.echo(f"mirror   {plural(len(followed), 'file')} followed, last import {latest}")
    else:
        click.echo("mirror   no file followed (`forest watch`, `forest hooks install claude-code`)")
    for source in failing[:10]:
        click.echo(escape(f"  failed {source.path}: {source.error}"))
