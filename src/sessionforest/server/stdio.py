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

Lines are cut by `messages`, which never holds more than `max_body` bytes of
one: a longer line (however long) is answered with one -32600 error and
skipped to its newline, and reading carries on; a last line without a newline
is a message like any other (or that error when it is too long). End of input
is a clean stop: exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import IO, Any

from .api import METHODS
from .context import Server
from .peer import Peer
from .rpc import INVALID_REQUEST, Dispatcher, error_message

log = logging.getLogger("sessionforest.server")


CHUNK = 1 << 16
TOO_LONG = None  # what `messages` yields for a line past the limit


async def messages(
    read: Callable[[int], Awaitable[bytes]], limit: int
) -> AsyncIterator[bytes | None]:
    """Each line `read` gives (without its newline; the last may lack one), or TOO_LONG
    once for a line longer than `limit` bytes, whose rest is then skipped unread."""
    buffer = bytearray()
    skipping = False
    while chunk := await read(CHUNK):
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not skipping:
                if len(buffer) + len(piece) > limit:
                    buffer.clear()
                    skipping = end < 0  # the rest of this line is dropped as it comes
                    yield TOO_LONG
                elif end >= 0:
                    buffer += piece
                    yield bytes(buffer)
                    buffer.clear()
                else:
                    buffer += piece
            elif end >= 0:
                skipping = False
            if end < 0:
                break
            start = end + 1
    if buffer:
        yield bytes(buffer)


async def _reader(source: Any) -> Callable[[int], Awaitable[bytes]]:
    """How to read `source`: a pipe or socket through asyncio, a regular file (`forest
    serve --stdio < requests.jsonl`) on a thread (asyncio reads pipes only)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=CHUNK)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
    except ValueError:
        fd = source.fileno()
        return lambda n: loop.run_in_executor(None, os.read, fd, n)
    return reader.read


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
    read = await _reader(stdin if stdin is not None else sys.stdin)
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
        async for line in messages(read, limits.max_body):
            if line is TOO_LONG:
                message = f"message exceeds {limits.max_body} bytes; skipped to its newline"
                peer.send(error_message(INVALID_REQUEST, message))
            elif line.strip():
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
