"""Open connections before and after they earn their keep: deadlines, a cap, eviction.

uvicorn's own limit (`limit_concurrency`) counts every open socket, idle or
not, and nothing bounds how long a socket may sit before its request: 64
sockets that sent nothing gave every client 503 for as long as they stayed
open. Here uvicorn's HTTP (httptools) and WebSocket (websockets-sansio)
protocols are subclassed so that

- an HTTP connection must finish a request's headers within `header_timeout`
  of connecting or of its previous response, may send at most
  `max_header_bytes` before they end (431), and may sit idle between requests
  for `keep_alive` seconds (uvicorn's own timer);
- a WebSocket that still has to send the token (its handshake carried none)
  must be marked authenticated (security.Guard does, on a right token) within
  `auth_timeout`, else it is closed with 4401;
- with `max_connections` open, a new connection evicts the one doing nothing
  for longest (never sent a request, idle between requests, a WebSocket not
  yet authenticated); only when every one is busy (a request running, an
  authenticated WebSocket) is the new one refused with 503.

What the cap counts is work: idle or unauthenticated sockets never lock out a
client that has some. `security.SLOT` on a WebSocket's scope is its `Slot`.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from .limits import Limits
from .security import SLOT

# What a connection is doing; the first three may be evicted (in this order of preference).
FRESH = 0  # connected, no request finished yet
PENDING = 1  # a WebSocket that must still authenticate
IDLE = 2  # between two requests of a keep-alive connection
BUSY = 3  # a request is running
LIVE = 4  # an authenticated WebSocket

REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"retry-after: 1\r\nconnection: close\r\ncontent-length: 52\r\n\r\n"
    b"every connection this server takes is busy; retry\r\n\r\n"
)
TOO_LONG = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; "
    b"charset=utf-8\r\nconnection: close\r\ncontent-length: 30\r\n\r\n"
    b"request headers are too large\n"
)
AUTH_LATE = 4401


class Registry:
    """Every open connection of one server, oldest first, with what it is doing."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._open: dict[Any, tuple[int, float]] = {}  # protocol -> (state, since)
        self.evicted = 0
        self.refused = 0

    def __len__(self) -> int:
        return len(self._open)

    def opened(self, conn: Any, state: int, now: float) -> bool:
        """Count `conn` in (evicting an idle one at the cap); False: refuse it."""
        if len(self._open) >= self.limits.max_connections:
            idle = [(s, since, c) for c, (s, since) in self._open.items() if s < BUSY]
            if not idle:
                self.refused += 1
                return False
            _, _, victim = min(idle, key=lambda item: (item[0], item[1]))
            self.evicted += 1
            self._open.pop(victim, None)
            victim.evict()
        self._open[conn] = (state, now)
        return True

    def mark(self, conn: Any, state: int, now: float) -> None:
        if conn in self._open:
            self._open[conn] = (state, now)

    def state(self, conn: Any) -> int | None:
        found = self._open.get(conn)
        return found[0] if found is not None else None

    def closed(self, conn: Any) -> None:
        self._open.pop(conn, None)


class Slot:
    """A WebSocket's handle on its registry entry, for the Guard."""

    def __init__(self, conn: GuardedWebSocket) -> None:
        self._conn = conn

    def authenticated(self) -> None:
        """Mark the WebSocket authenticated: work, never evicted (app.py counts these
        against `max_websockets`)."""
        conn = self._conn
        conn.registry.mark(conn, LIVE, conn.loop.time())


def protocols(limits: Limits) -> tuple[type[asyncio.Protocol], type[asyncio.Protocol], Registry]:
    """The HTTP and WebSocket protocol classes for uvicorn, sharing one new Registry."""
    registry = Registry(limits)

    class Http(GuardedHttp):
        pass

    class WebSocket(GuardedWebSocket):
        pass

    Http.registry = WebSocket.registry = registry
    return Http, WebSocket, registry


def uvicorn_options(limits: Limits) -> tuple[dict[str, Any], Registry]:
    """The `uvicorn.Config` arguments that put these protocols and deadlines in place."""
    http, ws, registry = protocols(limits)
    options = {
        "http": http,
        "ws": ws,
        "limit_concurrency": None,  # the registry's cap counts work, not sockets
        "timeout_keep_alive": max(1, math.ceil(limits.keep_alive)),
        "ws_max_size": limits.max_body,
    }
    return options, registry


class Joined:
    """The transport of one `POST /rpc` response: its status line and headers wait
    for its body and go out in the same write. uvicorn writes them apart, which
    on loopback with TCP_NODELAY is two packets, two wake-ups of the client and
    two system calls for every JSON-RPC answer (whose body always follows at
    once: app.py). A 100 Continue, sent before the response starts, is not held."""

    def __init__(self, cycle: RequestResponseCycle) -> None:
        self._cycle = cycle
        self._transport = cycle.transport
        self._held: bytes | None = None
        self._first = True

    def write(self, data: bytes) -> None:
        if self._first and self._cycle.response_started:
            # The status line and headers: every body message of a POST writes (an
            # empty one too), and a response cut short closes, so they never stay.
            self._first = False
            self._held = data
            return
        if self._held is not None:
            data, self._held = self._held + data, None
        self._transport.write(data)

    def close(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            self._transport.write(held)
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()


class GuardedHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header deadline, a header size cap, the registry."""

    registry: Registry

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_bytes = 0
        self._deadline: asyncio.TimerHandle | None = None
        if not self.registry.opened(self, FRESH, self.loop.time()):
            transport.write(REFUSED)
            transport.close()
            return
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._header_bytes = 0
        self._deadline = self.loop.call_later(self.registry.limits.header_timeout, self._late)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _late(self) -> None:
        self._deadline = None
        if self.registry.state(self) != BUSY and not self.transport.is_closing():
            self.transport.close()

    def evict(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.registry.state(self) in (FRESH, IDLE) and not self.transport.is_closing():
            self._header_bytes += len(data)
            if self._header_bytes > self.registry.limits.max_header_bytes:
                self.transport.write(TOO_LONG)
                self.transport.close()

    def on_headers_complete(self) -> None:
        self._disarm()
        self.registry.mark(self, BUSY, self.loop.time())
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is not None and cycle.scope["method"] == "POST" and cycle.scope["path"] == "/rpc":
            cycle.transport = Joined(cycle)  # type: ignore[assignment]

    def on_response_complete(self) -> None:
        queued = bool(self.pipeline)  # a pipelined request starts now: still busy
        super().on_response_complete()
        if not queued and not self.transport.is_closing():
            self.registry.mark(self, IDLE, self.loop.time())
            self._arm()

    def handle_websocket_upgrade(self) -> None:
        self._disarm()
        self.registry.closed(self)  # the WebSocket protocol counts the socket from here
        super().handle_websocket_upgrade()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.registry.closed(self)
        super().connection_lost(exc)


class GuardedWebSocket(WebSocketsSansIOProtocol):
    """uvicorn's websockets-sansio protocol, counted in the registry, with an auth deadline."""

    registry: Registry

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        if not self.registry.opened(self, PENDING, self.loop.time()):
            self.transport.write(REFUSED)
            self.transport.close()
            return
        self._deadline = self.loop.call_later(self.registry.limits.auth_timeout, self._late)

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is not None:
            scope[SLOT] = Slot(self)

    def _late(self) -> None:
        self._deadline = None
        if self.registry.state(self) == PENDING:
            self.evict()

    def evict(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if self.transport.is_closing():
            return
        if self.handshake_complete and not self.close_sent:
            self.conn.send_close(AUTH_LATE, "not authenticated in time")
            self.transport.write(b"".join(self.conn.data_to_send()))
            self.close_sent = True
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self.registry.closed(self)
        super().connection_lost(exc)
