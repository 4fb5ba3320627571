"""Several processes at once through one server: concurrent appenders seen by a subscriber
in commit order with no gaps, and kill -9 during a write storm losing nothing acknowledged."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
from websockets.sync.client import connect

from sessionforest import Forest

from .conftest import FOREST, TEXT, Running, call

APPENDER = """
import sys, httpx
url, sid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with httpx.Client(base_url=url, timeout=60) as http:
    for i in range(n):
        body = {"jsonrpc": "2.0", "id": i, "method": "sessions/append",
                "params": {"session_id": sid, "kind": "user.message",
                           "payload": {"content": [{"type": "text", "text": f"x {i}"}]}}}
        reply = http.post("/rpc", json=body).json()
        assert "result" in reply, reply
        print(reply["result"]["id"], flush=True)
"""


def test_two_appending_processes_and_a_subscriber(server: Running, http: httpx.Client) -> None:
    shared = call(http, "sessions/create", {"title": "shared"})["id"]
    per = 60
    with connect(server.ws) as socket:
        socket.send(json.dumps({"jsonrpc": "2.0", "method": "sessions/subscribe", "id": 1}))
        assert json.loads(socket.recv(timeout=30))["result"]["seq"] == 1  # the create
        writers = [
            subprocess.Popen(
                [sys.executable, "-c", APPENDER, server.url, shared, str(per), name],
                stdout=subprocess.PIPE,
                text=True,
            )
            for name in ("left", "right")
        ]
        acknowledged = []
        for writer in writers:
            out, _ = writer.communicate(timeout=120)
            assert writer.returncode == 0
            acknowledged += out.split()
        notes = [json.loads(socket.recv(timeout=30))["params"] for _ in range(2 * per)]
    assert [n["seq"] for n in notes] == list(range(2, 2 + 2 * per))  # none lost, none twice
    ids = [n["entry_ids"][0] for n in notes]
    assert sorted(ids) == sorted(acknowledged) and len(set(ids)) == 2 * per
    # Commit order: the entries' sequences, assigned inside each write transaction, rise.
    assert [n["first_sequence"] for n in notes] == list(range(1, 2 * per + 1))
    page = call(http, "sessions/entries", {"session_id": shared, "limit": 1000})
    assert [e["sequence"] for e in page["entries"]] == list(range(1, 2 * per + 1))
    assert [e["id"] for e in page["entries"]] == ids


def test_kill_9_during_a_write_storm_loses_no_acknowledged_append(tmp_path: Path) -> None:
    from .conftest import start

    db = tmp_path / "store.db"
    running = start(db)
    with httpx.Client(base_url=running.url) as http:
        sessions = [call(http, "sessions/create")["id"] for _ in range(4)]
    acknowledged: list[tuple[str, str]] = []
    stop = threading.Event()

    def storm(sid: str) -> None:
        with httpx.Client(base_url=running.url, timeout=10) as http:
            turn = [
                {"kind": "user.message", "payload": {"content": TEXT}},
                {"kind": "assistant.message", "payload": {"content": TEXT}},
            ]
            i = 0
            while not stop.is_set():
                i += 1
                try:
                    if i % 3:
                        body = {
                            "jsonrpc": "2.0",
                            "id": i,
                            "method": "sessions/append",
                            "params": [sid, "user.message", {"content": TEXT}],
                        }
                    else:
                        body = {
                            "jsonrpc": "2.0",
                            "id": i,
                            "method": "sessions/append_many",
                            "params": {"session_id": sid, "items": turn},
                        }
                    reply = http.post("/rpc", json=body).json()
                except (httpx.HTTPError, ValueError):
                    return  # the server died under us: this one was never acknowledged
                result = reply["result"]
                for entry in result if isinstance(result, list) else [result]:
                    acknowledged.append((sid, entry["id"]))

    threads = [threading.Thread(target=storm, args=(sid,)) for sid in sessions]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while len(acknowledged) < 300 and time.monotonic() < deadline:
        time.sleep(0.05)
    running.proc.send_signal(signal.SIGKILL)
    running.stop()
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    assert len(acknowledged) >= 300
    with Forest.open(db, readonly=True) as forest:
        stored = {(sid, e.id) for sid in sessions for e in forest.entries(sid)}
        for sid in sessions:
            assert [e.sequence for e in forest.entries(sid)] == list(
                range(1, forest.session(sid).entry_count + 1)
            )
    assert set(acknowledged) <= stored
    check = subprocess.run([FOREST, "--db", str(db), "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.strip().endswith(": ok"), check.stdout
