"""Who may talk to the server: the bearer token, the Host and Origin checks, the headers.

An ASGI middleware in front of every HTTP request and WebSocket handshake:
a Host the server does not answer to (DNS rebinding) or a browser Origin
other than the server's own (a web page driving the local server) gets 403;
with a token, a request without `Authorization: Bearer <token>` gets 401 and
nothing else, except GET/HEAD of the web UI's own files (`/`, `/index.html`,
`/assets/*`): they hold no data, and the page must load to ask for the token.
A WebSocket may instead offer the token as the subprotocol
`bearer.<token>` beside `jsonrpc` (browsers cannot set headers), or send it in
its first message (`rpc.authenticate`, checked here as it passes). Tokens are
compared in constant time; wrong ones are slowed down (`Failures`).

The Host names served (`Hosts`): the bound address, loopback names when the
server is reachable on loopback, every address of this machine when bound to
all of them (0.0.0.0 or ::), the machine's own names, and `--allow-host` names
(a proxy in front). Every response carries `SECURITY_HEADERS`: no framing by
other pages (clickjacking), nothing loaded from elsewhere (a transcript's
Markdown image cannot report when and where it is read), no sniffing, no
Referer.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import re
import socket
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

import orjson

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
# A WebSocket's handle on the connection registry (connections.Slot), set by its protocol.
SLOT = "sessionforest.slot"
MIN_TOKEN = 16

# The web UI loads only its own files; images may also be data: URLs (its icon).
# `connect-src 'self'` covers the page's own WebSocket (CSP Level 3).
CSP = (
    "default-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)
_HEADER_NAMES = {name for name, _ in SECURITY_HEADERS}


def is_loopback(address: str) -> bool:
    """Whether `address` (an IP address as bound, `[v6]` allowed) is a loopback address;
    a name is not (resolve it first: `127.evil.example` is a name)."""
    try:
        return ipaddress.ip_address(address.strip("[]").split("%")[0]).is_loopback
    except ValueError:
        return False


def token_problem(token: str) -> str | None:
    """Why `token` cannot guard a server, or None: at least 16 characters, printable
    ASCII without spaces (it travels in a header and in a WebSocket subprotocol)."""
    if len(token) < MIN_TOKEN:
        return f"must be at least {MIN_TOKEN} characters (got {len(token)})"
    if not all("!" <= c <= "~" for c in token):
        return "must be printable ASCII without spaces"
    return None


def token_matches(given: str | None, token: str) -> bool:
    if given is None:
        return False
    return hmac.compare_digest(given.encode(), token.encode())


# --- which Host and Origin values are served ---------------------------------------

_HOST = re.compile(r"(\[[0-9a-f:.]+(?:%[\w.-]+)?\]|[a-z0-9_.-]+)(?::(\d{1,5}))?")


def split_host(value: str) -> tuple[str, int | None] | None:
    """(name, port) of a Host header value (lowercased), or None when it is not one."""
    found = _HOST.fullmatch(value.strip().lower())
    if found is None:
        return None
    port = int(found.group(2)) if found.group(2) is not None else None
    return found.group(1), port


def _local_address(name: str) -> bool:
    """Whether IP literal `name` is an address of this machine (the kernel lets us bind it)."""
    try:
        ip = ipaddress.ip_address(name.strip("[]").split("%")[0])
    except ValueError:
        return False
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.bind((str(ip), 0))
    except OSError:
        return False
    return True


def machine_names() -> set[str]:
    """This machine's own names, as a browser on the network may type them."""
    names = set()
    for find in (socket.gethostname, socket.getfqdn):
        try:
            name = find().strip().lower()
        except OSError:
            continue
        if name and split_host(name) is not None:
            names.add(name)
    return names


class Hosts:
    """The Host (and Origin) values one server answers to; see the module docstring."""

    def __init__(
        self,
        bound: str,
        port: int,
        *,
        given: str | None = None,
        allow: Iterable[str] = (),
        names: Iterable[str] | None = None,
    ) -> None:
        self.port = port
        address = bound.strip("[]")
        self.wildcard = address in ("0.0.0.0", "::")
        shown = f"[{address}]" if ":" in address else address
        own = {shown} if not self.wildcard else set()
        if self.wildcard or is_loopback(address):
            own.update(LOOPBACK_NAMES)
        if given and split_host(given) is not None and ":" not in given:
            own.add(given.lower())  # the name --host was given, as typed
        own.update(machine_names() if names is None else names)
        self.own = frozenset(own)
        self.allow = frozenset(a.strip().lower() for a in allow)
        self._probed: dict[str, bool] = {}

    def _own(self, name: str) -> bool:
        if name in self.own:
            return True
        if not self.wildcard:
            return False
        found = self._probed.get(name)
        if found is None:
            if len(self._probed) > 1024:
                self._probed.clear()
            found = self._probed[name] = _local_address(name)
        return found

    def allows(self, value: str | None) -> bool:
        """Whether a request with `Host: value` is for this server."""
        if value is None:
            return False
        parsed = split_host(value)
        if parsed is None:
            return False
        name, port = parsed
        if value.strip().lower() in self.allow:
            return True
        if name in self.allow and port in (None, self.port):
            return True
        if port != self.port and not (port is None and self.port == 80):
            return False
        return self._own(name)

    def allows_origin(self, origin: str, extra: frozenset[str]) -> bool:
        """Whether a browser page at `origin` may call this server."""
        if origin in extra:
            return True
        scheme, sep, rest = origin.partition("://")
        if not sep or scheme not in ("http", "https"):
            return False
        parsed = split_host(rest)
        if parsed is None:
            return False
        name, port = parsed
        if name in self.allow or rest.lower() in self.allow:
            return True  # a proxy's name: its own scheme and port
        default = 80 if scheme == "http" else 443
        return scheme == "http" and self.allows(f"{name}:{port if port is not None else default}")


# --- slowing down wrong tokens -----------------------------------------------------


class Failures:
    """Wrong tokens per peer address: the first `FREE` in `WINDOW` seconds are answered
    at once, later ones after `DELAY` seconds, at most `WAITING` at a time; past that a
    request from the address is refused (429) without its token being tried, so
    guessing from one address runs at most WAITING / DELAY tries a second."""

    FREE = 10
    WINDOW = 60.0
    DELAY = 1.0
    WAITING = 4
    PEERS = 4096

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._recent: dict[str, deque[float]] = {}
        self._waiting: dict[str, int] = {}
        self.delayed = 0
        self.refused = 0

    def full(self, peer: str) -> bool:
        """Whether `peer` already has WAITING wrong tokens waiting (refuse untried)."""
        if self._waiting.get(peer, 0) >= self.WAITING:
            self.refused += 1
            return True
        return False

    async def failed(self, peer: str) -> None:
        """Record a wrong token from `peer`; returns once its answer may be sent."""
        now = self._clock()
        recent = self._recent.get(peer)
        if recent is None:
            if len(self._recent) >= self.PEERS:
                self._recent.clear()
            recent = self._recent[peer] = deque(maxlen=self.FREE + 1)
        recent.append(now)
        if len(recent) <= self.FREE or now - recent[0] > self.WINDOW:
            return
        self.delayed += 1
        self._waiting[peer] = self._waiting.get(peer, 0) + 1
        try:
            await asyncio.sleep(self.DELAY)
        finally:
            self._waiting[peer] -= 1
            if not self._waiting[peer]:
                del self._waiting[peer]


# --- the middleware ----------------------------------------------------------------


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


def first_message_token(message: Message) -> str | None:
    """The token an `rpc.authenticate` first message carries, if it is one."""
    try:
        request = orjson.loads(message.get("text") or message.get("bytes") or b"")
        given = request["params"]["token"] if request.get("method") == "rpc.authenticate" else None
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return None
    return given if isinstance(given, str) else None


def _authenticated(scope: Scope) -> None:
    """Tell the connection registry this WebSocket has proved itself (connections.py)."""
    slot = scope.get(SLOT)
    if slot is not None:
        slot.authenticated()


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] in ("http.response.start", "websocket.http.response.start"):
            headers = [h for h in message.get("headers", ()) if h[0] not in _HEADER_NAMES]
            message = {**message, "headers": [*headers, *SECURITY_HEADERS]}
        await send(message)

    return sending


class Guard:
    """The middleware; see the module docstring."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: Hosts,
        origins: frozenset[str],
        token: str | None,
        failures: Failures | None = None,
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.origins = origins
        self.token = token
        self.failures = failures or Failures()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        send = _with_headers(send)
        host = _header(scope, b"host")
        origin = _header(scope, b"origin")
        if not self.hosts.allows(host):
            await self._deny(scope, receive, send, 403, f"host {host!r} is not served here")
            return
        if origin is not None and not self.hosts.allows_origin(origin, self.origins):
            await self._deny(
                scope, receive, send, 403, f"origin {origin!r} may not use this server"
            )
            return
        peer = str((scope.get("client") or ("?",))[0])
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
                    receive = self._first_message(scope, receive, peer)
            if given is not None:
                if self.failures.full(peer):
                    await self._deny(scope, receive, send, 429, "too many wrong tokens; retry")
                    return
                if not token_matches(given, self.token):
                    await self.failures.failed(peer)
                    await self._deny(scope, receive, send, 401, "")
                    return
            elif kind == "http":
                await self._deny(scope, receive, send, 401, "")
                return
        if kind == "websocket" and AUTH_PENDING not in scope:
            _authenticated(scope)
        await self.app(scope, receive, send)

    def _first_message(self, scope: Scope, receive: Receive, peer: str) -> Receive:
        """`receive` that checks the first message's token on its way to the app: a
        right one authenticates the connection, a wrong one waits out its penalty,
        and when the peer has too many waiting the token is not even tried."""
        seen = False
        token = self.token or ""

        async def receiving() -> Message:
            nonlocal seen
            message = await receive()
            if seen or message["type"] != "websocket.receive":
                return message
            seen = True
            given = first_message_token(message)
            if given is None:
                return message
            if self.failures.full(peer):
                return {"type": "websocket.receive", "text": "{}"}  # refused untried
            if not token_matches(given, token):
                await self.failures.failed(peer)
            else:
                _authenticated(scope)
            return message

        return receiving

    async def _deny(
        self, scope: Scope, receive: Receive, send: Send, status: int, why: str
    ) -> None:
        body = why.encode()
        headers = [(b"content-type", b"text/plain; charset=utf-8"),
                   (b"content-length", str(len(body)).encode())]  # fmt: skip
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="sessionforest"'))
        if status == 429:
            headers.append((b"retry-after", b"1"))
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
