"""Entry commands: append, seek, checkpoint, seek-checkpoint, log, tree and tips.

Writes print the id they produced (with `--json`, the whole entry); reads draw
through `render.py` so the terminal shows what the server shows. Sessions and
entries are named by id or unique id prefix, entries also by sequence number.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click
import orjson

from ..forest import Forest
from ..model import Entry, Node, Visibility
from ..render import describe, escape, label_of, preview, render_log, tree_lines
from .common import State, emit_json, json_option, pass_state, resolve_entry


def _content(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


# The payload `--text T` stands for, per kind; other kinds need `--payload`.
TEXT_FORMS: dict[str, Callable[[str], dict[str, Any]]] = {
    "user.message": _content,
    "assistant.message": _content,
    "system.message": _content,
    "checkpoint": lambda text: {"label": text, "summary": text},
    "compaction": lambda text: {"summary": text},
    "branch.summary": lambda text: {"summary": text},
}

ENTRY_REF = "an entry id or unique id prefix, or its sequence number as `log` and `tree` show"


def build_payload(kind: str, text: str | None, payload_json: str | None) -> Any:
    """The payload for `append`; the store still validates it against the kind."""
    if (text is None) == (payload_json is None):
        raise click.UsageError("pass exactly one of --text or --payload")
    # Unknown, legacy and delta kinds fail here, before any --text advice.
    from ..kinds import spec_for_append  # the payload contracts: `log` never loads them

    spec_for_append(kind)
    if text is not None:
        form = TEXT_FORMS.get(kind)
        if form is None:
            raise click.UsageError(
                f"kind {kind} has no --text form; pass its payload with --payload JSON"
            )
        return form(text)
    assert payload_json is not None
    raw = sys.stdin.read() if payload_json == "-" else payload_json
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}", param_hint="'--payload'") from exc


def _expected(forest: Forest, sid: str, ref: str) -> str | None:
    # An empty value is how a shell says "the session has no entries yet".
    return resolve_entry(forest, sid, ref) if ref else None


def _styled(text: str, *, bold: bool = False, dim: bool = False) -> str:
    # None, not False: click turns bold=False into an "intensity off" code that
    # would also cancel a dim or bold set in the same call.
    return click.style(text, bold=bold or None, dim=dim or None, reset=bold or dim)


def _echo_entry(entry: Entry, as_json: bool) -> None:
    """The id a write produced; with --json the whole entry (its `id` is the new head)."""
    if as_json:
        emit_json(entry.to_json())
    else:
        click.echo(escape(entry.id))


expect_head_option = click.option(
    "--expect-head",
    metavar="ENTRY",
    help="Fail (exit 4, nothing written) unless the head is ENTRY; '' means an empty session.",
)


@click.command()
@click.argument("session")
@click.option("--kind", "-k", required=True, help="Entry kind, e.g. user.message.")
@click.option("--text", "-t", help="Text; builds the natural payload of message/summary kinds.")
@click.option(
    "--payload", "-p", "payload_json", metavar="JSON", help="The payload as JSON ('-': stdin)."
)
@click.option("--parent", metavar="ENTRY", help=f"Parent entry (default: the head); {ENTRY_REF}.")
@click.option(
    "--visibility",
    type=click.Choice([v.value for v in Visibility]),
    help="Context visibility (default: the kind's).",
)
@expect_head_option
@json_option
@pass_state
def append(
    state: State,
    session: str,
    kind: str,
    text: str | None,
    payload_json: str | None,
    parent: str | None,
    visibility: str | None,
    expect_head: str | None,
    as_json: bool,
) -> None:
    """Append an entry below the head (or --parent) and move the head to it.

    Prints the new entry's id; with --json, the entry as `log --json` shows it.
    """
    payload = build_payload(kind, text, payload_json)
    forest = state.forest
    sid = forest.resolve_session(session)
    parent_id = resolve_entry(forest, sid, parent) if parent is not None else None
    if expect_head is None:
        entry = forest.append(sid, kind, payload, parent_id, visibility)
    else:
        expected = _expected(forest, sid, expect_head)
        entry = forest.append(sid, kind, payload, parent_id, visibility, expected)
    _echo_entry(entry, as_json)


@click.command()
@click.argument("session")
@click.argument("entry")
@expect_head_option
@json_option
@pass_state
def seek(state: State, session: str, entry: str, expect_head: str | None, as_json: bool) -> None:
    """Move the head to ENTRY (an id, id prefix or sequence number); history is untouched.

    Prints the new head's id; with --json, that entry.
    """
    forest = state.forest
    sid = forest.resolve_session(session)
    entry_id = resolve_entry(forest, sid, entry)
    if expect_head is None:
        forest.move_head(sid, entry_id)
    else:
        forest.move_head(sid, entry_id, expect_head=_expected(forest, sid, expect_head))
    if as_json:
        emit_json(forest.entry(sid, entry_id).to_json())
    else:
        click.echo(escape(entry_id))


@click.command()
@click.argument("session")
@click.argument("label")
@click.option("--summary", "-s", help="What the checkpoint captures (default: the label).")
@json_option
@pass_state
def checkpoint(state: State, session: str, label: str, summary: str | None, as_json: bool) -> None:
    """Label the current state with a checkpoint entry; prints its id (--json: the entry)."""
    forest = state.forest
    _echo_entry(forest.checkpoint(forest.resolve_session(session), label, summary), as_json)


@click.command("seek-checkpoint")
@click.argument("session")
@click.argument("label")
@json_option
@pass_state
def seek_checkpoint(state: State, session: str, label: str, as_json: bool) -> None:
    """Move the head to the latest checkpoint named LABEL; prints its id (--json: the entry)."""
    forest = state.forest
    _echo_entry(forest.seek_checkpoint(forest.resolve_session(session), label), as_json)


def print_log(forest: Forest, session: str, limit: int | None = None) -> None:
    """The active path (its last `limit` entries), root to head, one line per entry
    (hidden entries dimmed)."""
    path = forest.active_path(session, limit)
    if not path:
        click.echo("(no entries)")
    marks = forest.divergence_marks(session, path)
    for entry, line in zip(path, render_log(path), strict=True):
        hidden = entry.context_visibility == Visibility.HIDDEN
        mark = marks.get(entry.id)
        click.echo(_styled(f"{line}  {mark}" if mark else line, dim=hidden))


@click.command()
@click.argument("session")
@click.option("--limit", type=int, default=None, help="Only the last N entries (read in time ~ N).")
@json_option
@pass_state
def log(state: State, session: str, limit: int | None, as_json: bool) -> None:
    """Show the active path from the root to the head (--limit N: its last N entries)."""
    forest = state.reader
    sid = forest.resolve_session(session)
    if as_json:
        emit_json(forest.log_document(sid, limit))
    else:
        print_log(forest, sid, limit)


def draw_tree(forest: Forest, session: str) -> None:
    """Draw every branch; the active path in bold, the head marked."""
    # The path first: entries are append-only, so the later full read holds all of it.
    path = forest.active_path(session)
    nodes: list[Node] = []
    labels: dict[str, str] = {}
    previews: dict[str, str] = {}
    entries = forest.entries(session)
    marks = forest.divergence_marks(session, entries)
    for entry in entries:
        nodes.append(
            Node(
                entry.id,
                entry.parent_id,
                entry.sequence,
                entry.kind,
                entry.context_visibility,
                entry.semantic_schema_version,
            )
        )
        previews[entry.id] = preview(describe(entry.kind, entry.payload), 50)
        mark = marks.get(entry.id)
        if mark:
            previews[entry.id] += f"  {mark}"
        label = label_of(entry)
        if label is not None:
            labels[entry.id] = label
    head = path[-1].id if path else None
    lines = tree_lines(nodes, {e.id for e in path}, head, labels, previews)
    if not lines:
        click.echo("(no entries)")
    for line in lines:
        click.echo(_styled(line.text, bold=line.active, dim=line.hidden and not line.active))


@click.command()
@click.argument("session")
@json_option
@pass_state
def tree(state: State, session: str, as_json: bool) -> None:
    """Draw the whole tree: every branch, the active one marked with '*'."""
    forest = state.reader
    sid = forest.resolve_session(session)
    if as_json:
        emit_json(forest.tree_document(sid))
    else:
        draw_tree(forest, sid)


@click.command()
@click.argument("session")
@json_option
@pass_state
def tips(state: State, session: str, as_json: bool) -> None:
    """List the tip of every branch (entries without children)."""
    forest = state.reader
    sid = forest.resolve_session(session)
    found = forest.tips(sid)
    head = forest.head(sid)
    if as_json:
        emit_json([{**entry.to_json(), "active": entry.id == head} for entry in found])
        return
    for entry in found:
        mark = "*" if entry.id == head else " "
        line = f"{mark} {escape(entry.id)}  {entry.sequence}  {escape(entry.kind)}  "
        line += preview(describe(entry.kind, entry.payload), 50)
        if entry.id == head:
            line += "  <- head"
        click.echo(_styled(line, bold=entry.id == head))
