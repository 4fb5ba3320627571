"""The connection both pushable transports share (peer.py), in-process with a
real store: the bounded outbox, the in-flight limit, teardown; and the stdio transport
over real pipes cutting off a peer that stops reading."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import orjson

from sessionforest import Forest
from sessionforest.server.api import METHODS
from sessionforest.server.context import Call, Server
from sessionforest.server.limits import Limits
from sessionforest.server.peer import Peer
from sessionforest.server.registry import Group, NoParams, Registry
from sessionforest.server.rpc import Dispatcher
from sessionforest.server.stdio import serve_stdio


class Reader:
    """A transport whose peer reads only while `reading` is set."""

    def __init__(self) -> None:
        self.got: list[Any] = []
        self.reading = asyncio.Event()
        self.reading.set()
        self.hung_up: list[bool] = []

    async def write(self, data: bytes) -> None:
        await self.reading.wait()
        self.got.append(orjson.loads(data))

    async def hang_up(self, overflowed: bool) -> None:
        self.hung_up.append(overflowed)


def _request(method: str, id: int, params: Any = None) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "method": method, "id": id, "params": params or {}})


def test_in_flight_limit_and_teardown_wait_for_running_requests(tmp_path: Path) -> None:
    group = Group("test")
    running: list[int] = []
    most = [0]
    release = asyncio.Event()

    @group.method("test/wait", NoParams, None, "loop")
    async def wait(call: Call, p: NoParams) -> int:
        """Wait until released."""
        running.append(1)
        most[0] = max(most[0], len(running))
        await release.wait()
        running.pop()
        return 1

    server = Server(Forest.open(tmp_path / "s.db"), limits=Limits(max_inflight=2))

    async def main() -> Reader:
        peer = Reader()
        conn = Peer(server, Dispatcher(server, Registry(group)), "test", peer)
        await conn.submit(_request("test/wait", 1))
        await conn.submit(_request("test/wait", 2))
        third = asyncio.create_task(conn.submit(_request("test/wait", 3)))
        await asyncio.sleep(0.05)
        assert not third.done() and len(running) == 2  # the reader waits: push-back
        release.set()
        await third
        await conn.close()  # waits for the third, whose answer still goes out
        return peer

    try:
        peer = asyncio.run(main())
    finally:
        server.close()
    assert most[0] == 2
    assert sorted(m["id"] for m in peer.got) == [1, 2, 3]
    assert peer.hung_up == [False]


def test_a_peer_that_stops_reading_is_cut_off_and_its_subscriptions_dropped(
    tmp_path: Path,
) -> None:
    server = Server(Forest.open(tmp_path / "s.db"), limits=Limits(max_outbox=5))

    async def main() -> tuple[Reader, Peer]:
        peer = Reader()
        conn = Peer(server, Dispatcher(server, METHODS), "test", peer)
        await conn.submit(_request("sessions/subscribe", 1))
        while not peer.got:
            await asyncio.sleep(0.01)
        assert server.hub.count() == 1
        peer.reading.clear()  # the peer stops reading
        for i in range(20):
            await conn.submit(_request("sessions/create", 10 + i, {"title": f"c{i}"}))
        while not conn.overflowed:
            await asyncio.sleep(0.01)
        await conn.close()
        return peer, conn

    try:
        peer, conn = asyncio.run(asyncio.wait_for(main(), 60))
        assert conn.overflowed and peer.hung_up == [True]
        assert server.hub.count() == 0
        # cut off, not lost: every create committed (the peer catches up on reconnect)
        assert len(server.forest.sessions()) == 20
    finally:
        server.close()


def test_stdio_cuts_off_a_peer_that_stops_reading_stdout(tmp_path: Path) -> None:
    """Real pipes: the peer writes requests and subscribes but never reads stdout; once
    the pipe and `max_outbox` messages are full, the server stops (`forest serve --stdio`
    then exits 1)."""
    server = Server(Forest.open(tmp_path / "s.db"), limits=Limits(max_outbox=20))
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    lines = [_request("sessions/subscribe", 1)]
    lines += [_request("sessions/create", 2 + i, {"title": "x"}) for i in range(400)]
    data = b"\n".join(lines) + b"\n"
    assert len(data) < 65536  # fits the pipe: written whole even once the server stops
    stdin, stdout = os.fdopen(in_r, "rb", 0), os.fdopen(out_w, "wb", 0)

    async def main() -> bool:
        loop = asyncio.get_running_loop()
        feed = loop.run_in_executor(None, os.write, in_w, data)
        try:
            return await serve_stdio(server, stdin, stdout)
        finally:
            await feed

    try:
        assert asyncio.run(asyncio.wait_for(main(), 120)) is False  # cut off
        assert server.hub.count() == 0
        unread = b""
        os.set_blocking(out_r, False)
        while True:  # what the pipe held: whole lines, the subscribe answer first
            try:
                chunk = os.read(out_r, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            unread += chunk
        first = orjson.loads(unread.split(b"\n", 1)[0])
        assert first["id"] == 1 and "subscription" in first["result"]
        assert 0 < len(server.forest.sessions()) <= 400
    finally:
        os.close(in_w)
        os.close(out_r)
        stdin.close()
        server.close()
