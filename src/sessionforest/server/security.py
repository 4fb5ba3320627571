"""Who may talk to the server: the bearer token, and the Host and Origin checks.

An ASGI middleware in front of every HTTP request and WebSocket handshake:
a Host the server does not answer to (DNS rebinding) or a browser Origin
other than the server's own (a web page driving the local server) gets 403;
with a token, a request without `Authorization: Bearer <token>` gets 401 and
nothing else, except GET/HEAD of the web UI's own files (`/`, `/index.html`,
`/assets/*`): they hold no data, and the page must load to ask for the token.
A WebSocket may instead offer the token as the subprotocol
`bearer.<token>` beside `jsonrpc` (browsers cannot set headers), or send it in
its first message (transports.py). Tokens are compared in constant time.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
SUBPROTOCOL = "jsonrpc"
BEARER_PROTOCOL = "bearer."
# Set on the scope when the handshake carried no token: the first message must.
AUTH_PENDING = "sessionforest.auth_pending"


def is_loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def allowed_hosts(host: str, port: int, extra: Iterable[str] = ()) -> frozenset[str]:
    """Host header values the server answers to: loopback names and the bound address."""
    bound = f"[{host}]" if ":" in host else host
    names = {*LOOPBACK_NAMES, bound} if is_loopback(host) else {bound}
    return frozenset({f"{n}:{port}" for n in names} | set(extra))


def token_matches(given: str | None, token: str) -> bool:
    if given is None:
        return False
    return hmac.compare_digest(given.encode(), token.encode())


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def bearer(scope: Scope) -> str | None:
    value = _header(scope, b"authorization")
    if value is None or value[:7].lower() != "bearer ":
        return None
    return value[7:].strip()


def is_public(scope: Scope) -> bool:
    """A GET/HEAD of the web UI's shell (`/`, `/index.html`, `/assets/*`): no data."""
    if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
        return False
    path = str(scope.get("path", ""))
    return path in ("/", "/index.html") or path.startswith("/assets/")


def offered_protocols(scope: Scope) -> list[str]:
    return [str(p) for p in scope.get("subprotocols", ())]


class Guard:
    """The middleware; see the module docstring."""

    def __init__(
        self, app: ASGIApp, *, hosts: frozenset[str], origins: frozenset[str], token: str | None
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.origins = origins
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host")
        origin = _header(scope, b"origin")
        if host not in self.hosts:
            await self._deny(scope, receive, send, 403, f"host {host!r} is not served here")
            return
        if origin is not None and origin not in self.origins:
            await self._deny(
                scope, receive, send, 403, f"origin {origin!r} may not use this server"
            )
            return
        if self.token is not None and not is_public(scope):
            given = bearer(scope)
            if given is None and kind == "websocket":
                given = next(
                    (p[len(BEARER_PROTOCOL) :] for p in offered_protocols(scope)
                     if p.startswith(BEARER_PROTOCOL)),
                    None,
                )  # fmt: skip
                if given is None:
                    scope[AUTH_PENDING] = self.token  # the first message must carry it
            if given is not None and not token_matches(given, self.token):
                await self._deny(scope, receive, send, 401, "")
                return
            if given is None and kind == "http":
                await self._deny(scope, receive, send, 401, "")
                return
        await self.app(scope, receive, send)

    async def _deny(
        self, scope: Scope, receive: Receive, send: Send, status: int, why: str
    ) -> None:
        body = why.encode()
        headers = [(b"content-type", b"text/plain; charset=utf-8"),
                   (b"content-length", str(len(body)).encode())]  # fmt: skip
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="sessionforest"'))
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await receive()  # websocket.connect comes first
        if "websocket.http.response" in (scope.get("extensions") or {}):
            await send({"type": "websocket.http.response.start", "status": status,
                        "headers": headers})  # fmt: skip
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})
