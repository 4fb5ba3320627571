"""A stop ends the server within a bound, whatever its reads are doing.

Before: SIGTERM never finished while the reader threads were stuck (the pool was
shut down with wait=True), after a 5 MB message had pinned them in a search.
Here `test/stall` reads (conftest's runner) pin every reader thread and never
look at their deadline; the server must still stop, exit 0, and keep every
write it acknowledged.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from sessionforest import Forest

from .conftest import _LIMITED, start_limited

STALL = {"jsonrpc": "2.0", "method": "test/stall", "id": 0}


def _stalled_reads(url: str, count: int) -> list[threading.Thread]:
    def post() -> None:
        with contextlib.suppress(httpx.HTTPError):  # the server goes away under it
            httpx.post(url + "/rpc", json=STALL, timeout=120)

    threads = [threading.Thread(target=post, daemon=True) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads


def test_sigterm_stops_an_http_server_whose_readers_are_stuck(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    server = start_limited(db, {"shutdown_grace": 1.0}, stall=True)
    try:
        created = httpx.post(server.url + "/rpc", timeout=30, json={
            "jsonrpc": "2.0", "method": "sessions/create", "params": {"title": "kept"}, "id": 1,
        }).json()["result"]  # fmt: skip
        _stalled_reads(server.url, 6)  # every reader thread, and a queue behind them
        time.sleep(1.0)  # they are running
        started = time.monotonic()
        code = server.stop(signal.SIGTERM)
        took = time.monotonic() - started
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    assert code == 0
    assert took < 30  # bounded: it used to wait forever
    with Forest.open(db) as forest:
        assert forest.session(created["id"]).title == "kept"


def test_sigterm_stops_a_stdio_server_whose_readers_are_stuck(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    spec = json.dumps({"db": str(db), "limits": {"shutdown_grace": 1.0}, "stdio": True,
                       "stall": True})  # fmt: skip
    child = subprocess.Popen(
        [sys.executable, "-c", _LIMITED, spec],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert child.stdin is not None and child.stdout is not None
    try:
        create = {"jsonrpc": "2.0", "method": "sessions/create", "params": {"title": "kept"},
                  "id": 1}  # fmt: skip
        child.stdin.write(json.dumps(create).encode() + b"\n")
        child.stdin.flush()
        sid = json.loads(child.stdout.readline())["result"]["id"]
        for n in range(6):
            child.stdin.write(json.dumps({**STALL, "id": 10 + n}).encode() + b"\n")
        child.stdin.flush()
        time.sleep(1.0)
        child.send_signal(signal.SIGTERM)
        code = child.wait(timeout=60)  # before: never
    finally:
        if child.poll() is None:
            child.kill()
        for stream in (child.stdin, child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    assert code == 0
    with Forest.open(db) as forest:
        assert forest.session(sid).title == "kept"
