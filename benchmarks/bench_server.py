"""The JSON-RPC server against the library in the same run: appends, snapshot, notifications.

A real `forest serve` subprocess on loopback, same store kind and durability
(WAL, synchronous=NORMAL) as the in-process side. The load generator is a
lean asyncio HTTP/1.1 keep-alive client written here (16 connections, one
request in flight each), so the client's own cost stays small next to the
server's; both share the machine's two cores with the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

import harness
from harness import Row, Section
from sessionforest import Forest

NAME = "server"
APPEND_TARGET = 0.50  # HTTP append throughput >= 50% of in-process Forest.append
SNAPSHOT_TARGET = 2.0  # HTTP forest_snapshot time <= 2x in-process snapshot
CLIENTS = 16
FOREST = str(Path(sys.executable).parent / "forest")
TEXT = "The importer opens its own connection with timeout=0, so the nightly job fails. " * 2


def _payload(i: int) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"{i} {TEXT}"}]}


def _start(db: Path) -> tuple[subprocess.Popen[str], str, int]:
    proc = subprocess.Popen(
        [FOREST, "--db", str(db), "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = re.search(r"http://([\d.]+):(\d+)", line)
    assert found, line
    return proc, found.group(1), int(found.group(2))


class Conn:
    """One keep-alive HTTP/1.1 connection posting JSON-RPC to /rpc."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port

    async def open(self) -> None:
        # A large buffer: the default (64 KiB) pauses the socket every 128 KiB of a
        # 2 MB snapshot answer, which measured the client, not the server.
        self.reader, self.writer = await asyncio.open_connection(
            self.host, self.port, limit=64 * 2**20
        )

    async def call(self, method: str, params: Any) -> Any:
        body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        self.writer.write(
            b"POST /rpc HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (self.host.encode(), self.port, len(body), body)
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))  # type: ignore[union-attr]
        reply = orjson.loads(await self.reader.readexactly(length))
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["result"]

    def close(self) -> None:
        self.writer.close()


def _in_process_appends(db: Path, sessions: list[str], count: int) -> float:
    with Forest.open(db) as forest:
        start = time.perf_counter()
        for i in range(count):
            forest.append(sessions[i % len(sessions)], "user.message", _payload(i))
        return count / (time.perf_counter() - start)


async def _http_appends(host: str, port: int, sessions: list[str], count: int) -> dict[str, Any]:
    conns = [Conn(host, port) for _ in range(CLIENTS)]
    for c in conns:
        await c.open()
    latencies: list[int] = []
    per = count // CLIENTS

    async def client(k: int) -> None:
        conn, sid = conns[k], sessions[k % len(sessions)]
        for i in range(per):
            t0 = time.perf_counter_ns()
            await conn.call("sessions/append", [sid, "user.message", _payload(i)])
            latencies.append(time.perf_counter_ns() - t0)

    start = time.perf_counter()
    await asyncio.gather(*(client(k) for k in range(CLIENTS)))
    elapsed = time.perf_counter() - start
    for c in conns:
        c.close()
    return {
        "rate": per * CLIENTS / elapsed,
        "p50": harness.percentile(latencies, 50),
        "p99": harness.percentile(latencies, 99),
    }


async def _snapshot_times(host: str, port: int, sid: str, runs: int) -> list[int]:
    conn = Conn(host, port)
    await conn.open()
    times = []
    for _ in range(runs + 1):
        t0 = time.perf_counter_ns()
        doc = await conn.call("sessions/forest_snapshot", {"session_id": sid})
        times.append(time.perf_counter_ns() - t0)
        assert len(doc["nodes"]) >= 10_000
    conn.close()
    return times[1:]


async def _notify_latency(host: str, port: int, sid: str, count: int) -> list[int]:
    from websockets.asyncio.client import connect

    conn = Conn(host, port)
    await conn.open()
    latencies = []
    async with connect(f"ws://{host}:{port}/ws") as ws:
        await ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "sessions/subscribe",
                    "params": {"session_id": sid},
                }
            )
        )
        await ws.recv()
        for i in range(count):
            t0 = time.perf_counter_ns()
            await conn.call("sessions/append", [sid, "user.message", _payload(i)])
            await ws.recv()
            latencies.append(time.perf_counter_ns() - t0)
    conn.close()
    return latencies


def _stack() -> str:
    from importlib.util import find_spec

    http = "httptools" if find_spec("httptools") else "h11"
    loop = "uvloop" if find_spec("uvloop") else "asyncio"
    return f"{http} and {loop} (the [server] extra installs both)"


def run(quick: bool) -> Section:
    appends, runs, big = (800, 3, 10_000) if quick else (4_000, 5, 10_000)
    work = harness.WORK / "server"
    work.mkdir(parents=True, exist_ok=True)
    template = harness.fresh_store(work / "template.db")
    with Forest.open(template) as forest:
        sessions = [forest.create_session(title=f"bench {k}") for k in range(CLIENTS)]
        tree = forest.create_session(title="10k")
        for start in range(0, big, 500):
            forest.append_many(
                tree, [("user.message", _payload(i), None) for i in range(start, start + 500)]
            )
    lib_rates, http_rates, p50s, p99s = [], [], [], []
    for r in range(runs):
        for side in ("lib", "http") if r % 2 == 0 else ("http", "lib"):
            db = harness.copy_store(template, work / f"{side}.db")
            if side == "lib":
                lib_rates.append(_in_process_appends(db, sessions, appends))
            else:
                proc, host, port = _start(db)
                try:
                    got = asyncio.run(_http_appends(host, port, sessions, appends))
                finally:
                    proc.terminate()
                    proc.wait(timeout=60)
                http_rates.append(got["rate"])
                p50s.append(got["p50"])
                p99s.append(got["p99"])
            harness.remove_db(db)
    db = harness.copy_store(template, work / "read.db")
    with Forest.open(db) as forest:
        lib_snap = harness.hot_times(runs * 2, {"s": lambda: forest.snapshot(tree)})["s"]
    proc, host, port = _start(db)
    try:
        http_snap = asyncio.run(_snapshot_times(host, port, tree, runs * 2))
        notify = asyncio.run(_notify_latency(host, port, sessions[0], 200 if quick else 500))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    harness.remove_db(db)
    lib_rate, http_rate = harness.median(lib_rates), harness.median(http_rates)
    append_ratio = http_rate / lib_rate
    snap_ratio = harness.median(http_snap) / harness.median(lib_snap)
    return Section(
        name=NAME,
        title="9. The JSON-RPC server",
        summary=(
            f"`forest serve` as a subprocess on loopback against the library in the same run "
            f"(fresh copies of one store, WAL + synchronous=NORMAL both). Appends: {appends:,} "
            f"`sessions/append` of a ~170-character `user.message` from {CLIENTS} keep-alive "
            f"HTTP connections (one request in flight each, one session each) against "
            f"`Forest.append` in a loop over the same sessions; {runs} runs per side, "
            f"alternating. Snapshot: `sessions/forest_snapshot` of a {big:,}-entry session "
            f"(request to parsed answer) against `Forest.snapshot` in-process. Notification: "
            f"an HTTP append to a session a WebSocket subscribed to, from sending the request "
            f"to receiving `sessions/changed` (an upper bound of commit to client)."
        ),
        rows=[
            Row(
                "appends/s (HTTP, 16 clients / in-process)",
                harness.rate(http_rate, "appends"),
                harness.rate(lib_rate, "appends"),
                harness.ratio(append_ratio),
                f">= {APPEND_TARGET:.2f}x",
                harness.verdict(append_ratio >= APPEND_TARGET),
            ),
            Row(
                "HTTP append latency p50 / p99",
                f"{harness.ms(harness.median(p50s))} / {harness.ms(harness.median(p99s))}",
                "",
            ),
            Row(
                f"forest_snapshot, {big:,} entries (HTTP / in-process)",
                harness.ms(harness.median(http_snap)),
                harness.ms(harness.median(lib_snap)),
                harness.ratio(snap_ratio),
                f"<= {SNAPSHOT_TARGET:.1f}x",
                harness.verdict(snap_ratio <= SNAPSHOT_TARGET),
            ),
            Row(
                "append → sessions/changed p50 / p99",
                f"{harness.ms(harness.percentile(notify, 50))}"
                f" / {harness.ms(harness.percentile(notify, 99))}",
                "",
            ),
        ],
        notes=[
            "Per-run appends/s, HTTP: "
            + ", ".join(f"{x:,.0f}" for x in http_rates)
            + "; in-process: "
            + ", ".join(f"{x:,.0f}" for x in lib_rates)
            + ".",
            f"Server stack: uvicorn with {_stack()}. Machine shared with other work "
            f"(load before: {os.getloadavg()[0]:.1f}).",
        ],
    )
