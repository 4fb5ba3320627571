"""Search commands: `forest recall` in one chat, `forest find` across chats, and
`forest end` / `forest archive`, which mark a chat without hiding it from search.

Text output is the same card the composer's `/recall` and `/find` show.
"""

from __future__ import annotations

from datetime import datetime

import click

from ..ids import parse_iso
from ..model import SessionStatus
from ..search.composer import find_card, recall_card
from .common import State, emit_json, json_option, pass_state


def _moment(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_iso(value)
    except ValueError as exc:
        raise click.BadParameter(f"not an ISO 8601 time: {value!r}", param_hint="'--now'") from exc


@click.command()
@click.argument("session")
@click.argument("query")
@click.option("--limit", default=10, show_default=True, help="At most this many hits.")
@json_option
@pass_state
def recall(state: State, session: str, query: str, limit: int, as_json: bool) -> None:
    """Search the entries of SESSION only (ended chats included)."""
    hits = state.reader.search_session_entries(session, query, limit=limit)
    if as_json:
        emit_json({"session_id": session, "query": query, "hits": [h.to_json() for h in hits]})
    else:
        click.echo(recall_card(query, hits))


@click.command()
@click.argument("query")
@click.option("--now", "now_text", metavar="ISO", help="Resolve time phrases against this time.")
@click.option("--harness", help="Only chats of this harness.")
@click.option("--limit", default=8, show_default=True, help="At most this many chats.")
@json_option
@pass_state
def find(
    state: State,
    query: str,
    now_text: str | None,
    harness: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Find the chat QUERY describes: words, "phrases", a time ("last week"), a harness."""
    result = state.reader.search_chats(query, now=_moment(now_text), limit=limit, harness=harness)
    if as_json:
        emit_json(result.to_json())
    else:
        click.echo(find_card(result))


def _mark(state: State, session: str, status: SessionStatus, as_json: bool) -> None:
    state.forest.set_status(session, status)
    if as_json:
        emit_json({"id": session, "status": str(status)})
    else:
        click.echo(f"{session} {status}")


@click.command()
@click.argument("session")
@json_option
@pass_state
def end(state: State, session: str, as_json: bool) -> None:
    """Mark SESSION ended (still searchable, marked in `find`)."""
    _mark(state, session, SessionStatus.ENDED, as_json)


@click.command()
@click.argument("session")
@json_option
@pass_state
def archive(state: State, session: str, as_json: bool) -> None:
    """Mark SESSION archived (still searchable, marked in `find`)."""
    _mark(state, session, SessionStatus.ARCHIVED, as_json)
