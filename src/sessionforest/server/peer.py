"""One peer the server can push to: a WebSocket or the stdio peer (its JSON-RPC
conversation; the socket-level accounting of open connections is connections.py).

Both transports frame messages their own way and share everything else here:

- one outbox, drained by one task, so answers and notifications leave in the
  order they were queued; it holds at most `Limits.max_outbox` messages: a
  peer that lets more pile up is cut off (`overflowed`) rather than silently
  missing one, and catches up on reconnect (changes.py);
- at most `Limits.max_inflight` requests running at once: past that,
  `submit` waits, so the transport stops reading and its peer is pushed back
  (TCP, or a full pipe);
- teardown: running requests finish (their answers still go out while the
  transport can carry them; after `Limits.shutdown_grace` they are cancelled),
  then the connection's subscriptions and its pre-started deep search are
  dropped and the outbox is drained and closed.

A transport gives `write` (send one message, framed; it may wait while the
peer is slow) and `hang_up` (called once, when nothing more will be sent); a
transport that must stop reading when its peer is cut off passes `on_overflow`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Protocol

import orjson

from .context import Client, Server
from .rpc import Dispatcher

log = logging.getLogger("sessionforest.server")


class Transport(Protocol):
    async def write(self, data: bytes) -> None:
        """Send one message (a JSON document) to the peer."""

    async def hang_up(self, overflowed: bool) -> None:
        """The connection is done: nothing more will be written."""


class Peer:
    """The outbox, in-flight limit and teardown of one pushable client."""

    def __init__(
        self,
        server: Server,
        dispatcher: Dispatcher,
        transport_name: str,
        transport: Transport,
        *,
        on_overflow: Callable[[], None] | None = None,
    ) -> None:
        self.server = server
        self.dispatcher = dispatcher
        self.transport = transport
        self.client = Client(transport_name, self.push)
        self.overflowed = False
        self._on_overflow = on_overflow
        self._limit = server.limits.max_outbox
        self._outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._done = False  # no message is queued once this is set
        self._slots = asyncio.Semaphore(server.limits.max_inflight)
        self._running: set[asyncio.Task[None]] = set()
        self._sender = asyncio.create_task(self._drain())

    # --- sending ---------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Queue one message; past the bound, cut the peer off instead."""
        if self._done:
            return
        if self._outbox.qsize() >= self._limit:
            self.overflowed = True
            log.warning(
                "%s client %s let %d messages pile up: disconnecting it",
                self.client.transport, self.client.id, self._limit,
            )  # fmt: skip
            self._finish()
            if self._on_overflow is not None:
                self._on_overflow()
            return
        self._outbox.put_nowait(data)

    def push(self, message: dict[str, Any]) -> None:
        """A notification (the hub's and chat/delta's way in)."""
        self.send(orjson.dumps(message))

    def _finish(self) -> None:
        if not self._done:
            self._done = True
            self._outbox.put_nowait(None)

    async def _drain(self) -> None:
        try:
            while (data := await self._outbox.get()) is not None:
                await self.transport.write(data)
        except Exception:  # the peer went away: nothing more can reach it
            self._done = True
        finally:
            with contextlib.suppress(Exception):
                await self.transport.hang_up(self.overflowed)

    # --- requests --------------------------------------------------------------------

    async def submit(self, raw: bytes | str) -> None:
        """Run one message as its own task once a slot is free (waiting here is the
        push-back: the transport reads nothing more meanwhile)."""
        await self._slots.acquire()
        task = asyncio.create_task(self._run(raw))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _run(self, raw: bytes | str) -> None:
        try:
            await self.dispatcher.handle(raw, self.client, self.send)
        finally:
            self._slots.release()

    # --- teardown ---------------------------------------------------------------------

    async def close(self) -> None:
        """Let running requests finish (at most `Limits.shutdown_grace` seconds, then
        they are cancelled: a read stuck in the store must not hold the connection's
        teardown, or a stop, forever), drop what the client held, close the outbox."""
        if self._running:
            grace = self.server.limits.shutdown_grace
            _, late = await asyncio.wait(self._running, timeout=grace)
            for task in late:
                task.cancel()  # a read's deadline is cancelled with it (rpc.py)
            if late:
                await asyncio.wait(late)
        self.server.hub.drop(self.push)
        self.server.prestarts.drop(self.client.id)  # a pre-start lives as long as its client
        self._finish()
        if self.overflowed and not self._sender.done():
            self._sender.cancel()  # a peer that stopped reading is not waited for
        await asyncio.wait([self._sender])
