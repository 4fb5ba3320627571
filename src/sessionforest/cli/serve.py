"""`forest serve`: the JSON-RPC server (needs the `[server]` extra; says so otherwise)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import State, pass_state, store_location


@click.command("serve")
@click.option(
    "--db",
    callback=store_location,
    metavar="PATH|URL",
    help="Store to serve (default: the global --db, $FOREST_DB, the user data dir).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; anything but loopback needs --token.",
)
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (0: a free one; the URL printed says which).",
)
@click.option(
    "--token",
    envvar="FOREST_TOKEN",
    default=None,
    help="Require 'Authorization: Bearer TOKEN' on every request, 16+ characters "
    "($FOREST_TOKEN; prefer it or --token-file: a flag shows in the process list).",
)
@click.option(
    "--token-file",
    envvar="FOREST_TOKEN_FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Read the token from this file (its first line; $FOREST_TOKEN_FILE).",
)
@click.option(
    "--stdio",
    is_flag=True,
    help="Speak newline-delimited JSON-RPC on stdin/stdout instead of HTTP.",
)
@click.option(
    "--import-root",
    "import_roots",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory sessions/import may read from (repeatable; none: no imports).",
)
@click.option(
    "--bind-root",
    "bind_roots",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory inside which HTTP/WebSocket clients may bind sessions (sessions/create "
    "cwd: their appends are stamped with its git state) (repeatable; none: no binding).",
)
@click.option(
    "--allow-origin",
    "allow_origins",
    multiple=True,
    help="Another browser origin allowed to call the server (repeatable).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="HOST",
    help="Another Host name the server answers to, as a proxy in front of it forwards "
    "it (repeatable; the bound addresses and this machine's names are served already).",
)
@click.option(
    "--durability",
    type=click.Choice(["normal", "full"]),
    default="normal",
    show_default=True,
    help="synchronous=NORMAL, or FULL (one fsync per write).",
)
@click.option(
    "--read-only",
    "readonly",
    is_flag=True,
    help="Open the store read-only: every write answers StoreReadOnly.",
)
@click.option(
    "--provider",
    type=click.Choice(["anthropic", "openai"]),
    default=None,
    help="Model provider the web UI talks to ($FOREST_PROVIDER; key and base URL from "
    "the SDK's own variables).",
)
@click.option("--model", default=None, help="Model name for --provider ($FOREST_MODEL).")
@click.option(
    "--watch",
    is_flag=True,
    help="Follow every harness's transcripts into the store as they are written "
    "(as `forest watch` does): a running agent's turns reach the web UI at once.",
)
@pass_state
def serve(
    state: State,
    db: Path | str | None,
    host: str,
    port: int,
    token: str | None,
    token_file: Path | None,
    stdio: bool,
    import_roots: tuple[Path, ...],
    bind_roots: tuple[Path, ...],
    allow_origins: tuple[str, ...],
    allow_hosts: tuple[str, ...],
    durability: str,
    readonly: bool,
    provider: str | None,
    model: str | None,
    watch: bool,
) -> None:
    """Serve the store over JSON-RPC 2.0: HTTP (POST /rpc) and WebSocket (/ws).

    Methods (docs/api.md; `rpc.discover` returns the OpenRPC document):
    sessions/create, list, get, resolve, append, append_many, move_head,
    checkpoint, seek_checkpoint, entry, entries, log, forest_snapshot,
    compare, previews, workers, counts,
    project, status, search_session_entries, search_chats, rename, end, archive,
    unarchive,
    export, import, resume, subscribe, unsubscribe, search/deep, search/usage,
    chat/model, chat/reply, chat/stop and rpc.discover. GET / is the web UI.
    Deep search's model comes from FOREST_PROVIDER / FOREST_MODEL (or the
    call's params); so does the model the web UI talks to (or --provider/--model).

    Listens on loopback only unless a token is given (--token, $FOREST_TOKEN or
    --token-file; at least 16 characters). It answers to the bound address, this
    machine's names and --allow-host names. Browser requests from other origins
    are refused. sessions/import reads only inside --import-root directories, and
    a remote client binds sessions only inside --bind-root directories.
    With --watch it also follows every harness's transcripts into the store
    (`forest watch`), and the UI shows a running agent's chat as it grows.
    Stops cleanly on Ctrl-C or SIGTERM.
    """
    from ..server import ServeOptions, run  # BackendUnavailable without the extra

    options = ServeOptions(
        db=db or state.db,
        host=host,
        port=port,
        token=_token(token, token_file),
        stdio=stdio,
        import_roots=import_roots,
        bind_roots=bind_roots,
        allow_origins=allow_origins,
        allow_hosts=allow_hosts,
        durability=durability,
        readonly=readonly,
        provider=provider,
        model=model,
        watch=watch,
    )
    run(options, lambda line: click.echo(line, err=stdio))


def _token(token: str | None, token_file: Path | None) -> str | None:
    """The token from --token/$FOREST_TOKEN or the first line of --token-file."""
    if token_file is None:
        return token or None
    if token:
        raise click.UsageError("give the token once: --token/$FOREST_TOKEN or --token-file")
    try:
        lines = token_file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeError) as exc:
        raise click.BadParameter(
            f"cannot read {token_file}: {exc}", param_hint="--token-file"
        ) from None
    if not lines or not lines[0].strip():
        raise click.BadParameter(f"{token_file} is empty", param_hint="--token-file")
    return lines[0].strip()
