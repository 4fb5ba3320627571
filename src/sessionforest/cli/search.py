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
from ..search.query import TIME_PHRASES
from ..text import escape
from .common import State, emit_json, json_option, pass_state

# The --provider choices: providers.PROVIDERS, written out so that a plain `find` does
# not load the provider module (tests/cli/test_cli_imports.py checks they agree).
PROVIDER_CHOICES = ("anthropic", "openai")


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
@click.option(
    "--limit",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="At most this many hits.",
)
@json_option
@pass_state
def recall(state: State, session: str, query: str, limit: int, as_json: bool) -> None:
    """Search the entries of SESSION only (ended chats included).

    Words match as in `forest find`; -word leaves out entries holding the word.
    """
    sid = state.reader.resolve_session(session)
    hits = state.reader.search_session_entries(sid, query, limit=limit)
    if as_json:
        emit_json({"session_id": sid, "query": query, "hits": [h.to_json() for h in hits]})
    else:
        click.echo(recall_card(query, hits))


FIND_HELP = f"""Find the chat QUERY describes: words, "phrases", a time ("last week"), a harness.

Words are matched as the index stores them (stemmed: "failing" finds "fails");
"quoted text" is matched as a phrase; a harness name the store knows (claude,
codex, ...) keeps chats of that harness. In Chinese, Japanese, Korean, Thai and
other text written without spaces, a word is found wherever its characters
appear in that order (as are Latin words written inside such text).

What is searched: first what was said (user and assistant messages, worker
results, checkpoint, compaction and branch summaries); then, as an addition
weighted below it, what the tools said: a tool call's command, paths and
patterns, a tool result (its head and tail, a few KB an entry), what a harness
printed of its runs (Aider's output) and the text a harness wraps into a user
message (<command-name>, <ide_selection>, ...). A chat that talks about the
words ranks above one whose tool output merely holds them. Code names match
whole and by their parts: build_wheel, hatchling.build, src/app/main.py,
--no-cache, and (in tool text) WheelBuilder by "Builder". A query of four words
or more is also looked for as the line it is (an error, a command): the chat
holding that line comes first.

Each chat found names the entry its snippet comes from ("entry 12", as `forest
log` numbers them; `forest seek SESSION 12` moves there), marked "off the active
branch" when a re-done turn left it on another branch; --json gives its
`entry_id`, `sequence` and `active` (null when only the title or summary matched).

-word leaves out every chat that holds the word: a single hyphen, then a word of
two or more characters starting with a letter. "--force", "-v" and "-10" stay
plain words; quote a hyphenated word to search for it ("-rf").

\b
{TIME_PHRASES}"""


@click.command(help=FIND_HELP)
@click.argument("query")
@click.option("--now", "now_text", metavar="ISO", help="Resolve time phrases against this time.")
@click.option("--harness", help="Only chats of this harness.")
@click.option(
    "--limit",
    default=8,
    show_default=True,
    type=click.IntRange(min=1),
    help="At most this many chats.",
)
@click.option(
    "--deep",
    is_flag=True,
    help="When the index is not sure, let a model look (bounded; falls back to the index).",
)
@click.option(
    "--provider",
    type=click.Choice(PROVIDER_CHOICES),
    help="The model provider for --deep (default: FOREST_PROVIDER).",
)
@click.option("--model", help="The model for --deep (default: FOREST_MODEL).")
@json_option
@pass_state
def find(
    state: State,
    query: str,
    now_text: str | None,
    harness: str | None,
    limit: int,
    deep: bool,
    provider: str | None,
    model: str | None,
    as_json: bool,
) -> None:
    now = _moment(now_text)
    if deep or provider or model:
        from ..providers import ProviderConfig
        from ..redact import defer_unused_imports

        defer_unused_imports()  # this process redacts once and exits
        cfg = ProviderConfig.resolve(provider, model)
        found = state.forest.deep_search(query, cfg, now=now, limit=limit, harness=harness)
        if as_json:
            emit_json(found.to_json())
        else:
            click.echo(find_card(found.search))
            click.echo(escape(found.line()))
        return
    result = state.reader.search_chats(query, now=now, limit=limit, harness=harness)
    if as_json:
        emit_json(result.to_json())
    else:
        click.echo(find_card(result))


@click.command()
@json_option
@pass_state
def usage(state: State, as_json: bool) -> None:
    """Model usage of deep searches (each a hidden chat_search session)."""
    records = state.reader.deep_usage()
    if as_json:
        emit_json({"task_family": "chat_search", "searches": records})
        return
    if not records:
        click.echo("no deep searches recorded")
        return
    for r in records:
        outcome = r["tier"] if r["fallback"] is None else f"index ({r['fallback']})"
        click.echo(
            escape(
                f"{r['created_at'][:19]}  {r['provider']}/{r['model']}  "
                f"in {r['input_tokens']} out {r['output_tokens']} tokens  "
                f"{r['lookups']} lookups  {r['elapsed_ms']} ms ({r['model_ms']} ms model)  "
                f"{outcome}"
            )
        )
    tokens_in = sum(r["input_tokens"] for r in records)
    tokens_out = sum(r["output_tokens"] for r in records)
    click.echo(f"{len(records)} deep searches: {tokens_in} input, {tokens_out} output tokens")


def _mark(state: State, session: str, status: SessionStatus, as_json: bool) -> None:
    """Set the status; prints `ID STATUS` (--json: the session as `sessions` lists it)."""
    forest = state.forest
    sid = forest.resolve_session(session)
    forest.set_status(sid, status)
    if as_json:
        emit_json(forest.session(sid).to_json())
    else:
        click.echo(escape(f"{sid} {status}"))


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


@click.command()
@click.argument("session")
@json_option
@pass_state
def unarchive(state: State, session: str, as_json: bool) -> None:
    """Bring archived SESSION back to the list (active again); prints `ID STATUS`."""
    forest = state.forest
    info = forest.unarchive(forest.resolve_session(session))
    if as_json:
        emit_json(info.to_json())
    else:
        click.echo(escape(f"{info.id} {info.status}"))
