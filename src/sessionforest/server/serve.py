"""Starting and stopping a server: `forest serve` calls `run`.

HTTP and WebSocket on one port through uvicorn (which stops on SIGINT and
SIGTERM: it stops accepting, lets running requests finish for at most
`Limits.shutdown_grace` seconds, closes WebSockets); then the writer thread
drains (each write is one transaction: nothing is left half-written) and the
store closes. Loopback unless a token guards it: `--host` is resolved and the
address actually bound is what must be loopback (`127.evil.example` is a name
that could resolve anywhere). A token is at least 16 characters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument
from ..forest import Forest
from ..providers import ProviderConfig
from ..text import plural
from .connections import uvicorn_options
from .context import Server
from .limits import Limits
from .security import Guard, Hosts, is_loopback, token_problem

log = logging.getLogger("sessionforest.server")


@dataclass(frozen=True, slots=True)
class ServeOptions:
    db: Path | str | None = None  # a file or a URL
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    stdio: bool = False
    import_roots: tuple[Path, ...] = ()
    bind_roots: tuple[Path, ...] = ()  # where HTTP/WebSocket clients may bind sessions
    allow_origins: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()  # more Host names served (a proxy's), as --allow-host
    durability: str = "normal"
    readonly: bool = False
    provider: str | None = None  # with model: the web UI's model (else FOREST_PROVIDER/_MODEL)
    model: str | None = None
    watch: bool = False  # follow every harness's transcripts into the store (--watch)
    limits: Limits = field(default_factory=Limits)


Address = tuple[int, tuple[Any, ...]]  # (socket family, socket address)


def resolve(host: str, port: int) -> Address:
    """The address `--host` names (IPv4 first when a name has both)."""
    try:
        found = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
    except (socket.gaierror, UnicodeError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise InvalidArgument("--host", f"cannot resolve {host!r}: {why}") from None
    found.sort(key=lambda info: info[0] != socket.AF_INET)
    return found[0][0], found[0][4]


def _unguarded(host: str, address: str) -> InvalidArgument:
    shown = host if host == address else f"{host} ({address})"
    return InvalidArgument(
        "--host",
        f"{shown} is not a loopback address, and without --token (or FOREST_TOKEN, "
        "--token-file) anyone who can reach it could read and write the store; "
        "refusing to start",
    )


def check(options: ServeOptions) -> Address | None:
    """Refuse what must never start (a non-loopback address without a token, a short
    token); the address to bind (None for stdio)."""
    if options.token is not None and (why := token_problem(options.token)) is not None:
        raise InvalidArgument("--token", f"the token {why}")
    for option, roots in (("--import-root", options.import_roots),
                          ("--bind-root", options.bind_roots)):  # fmt: skip
        for root in roots:
            if not Path(root).is_dir():
                raise InvalidArgument(option, f"{root} is not a directory")
    if options.watch and options.readonly:
        raise InvalidArgument("--watch", "a read-only server cannot import what it watches")
    if options.stdio:
        return None
    address = resolve(options.host, options.port)
    if not options.token and not is_loopback(address[1][0]):
        raise _unguarded(options.host, address[1][0])
    return address


def run(options: ServeOptions, echo: Callable[[str], None]) -> None:
    address = check(options)
    provider = ProviderConfig.resolve(options.provider, options.model)
    seconds = options.limits.stamp_seconds
    if options.readonly:
        forest = Forest.open(options.db, readonly=True, stamp_seconds=seconds)
    else:
        forest = Forest.open(options.db, durability=options.durability, stamp_seconds=seconds)
    server = Server(
        forest, limits=options.limits, import_roots=options.import_roots,
        bind_roots=options.bind_roots, provider=provider,
    )  # fmt: skip
    if options.watch:
        from ..mirror.sources import default_locations
        from .mirror import ServerMirror

        server.mirror = ServerMirror(server, default_locations())
    if provider is not None:
        # Importing an SDK takes seconds: made ahead, so the first reply does not wait.
        threading.Thread(target=server.clients.warm, args=(provider,), daemon=True).start()
    try:
        if options.stdio:
            from .stdio import serve_stdio

            if not asyncio.run(serve_stdio(server)):
                raise SystemExit(1)  # the peer was cut off as too slow (logged)
        else:
            assert address is not None
            _serve_http(server, options, address, echo)
    finally:
        stuck = server.close(options.limits.shutdown_grace)
        if stuck:
            # Still running after the grace (a statement that does not look at its
            # deadline): this process ends without them, as it was asked to. Writes
            # have all committed and the store is closed; the reads wrote nothing.
            log.warning(
                "forest serve: %s still running %g s after the stop; ending without them",
                plural(stuck, "read"), options.limits.shutdown_grace,
            )  # fmt: skip
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)  # the reader threads would otherwise be joined at exit


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


def _serve_http(
    server: Server, options: ServeOptions, address: Address, echo: Callable[[str], None]
) -> None:
    import uvicorn

    from .app import build_app

    _Uvicorn = _uvicorn_server()

    family, sockaddr = address
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that name TCP, and
    # without it a response written in two parts waits out the peer's delayed ACK
    # (40 ms per request on a keep-alive connection; measured).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(sockaddr)
    except OSError as exc:
        sock.close()
        raise InvalidArgument(
            "--port", f"cannot listen on {options.host}:{options.port}: {exc.strerror}"
        ) from None
    bound, port = sock.getsockname()[:2]
    if not options.token and not is_loopback(bound):  # what was bound, not what was asked
        sock.close()
        raise _unguarded(options.host, bound)
    sock.listen(2048)
    hosts = Hosts(bound, port, given=options.host, allow=options.allow_hosts)
    app = Guard(
        build_app(server), hosts=hosts, origins=frozenset(options.allow_origins),
        token=options.token,
    )  # fmt: skip
    protocols, _ = uvicorn_options(options.limits)
    config = uvicorn.Config(
        app,
        log_level=os.environ.get("FOREST_LOG_LEVEL", "warning"),
        lifespan="on",
        timeout_graceful_shutdown=math.ceil(options.limits.shutdown_grace),
        server_header=False,
        **protocols,
    )
    given = options.host.strip("[]")
    host = f"[{given}]" if ":" in given else given
    echo(
        f"forest serve: listening on http://{host}:{port} (the web UI at /; POST /rpc, "
        f"WebSocket /ws, GET /healthz); store {server.forest.location}; Ctrl-C stops"
        + ("; the web UI asks for the token (or open /#token=TOKEN)" if options.token else "")
    )
    _Uvicorn(config).run(sockets=[sock])
