"""Store-wide commands: `forest check` and `forest repair` (integrity), `forest migrate`,
`forest index --semantic` (the semantic leg's backfill) and `forest demo`.

`demo` never writes into the user's store: without `--db` it rebuilds a
throwaway `demo.db` beside the default store path.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from pathlib import Path

import click

from ..demo import build_demo
from ..errors import UnknownSession
from ..forest import Forest
from ..render import escape, plural
from .common import State, emit_json, json_option, pass_state, store_location
from .entries import draw_tree, print_log

# SQLite keeps a store in up to three files; a stale -wal beside a fresh
# database would be replayed into it.
STORE_SUFFIXES = ("", "-wal", "-shm", "-journal")


@click.command()
@click.option(
    "--quarantine/--no-quarantine",
    default=True,
    help="Fence off damaged sessions (the default) or only report them.",
)
@json_option
@pass_state
@click.pass_context
def check(ctx: click.Context, state: State, quarantine: bool, as_json: bool) -> None:
    """Check every session's tree; exit 1 if any problem was found.

    Finds parents that are missing, foreign or form a cycle, sequence gaps,
    entries of a schema version this sessionforest cannot read, heads that
    are missing or point nowhere, and entries whose session row is gone.
    `forest repair SESSION` fixes what can be fixed without touching an entry.
    """
    forest = state.forest if quarantine else state.reader
    report = forest.check(quarantine=quarantine)
    if as_json:
        emit_json(report.to_json())
    else:
        found = plural(len(report.problems), "problem") if report.problems else "ok"
        sessions = plural(report.sessions_checked, "session")
        entries = plural(report.entries_checked, "entry", "entries")
        click.echo(f"checked {sessions}, {entries}: {found}")
        for problem in report.problems:
            entry = f" entry {problem.entry_id}" if problem.entry_id else ""
            line = f"  session {problem.session_id}{entry}: {problem.code}: {problem.detail}"
            click.echo(escape(line))
        if report.quarantined:
            click.echo(escape("quarantined: " + ", ".join(report.quarantined)))
            click.echo("`forest repair SESSION` fixes what can be fixed without touching an entry")
    if not report.ok:
        ctx.exit(1)


@click.command()
@click.argument("session_id", metavar="SESSION")
@json_option
@pass_state
@click.pass_context
def repair(ctx: click.Context, state: State, session_id: str, as_json: bool) -> None:
    """Repair SESSION's links without touching an entry; exit 1 if damage remains.

    Repair does only two things, and only where they are broken: it recreates
    a session row that was deleted while its entries remain (title, directory
    and import source were lost with it and stay empty), and it points a
    missing, dangling or foreign head at the newest entry whose path to the
    root is intact. Then it checks the session afresh: the quarantine is
    released only if that check is clean, and set if it is not.

    Entries are immutable, so repair never fixes damage stored in them: a
    parent that is missing or belongs to another session, a cycle, a gap in
    the sequence, or an entry of a schema version this sessionforest cannot
    read (a newer sessionforest can). Such a session stays quarantined even
    when the damage is on a side branch and the active branch is healthy:
    listing, exporting and searching it would meet the damage, and the next
    `forest check` would fence it off again. The report says what could not be
    fixed and why.
    """
    forest = state.forest
    # A session whose row is gone has no row to match a prefix: use the id as given.
    with contextlib.suppress(UnknownSession):
        session_id = forest.resolve_session(session_id)
    report = forest.repair(session_id)
    if as_json:
        emit_json(report.to_json())
    else:
        lines = [f"repaired {session_id}: {a.code}: {a.detail}" for a in report.actions]
        for left in report.unrepaired:
            entry = f" entry {left.entry_id}" if left.entry_id else ""
            lines.append(
                f"not repaired {session_id}{entry}: {left.code}: {left.detail} ({left.why})"
            )
        if report.quarantine is not None:
            lines.append(f"session {session_id} is quarantined: {report.quarantine}")
        elif report.released:
            lines.append(f"session {session_id} checks clean: released from quarantine")
        elif not report.actions:
            lines.append(f"session {session_id} checks clean: nothing to repair")
        else:
            lines.append(f"session {session_id} checks clean")
        for line in lines:
            click.echo(escape(line))
    if not report.ok:
        ctx.exit(1)


@click.command()
@json_option
@pass_state
def migrate(state: State, as_json: bool) -> None:
    """Upgrade an existing store to this version's schema (read commands never do)."""
    applied = state.forest.migrated
    if as_json:
        emit_json({"path": state.forest.location, "applied": applied})
    elif applied:
        click.echo(f"applied {plural(len(applied), 'migration')} to {state.forest.location}:")
        for name in applied:
            click.echo(f"  {name}")
    else:
        click.echo(f"{state.forest.location} is up to date")


@click.command("index")
@click.option(
    "--semantic",
    is_flag=True,
    required=True,
    help="Compute the entry vectors of the semantic leg that are missing (needs the "
    "[semantic] extra).",
)
@json_option
@pass_state
def index(state: State, semantic: bool, as_json: bool) -> None:
    """Bring the search index's optional parts up to date: with --semantic, embed every
    entry that has no vector yet (the backfill of a store written without the extra)."""
    del semantic  # the one part there is; required so that a bare `forest index` says so
    embedded, waiting = state.forest.index_semantic()
    if as_json:
        emit_json({"path": state.forest.location, "embedded": embedded, "waiting": waiting})
    else:
        entries = plural(embedded, "entry", "entries")
        click.echo(f"embedded {entries} in {state.forest.location}; chats waiting: {waiting}")


def demo_path() -> Path:
    """`demo.db` beside the default store; refuses to be the default store itself."""
    store = Forest.default_path()
    target = store.parent / "demo.db"
    if target.resolve() == store.resolve():
        raise click.ClickException(
            f"your store is {store}, the demo's default path; pass --db to put the demo elsewhere"
        )
    return target


@click.command()
@click.option(
    "--db",
    "demo_db",
    callback=store_location,
    metavar="PATH|URL",
    help="Add the demo session to this store (default: a fresh demo.db).",
)
@pass_state
def demo(state: State, demo_db: Path | str | None) -> None:
    """Build a sample session with branches and a checkpoint, then draw it.

    With no --db the demo goes into a fresh demo.db next to the default store,
    replacing an older one; an explicit --db store (or a $FOREST_DB URL, such as
    postgresql://...) is added to, never cleared.
    """
    target = demo_db or state.db
    env = os.environ.get("FOREST_DB") or ""
    if target is None and "://" in env:
        target = env  # a server's store has no "beside it": the demo is added to it
    if target is None:
        target = demo_path()
        target.parent.mkdir(parents=True, exist_ok=True)  # the default store's directory
        for suffix in STORE_SUFFIXES:
            target.with_name(target.name + suffix).unlink(missing_ok=True)
    store = State(target)
    store_name = str(target)
    try:
        sid = build_demo(store.creator)
        store_name = store.forest.location  # a URL without its password
        click.echo(f"Built demo session {sid} in {store_name}\n")
        draw_tree(store.forest, sid)
        click.echo("\nActive path (root -> head):")
        print_log(store.forest, sid)
        context = store.forest.project(sid)
        click.echo(
            f"\nAgent context: {plural(len(context), 'message')} from the active branch "
            "(hidden tool events, the checkpoint and the abandoned branch left out)."
        )
        found = store.forest.search_chats("database locked")
        verdict = "confident" if found.confident else "not confident"
        click.echo(f"\nforest find 'database locked': {verdict} ({found.reason})")
        for hit in found.hits[:3]:
            click.echo(escape(f"  {hit.session_id}  {hit.title}"))
    finally:
        store.close()
    db = shlex.quote(str(target) if isinstance(target, Path) else store_name)
    click.echo(
        f"\nExplore further: forest --db {db} tree {sid}"
        "   (or: log, tips, seek, recall, find, export)"
    )
