"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, as MCP's is.

A harness spawns `forest serve --stdio` as a child: one message per line in,
one answer (or notification) per line out, nothing else on stdout (logs go to
stderr). The peer is one `Peer` (peer.py): requests run
concurrently (at most `max_inflight`, then stdin is not read until one
ends); at most `max_outbox` messages wait for the peer to read them, past
which it is cut off as too slow: the server stops reading, says so on stderr
and exits 1 (a harness restarts it and catches up with `sessions/subscribe`
`since`/`epoch`, as a WebSocket client reconnects). End of input (or
SIGINT/SIGTERM) lets running requests finish, then the server stops.

stdout is written without blocking the loop (asyncio's pipe transport; a
regular file is written on a thread), so a peer that stops reading holds up
nothing but its own messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from typing import IO, Any

from .api import METHODS
from .context import Server
from .peer import Peer
from .rpc import INVALID_REQUEST, Dispatcher, error_message

log = logging.getLogger("sessionforest.server")


class _Lines:
    """stdout as a peer's transport: one message per line."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, self.out
            )
        except ValueError:  # a regular file: its writes never wait on a reader
            return
        self.writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def write(self, data: bytes) -> None:
        if self.writer is None:
            await asyncio.get_running_loop().run_in_executor(None, self.out.write, data + b"\n")
            return
        self.writer.write(data + b"\n")
        await self.writer.drain()

    async def hang_up(self, overflowed: bool) -> None:
        if self.writer is None:
            self.out.close()
        elif overflowed:
            self.writer.transport.abort()  # what the peer did not read is dropped
        else:
            self.writer.close()
            with contextlib.suppress(Exception):
                await self.writer.wait_closed()


async def serve_stdio(
    server: Server, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None
) -> bool:
    """Serve one peer on `stdin`/`stdout` (default: the process's own) until end of
    input or a signal; False when the peer was cut off as too slow."""
    loop = asyncio.get_running_loop()
    server.loop = loop
    server.watch()
    limits = server.limits
    reader = asyncio.StreamReader(limit=limits.max_body + 1)
    source: Any = stdin if stdin is not None else sys.stdin
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
    out = stdout if stdout is not None else os.fdopen(os.dup(sys.stdout.fileno()), "wb", 0)
    lines = _Lines(out)
    await lines.open()
    main = asyncio.current_task()
    assert main is not None
    reading = True

    def stop_reading() -> None:
        if reading:  # never cancels the teardown itself
            main.cancel()

    # SIGINT/SIGTERM, or a peer cut off as too slow, stop reading; running requests
    # finish; then the server closes.
    peer = Peer(server, Dispatcher(server, METHODS), "stdio", lines,
                            on_overflow=stop_reading)  # fmt: skip
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop_reading)
    try:
        while True:
            try:
                line = await reader.readline()
            except ValueError:  # longer than the limit: skip to the next newline
                message = f"message exceeds {limits.max_body} bytes"
                peer.send(error_message(INVALID_REQUEST, message))
                with contextlib.suppress(ValueError):
                    await reader.readuntil(b"\n")
                continue
            if not line:
                break
            if not line.strip():
                continue
            await peer.submit(line)
    except asyncio.CancelledError:
        pass  # a signal or an overflow: stop as at end of input
    finally:
        reading = False
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await peer.close()
    if peer.overflowed:
        log.error(
            "forest serve --stdio: the peer left %d messages unread; stopping (restart and "
            "catch up with sessions/subscribe since/epoch)", limits.max_outbox,
        )  # fmt: skip
        return False
    return True
