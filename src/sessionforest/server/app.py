"""The HTTP and WebSocket transports: a Starlette app behind the Guard middleware.

    POST /rpc    one JSON-RPC message (or batch) per request; 204 when it held
                 only notifications
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
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from .api import METHODS
from .context import Client, Server
from .peer import Peer
from .rpc import INVALID_REQUEST, Dispatcher, error_message
from .security import (
    AUTH_PENDING,
    BEARER_PROTOCOL,
    SUBPROTOCOL,
    first_message_token,
    token_matches,
)
from .ui import ui_routes

log = logging.getLogger("sessionforest.server")
JSON = "application/json"
TOO_SLOW = 1013  # "try again later": the client's outbox overflowed
UNAUTHORIZED = 4401  # a WebSocket whose first message did not carry the token


def build_app(server: Server) -> Starlette:
    dispatcher = Dispatcher(server, METHODS)
    limits = server.limits
    sockets: set[WebSocket] = set()

    async def rpc(request: Request) -> Response:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != JSON:
            return Response(error_message(INVALID_REQUEST, f"Content-Type must be {JSON}"),
                            415, media_type=JSON)  # fmt: skip
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limits.max_body:
            return _too_large(limits.max_body)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limits.max_body:
                return _too_large(limits.max_body)
        out: list[bytes] = []
        client = Client("http")
        # A client that hangs up before its answer stops its searches (Client.gone).
        watch = asyncio.create_task(_hung_up(request, client))
        try:
            await dispatcher.handle(bytes(body), client, out.append)
        finally:
            watch.cancel()
        if not out:
            return Response(status_code=204)
        return Response(out[0], media_type=JSON)

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

    return Starlette(
        routes=[
            Route("/rpc", rpc, methods=["POST"]),
            Route("/healthz", health, methods=["GET"]),
            WebSocketRoute("/ws", ws),
            *ui_routes(),  # last: the web UI's files at / (ui.py)
        ],
        lifespan=lifespan,
    )


def _too_large(limit: int) -> Response:
    return Response(error_message(INVALID_REQUEST, f"request body exceeds {limit} bytes"), 413,
                    media_type=JSON)  # fmt: skip


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


async def _hung_up(request: Request, client: Client) -> None:
    """Wait for the HTTP client to disconnect (its body is read already), then say so."""
    while (await request.receive())["type"] != "http.disconnect":
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
