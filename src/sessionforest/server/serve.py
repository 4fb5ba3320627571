"""Starting and stopping a server: `forest serve` calls `run`.

HTTP and WebSocket on one port through uvicorn (which stops on SIGINT and
SIGTERM: it stops accepting, lets running requests finish, closes WebSockets);
then the writer thread drains (each write is one transaction: nothing is left
half-written) and the store closes. Loopback unless a token guards it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidArgument
from ..forest import Forest
from ..providers import ProviderConfig
from .context import Server
from .limits import Limits
from .security import Guard, allowed_hosts, is_loopback


@dataclass(frozen=True, slots=True)
class ServeOptions:
    db: Path | str | None = None  # a file or a URL
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    stdio: bool = False
    import_roots: tuple[Path, ...] = ()
    allow_origins: tuple[str, ...] = ()
    durability: str = "normal"
    readonly: bool = False
    provider: str | None = None  # with model: the web UI's model (else FOREST_PROVIDER/_MODEL)
    model: str | None = None
    limits: Limits = field(default_factory=Limits)


def check(options: ServeOptions) -> None:
    """Refuse what must never start: a non-loopback address without a token."""
    if not options.stdio and not is_loopback(options.host) and not options.token:
        raise InvalidArgument(
            "--host",
            f"{options.host} is not a loopback address, and without --token (or "
            "FOREST_TOKEN) anyone who can reach it could read and write the store; "
            "refusing to start",
        )
    for root in options.import_roots:
        if not root.is_dir():
            raise InvalidArgument("--import-root", f"{root} is not a directory")


def run(options: ServeOptions, echo: Callable[[str], None]) -> None:
    check(options)
    provider = ProviderConfig.resolve(options.provider, options.model)
    if options.readonly:
        forest = Forest.open(options.db, readonly=True)
    else:
        forest = Forest.open(options.db, durability=options.durability)
    server = Server(
        forest, limits=options.limits, import_roots=options.import_roots, provider=provider
    )
    if provider is not None:
        from .handlers.talk import warm

        threading.Thread(target=warm, args=(provider,), daemon=True).start()
    try:
        if options.stdio:
            from .stdio import serve_stdio

            asyncio.run(serve_stdio(server))
        else:
            _serve_http(server, options, echo)
    finally:
        server.close()


def _uvicorn_server() -> type:
    import uvicorn

    class Uvicorn(uvicorn.Server):
        """uvicorn's server, except that a graceful stop on SIGINT/SIGTERM exits 0:
        uvicorn re-raises the signal after stopping, which would end the process
        by that signal and hide that the stop was clean."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

    return Uvicorn


def _serve_http(server: Server, options: ServeOptions, echo: Callable[[str], None]) -> None:
    import uvicorn

    from .app import build_app

    _Uvicorn = _uvicorn_server()

    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that name TCP, and
    # without it a response written in two parts waits out the peer's delayed ACK
    # (40 ms per request on a keep-alive connection; measured).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((options.host, options.port))
    except OSError as exc:
        sock.close()
        raise InvalidArgument(
            "--port", f"cannot listen on {options.host}:{options.port}: {exc.strerror}"
        ) from None
    sock.listen(2048)
    port = sock.getsockname()[1]
    hosts = allowed_hosts(options.host, port)
    origins = frozenset({f"http://{h}" for h in hosts} | set(options.allow_origins))
    app = Guard(build_app(server), hosts=hosts, origins=origins, token=options.token)
    config = uvicorn.Config(
        app,
        log_level=os.environ.get("FOREST_LOG_LEVEL", "warning"),
        limit_concurrency=options.limits.max_connections,
        ws="websockets-sansio",
        ws_max_size=options.limits.max_body,
        lifespan="on",
        timeout_graceful_shutdown=30,
        server_header=False,
    )
    host = f"[{options.host}]" if family == socket.AF_INET6 else options.host
    echo(
        f"forest serve: listening on http://{host}:{port} (the web UI at /; POST /rpc, "
        f"WebSocket /ws, GET /healthz); store {server.forest.location}; Ctrl-C stops"
        + ("; the web UI asks for the token (or open /#token=TOKEN)" if options.token else "")
    )
    _Uvicorn(config).run(sockets=[sock])
