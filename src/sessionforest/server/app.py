"""The HTTP and WebSocket transports: a Starlette app behind the Guard middleware.

    POST /rpc    one JSON-RPC message (or batch) per request; 204 when it held
                 only notifications; any other method on /rpc: 405 (Allow: POST)
    GET  /ws     JSON-RPC in both directions, one message per WebSocket text
                 frame; subscriptions push `sessions/changed` here
    GET  /healthz  {"ok": true, ...}
    GET  /       the web UI (ui.py)

Bodies and frames past `Limits.max_body` are refused before they are read
whole. Each WebSocket is a `Peer` (peer.py: one ordered outbox,
the in-flight limit, teardown); a client that lets `max_outbox` messages
pile up is disconnected (code 1013) rather than silently missing one, and
catches up on reconnect (changes.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from .api import METHODS
from .context import Client, Server
from .limits import Limits
from .peer import Peer
from .rpc import INVALID_REQUEST, Dispatcher, error_message
from .security import (
    AUTH_PENDING,
    BEARER_PROTOCOL,
    SUBPROTOCOL,
    ASGIApp,
    Receive,
    Scope,
    Send,
    first_message_token,
    token_matches,
)
from .ui import ui_routes

log = logging.getLogger("sessionforest.server")
JSON = "application/json"
TOO_SLOW = 1013  # "try again later": the client's outbox overflowed
UNAUTHORIZED = 4401  # a WebSocket whose first message did not carry the token


def build_app(server: Server) -> ASGIApp:
    dispatcher = Dispatcher(server, METHODS)
    limits = server.limits
    sockets: set[WebSocket] = set()

    rpc = _Rpc(dispatcher, limits)

    async def health(request: Request) -> Response:
        doc = {"ok": True, "epoch": server.hub.epoch, "seq": server.hub.seq,
               "readonly": server.forest.readonly}  # fmt: skip
        return Response(orjson.dumps(doc), media_type=JSON)

    async def ws(socket: WebSocket) -> None:
        offered = socket.scope.get("subprotocols") or []
        await socket.accept(subprotocol=SUBPROTOCOL if SUBPROTOCOL in offered else None)
        token = socket.scope.get(AUTH_PENDING)
        greeting = _NOT_ASKED
        if token is not None and (greeting := await _authenticated(socket, token)) is _REFUSED:
            return
        # Counted once authenticated: sockets that never send the token cannot take the
        # places of real clients (connections.py closes them at `auth_timeout`).
        if len(sockets) >= limits.max_websockets:  # accepted first, so the reason arrives
            await socket.close(TOO_SLOW, f"more than {limits.max_websockets} WebSockets open")
            return
        sockets.add(socket)
        try:
            await _serve_socket(socket, dispatcher, server, greeting)
        finally:
            sockets.discard(socket)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        server.loop = asyncio.get_running_loop()
        server.watch()  # other processes' commits become sessions/changed too
        yield

    app = Starlette(
        routes=[
            Route("/rpc", rpc, methods=["POST"]),
            Route("/healthz", health, methods=["GET"]),
            WebSocketRoute("/ws", ws),
            *ui_routes(),  # last: the web UI's files at / (ui.py)
        ],
        lifespan=lifespan,
    )
    return _Front(app, rpc)


class _Front:
    """The app: `POST /rpc` goes straight to its endpoint, any other method on /rpc is
    answered 405 here, everything else goes through Starlette's routing. Starlette's layers
    (error and exception middleware, the router, Request and Response objects)
    cost about as much as the JSON-RPC dispatch of an append (measured:
    docs/benchmarks.md, the JSON-RPC server)."""

    def __init__(self, app: Starlette, rpc: ASGIApp) -> None:
        self.app = app
        self.rpc = rpc

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/rpc":
            if scope["method"] == "POST":
                await self.rpc(scope, receive, send)
            else:  # the UI's mount at / would answer 404, as if there were no endpoint
                await _NOT_POST(scope, receive, send)
        else:
            await self.app(scope, receive, send)


_NOT_POST = PlainTextResponse(
    "405 Method Not Allowed: JSON-RPC is POST /rpc (or a WebSocket at /ws)\n",
    status_code=405,
    headers={"Allow": "POST"},
)


class _Rpc:
    """POST /rpc, as plain ASGI: the hot path of every HTTP call (see `_Front`)."""

    def __init__(self, dispatcher: Dispatcher, limits: Limits) -> None:
        self.dispatcher = dispatcher
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.limits.max_body
        kind = (_first(scope, b"content-type") or b"").split(b";")[0].strip().lower()
        if kind != JSON.encode():
            text = f"Content-Type must be {JSON}"
            await _answer(send, 415, error_message(INVALID_REQUEST, text))
            return
        declared = _first(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _too_large(send, limit)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # gone before its request arrived whole: nothing was run
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                await _too_large(send, limit)
                return
            more = message.get("more_body", False)
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        out: list[bytes] = []
        watch: asyncio.Task[None] | None = None

        def watch_hang_up() -> None:
            nonlocal watch
            watch = asyncio.create_task(_hung_up(receive, client))

        # A client that hangs up before its answer stops its searches (Client.gone):
        # watched from its first read on (writes run to their end either way).
        client = Client("http", on_read=watch_hang_up)
        try:
            await self.dispatcher.handle(body, client, out.append)
        finally:
            if watch is not None:
                watch.cancel()
        if not out:
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await _answer(send, 200, out[0])


def _first(scope: Scope, name: bytes) -> bytes | None:
    """The first value of the header `name` (lowercase), as Starlette's `headers.get`."""
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


async def _answer(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-length", b"%d" % len(body)), (b"content-type", JSON.encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _too_large(send: Send, limit: int) -> None:
    await _answer(send, 413, error_message(INVALID_REQUEST, f"request body exceeds {limit} bytes"))


class _Socket:
    """A WebSocket as a peer's transport: one text frame per message."""

    def __init__(self, socket: WebSocket) -> None:
        self.socket = socket

    async def write(self, data: bytes) -> None:
        await self.socket.send_text(data.decode())

    async def hang_up(self, overflowed: bool) -> None:
        if overflowed:
            await self.socket.close(TOO_SLOW, "outbox overflowed: reconnect and catch up")
        else:
            await self.socket.close(1000, "")


async def _serve_socket(
    socket: WebSocket, dispatcher: Dispatcher, server: Server, greeting: Any
) -> None:
    limits = server.limits
    peer = Peer(server, dispatcher, "websocket", _Socket(socket))
    send = peer.send
    if greeting is not _NOT_ASKED:  # the first message carried the token: answer it first
        send(orjson.dumps({"jsonrpc": "2.0", "result": {"authenticated": True},
                           "id": greeting}))  # fmt: skip
    try:
        while True:
            message = await socket.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            if text is None:
                text = (message.get("bytes") or b"").decode("utf-8", "replace")
            if len(text) > limits.max_body:
                send(error_message(INVALID_REQUEST, f"message exceeds {limits.max_body} bytes"))
                continue
            await peer.submit(text)  # past max_inflight, stop reading: TCP pushes back
    except WebSocketDisconnect:
        pass
    finally:
        peer.client.gone()  # no answer can reach it now: its searches stop
        await peer.close()


async def _hung_up(receive: Receive, client: Client) -> None:
    """Wait for the HTTP client to disconnect (its body is read already), then say so."""
    while (await receive())["type"] != "http.disconnect":
        pass
    client.gone()


_NOT_ASKED = object()  # the handshake carried the token: no first message to answer
_REFUSED = object()


async def _authenticated(socket: WebSocket, token: str) -> Any:
    """The first message must be `rpc.authenticate` with the token: its id (to answer),
    else _REFUSED once closed with 4401. (The Guard slowed a wrong one down already.)"""
    try:
        message = await socket.receive()
    except WebSocketDisconnect:
        return _REFUSED
    given = first_message_token(message) if message["type"] == "websocket.receive" else None
    if given is None or not token_matches(given, token):
        with contextlib.suppress(Exception):
            await socket.close(UNAUTHORIZED, "unauthorized")
        return _REFUSED
    return orjson.loads(message.get("text") or message.get("bytes") or b"").get("id")


__all__ = ["BEARER_PROTOCOL", "build_app"]
