"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, as MCP's is.

A harness spawns `forest serve --stdio` as a child: one message per line in,
one answer (or notification) per line out, nothing else on stdout (logs go to
stderr). Requests run concurrently (at most `max_inflight`); end of input
(or SIGINT/SIGTERM) lets running requests finish, then the server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from typing import Any

import orjson

from .api import METHODS
from .context import Client, Server
from .rpc import INVALID_REQUEST, Dispatcher


async def serve_stdio(server: Server) -> None:
    loop = asyncio.get_running_loop()
    server.loop = loop
    server.watch()
    limits = server.limits
    reader = asyncio.StreamReader(limit=limits.max_body + 1)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    outbox: asyncio.Queue[bytes | None] = asyncio.Queue()

    def send(data: bytes) -> None:
        outbox.put_nowait(data + b"\n")

    def push(message: dict[str, Any]) -> None:
        send(orjson.dumps(message))

    async def drain() -> None:
        while (data := await outbox.get()) is not None:
            await loop.run_in_executor(None, out.write, data)

    dispatcher = Dispatcher(server, METHODS)
    client = Client("stdio", push)
    sender = asyncio.create_task(drain())
    slots = asyncio.Semaphore(limits.max_inflight)
    running: set[asyncio.Task[None]] = set()

    async def run(line: bytes) -> None:
        try:
            await dispatcher.handle(line, client, send)
        finally:
            slots.release()

    # SIGINT/SIGTERM stop reading; running requests finish; then the server closes.
    main = asyncio.current_task()
    assert main is not None
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, main.cancel)
    try:
        while True:
            try:
                line = await reader.readline()
            except ValueError:  # longer than the limit: skip to the next newline
                message = f"message exceeds {limits.max_body} bytes"
                error = {"code": INVALID_REQUEST, "message": message}
                send(orjson.dumps({"jsonrpc": "2.0", "id": None, "error": error}))
                with contextlib.suppress(ValueError):
                    await reader.readuntil(b"\n")
                continue
            if not line:
                break
            if not line.strip():
                continue
            await slots.acquire()
            task = asyncio.create_task(run(line))
            running.add(task)
            task.add_done_callback(running.discard)
    except asyncio.CancelledError:
        pass  # a signal: stop as at end of input
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        server.hub.drop(push)
        server.prestarts.drop(client.id)  # a pre-start lives only as long as its client
        outbox.put_nowait(None)
        await sender
        out.close()
