"""`forest mcp`: the store as an MCP server (needs the `[mcp]` extra; says so otherwise)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import BackendUnavailable
from .common import State, pass_state, store_location


@click.command("mcp")
@click.option(
    "--db",
    callback=store_location,
    metavar="PATH|URL",
    help="Store to serve (default: the global --db, $FOREST_DB, the user data dir).",
)
@click.option("--http", is_flag=True, help="Streamable HTTP on --host/--port instead of stdio.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address for --http (loopback: the server has no authentication).",
)
@click.option(
    "--port",
    default=8766,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port for --http.",
)
@click.option(
    "--allow-writes",
    is_flag=True,
    help="Add the create_checkpoint and append_note tools (the store opens for writing).",
)
@pass_state
def mcp(
    state: State, db: Path | str | None, http: bool, host: str, port: int, allow_writes: bool
) -> None:
    """Serve the store to MCP clients (Claude Code, Codex, an IDE) over stdio.

    Tools: find_chats, list_chats, recall, read_chat (a page of any branch,
    bounded in characters), list_branches, list_checkpoints; with
    --allow-writes also create_checkpoint and append_note. Resources:
    forest://chats, forest://chat/{id}. Read-only by default; text is
    redacted of secrets as deep search redacts it. In Claude Code:

        claude mcp add forest -- forest mcp
    """
    try:
        from ..integrations.mcp import serve
    except ImportError as exc:
        raise BackendUnavailable("pip install 'sessionforest[mcp]'") from exc
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise click.BadParameter("the MCP server listens on loopback only", param_hint="--host")
    location = db or state.db
    serve(None if location is None else str(location), http=http, host=host, port=port,
          allow_writes=allow_writes)  # fmt: skip
