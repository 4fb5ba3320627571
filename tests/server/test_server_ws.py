"""WebSocket: subscriptions, `sessions/changed` in commit order, replay after a reconnect,
resync after a restart, and the stdio transport driven by a real child process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from .conftest import FOREST, TEXT, Running, call, check_result, start


class Peer:
    """A JSON-RPC peer over one WebSocket: answers by id, notifications in arrival order."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.notes: list[dict[str, Any]] = []
        self.next_id = 0

    def call(self, method: str, params: Any = None) -> Any:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "method": method, "id": self.next_id}
        if params is not None:
            message["params"] = params
        self.socket.send(json.dumps(message))
        while True:
            reply = json.loads(self.socket.recv(timeout=30))
            if reply.get("id") == self.next_id:
                assert "error" not in reply, reply
                check_result(method, reply["result"])
                return reply["result"]
            self.notes.append(reply)

    def wait(self, count: int) -> list[dict[str, Any]]:
        while len(self.notes) < count:
            self.notes.append(json.loads(self.socket.recv(timeout=30)))
        return self.notes


def _append(http: httpx.Client, sid: str, n: int = 1) -> list[str]:
    return [
        call(http, "sessions/append", [sid, "user.message", {"content": TEXT}])["id"]
        for _ in range(n)
    ]


def test_subscribers_get_every_change_once_in_order(server: Running, http: httpx.Client) -> None:
    with connect(server.ws) as a, connect(server.ws) as b:
        everything, one = Peer(a), Peer(b)
        all_sub = everything.call("sessions/subscribe")
        sid = call(http, "sessions/create", {"title": "watched"})["id"]
        other = call(http, "sessions/create")["id"]
        mine = one.call("sessions/subscribe", {"session_id": sid})
        assert all_sub["resync"] is False and mine["session_id"] == sid
        ids = _append(http, sid, 3) + _append(http, other, 1)
        call(http, "sessions/move_head", [sid, ids[0]])
        call(http, "sessions/end", [sid])
        params = [n["params"] for n in everything.wait(8)]
        assert all(n["method"] == "sessions/changed" for n in everything.notes)
        assert [p["seq"] for p in params] == list(range(1, 9))
        assert [p["change"] for p in params] == [
            "created",
            "created",
            "appended",
            "appended",
            "appended",
            "appended",
            "head_moved",
            "status",
        ]
        assert [p["entry_ids"] for p in params[2:6]] == [[i] for i in ids]
        assert [p["session_id"] for p in params[2:6]] == [sid, sid, sid, other]
        assert params[6]["head"] == ids[0] and params[7]["status"] == "ended"
        mine_notes = [n["params"] for n in one.wait(5)]
        assert {p["session_id"] for p in mine_notes} == {sid}
        assert [p["change"] for p in mine_notes] == ["appended"] * 3 + ["head_moved", "status"]
        assert [p["first_sequence"] for p in mine_notes[:3]] == [1, 2, 3]
        assert mine_notes[-1]["status"] == "ended"
        assert one.call("sessions/unsubscribe", [mine["subscription"]])["removed"] is True
        _append(http, other, 1)
        assert everything.wait(9)[-1]["params"]["seq"] == 9


def test_a_rename_is_announced_to_the_chats_subscribers(
    server: Running, http: httpx.Client
) -> None:
    sid = call(http, "sessions/create", {"title": "before"})["id"]
    head = _append(http, sid)[0]
    with connect(server.ws) as socket:
        peer = Peer(socket)
        peer.call("sessions/subscribe", {"session_id": sid})
        call(http, "sessions/rename", {"session_id": sid, "title": "after"})
        [note] = [n["params"] for n in peer.wait(1)]
    assert (note["session_id"], note["change"], note["head"]) == (sid, "renamed", head)
    assert note["status"] == "active" and note["entry_ids"] == []
    assert call(http, "sessions/get", [sid])["title"] == "after"


def test_reconnect_replays_what_was_missed(server: Running, http: httpx.Client) -> None:
    sid = call(http, "sessions/create")["id"]
    with connect(server.ws) as socket:
        peer = Peer(socket)
        sub = peer.call("sessions/subscribe", {"session_id": sid})
        _append(http, sid, 2)
        last = peer.wait(2)[-1]["params"]
    missed = _append(http, sid, 3)
    with connect(server.ws) as socket:
        peer = Peer(socket)
        again = peer.call(
            "sessions/subscribe", {"session_id": sid, "since": last["seq"], "epoch": last["epoch"]}
        )
        assert again["replayed"] == 3 and again["resync"] is False
        _append(http, sid, 1)
        notes = [n["params"] for n in peer.wait(4)]
        assert [n["entry_ids"][0] for n in notes[:3]] == missed
        assert [n["seq"] for n in notes] == list(range(last["seq"] + 1, last["seq"] + 5))
        # The durable catch-up: entries after the last sequence seen.
        page = peer.call("sessions/entries", {"session_id": sid, "after_sequence": 2})
        assert [e["id"] for e in page["entries"]][:3] == missed
    assert sub["subscription"] != again["subscription"]


def test_restart_says_resync(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    first = start(db)
    with connect(first.ws) as socket:
        peer = Peer(socket)
        peer.call("sessions/subscribe")
        peer.call("sessions/create")
        seen = peer.wait(1)[-1]["params"]
    assert first.stop() == 0
    second = start(db)
    try:
        with connect(second.ws) as socket:
            answer = Peer(socket).call(
                "sessions/subscribe", {"since": seen["seq"], "epoch": seen["epoch"]}
            )
            assert answer["resync"] is True and answer["epoch"] != seen["epoch"]
    finally:
        assert second.stop() == 0


def test_subscribe_over_http_says_what_to_use(http: httpx.Client) -> None:
    reply = http.post("/rpc", json={"jsonrpc": "2.0", "method": "sessions/subscribe", "id": 1})
    error = reply.json()["error"]
    assert error["code"] == -32003 and "WebSocket" in error["message"]


def test_stdio_child_process(tmp_path: Path) -> None:
    """A harness spawns `forest serve --stdio`: answers and notifications, one per line."""
    child = subprocess.Popen(
        [FOREST, "--db", str(tmp_path / "store.db"), "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None

    def send(message: Any) -> None:
        child.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        child.stdin.flush()  # type: ignore[union-attr]

    def read() -> Any:
        return json.loads(child.stdout.readline())  # type: ignore[union-attr]

    send({"jsonrpc": "2.0", "method": "sessions/subscribe", "id": 1})
    assert read()["result"]["seq"] == 0
    send({"jsonrpc": "2.0", "method": "sessions/create", "params": {"title": "child"}, "id": 2})
    lines = [read(), read()]
    created = next(m for m in lines if m.get("id") == 2)["result"]
    note = next(m for m in lines if m.get("method") == "sessions/changed")["params"]
    assert note["session_id"] == created["id"] and note["change"] == "created"
    send(
        [
            {
                "jsonrpc": "2.0",
                "method": "sessions/append",
                "id": 3,
                "params": [created["id"], "user.message", {"content": TEXT}],
            },
            {"jsonrpc": "2.0", "method": "nope", "id": 4},
        ]
    )
    got = [read(), read()]
    batch = next(m for m in got if isinstance(m, list))
    assert [r["id"] for r in batch] == [3, 4] and batch[1]["error"]["code"] == -32601
    send("not json")
    assert read()["error"]["code"] == -32600
    child.stdin.write(b"{broken\n")
    child.stdin.close()
    assert read()["error"]["code"] == -32700
    assert child.wait(timeout=30) == 0
    assert child.stdout.read() == b""
    child.stdout.close()
    assert child.stderr is not None
    child.stderr.close()


def test_stdio_child_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    import signal

    child = subprocess.Popen(
        [FOREST, "--db", str(tmp_path / "store.db"), "serve", "--stdio"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(b'{"jsonrpc": "2.0", "method": "sessions/create", "id": 1}\n')
    child.stdin.flush()
    assert json.loads(child.stdout.readline())["result"]["id"]
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=30) == 0
    for stream in (child.stdin, child.stdout, child.stderr):
        stream.close()  # type: ignore[union-attr]


def test_a_cli_append_to_the_same_store_is_pushed_live(server: Running, http: httpx.Client) -> None:
    """Another process writing the store (here `forest append`) is noticed within a second."""
    sid = call(http, "sessions/create", {"title": "terminal"})["id"]
    ours = call(http, "sessions/append", [sid, "user.message", {"content": TEXT}])["id"]
    with connect(server.ws) as socket:
        peer = Peer(socket)
        peer.call("sessions/subscribe", {"session_id": sid})
        done = subprocess.run(
            [FOREST, "--db", str(server.db), "append", sid, "-k", "user.message", "-t", "shell"],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        entry = done.stdout.strip()
        (note,) = [n["params"] for n in peer.wait(1)]
        assert (note["session_id"], note["change"]) == (sid, "head_moved"), note
        assert note["head"] == entry != ours
        # Its own writes are not told twice: one append, one notification.
        mine = call(http, "sessions/append", [sid, "user.message", {"content": TEXT}])["id"]
        notes = [n["params"] for n in peer.wait(2)]
        assert notes[1]["change"] == "appended" and notes[1]["entry_ids"] == [mine]
        with pytest.raises(TimeoutError):
            socket.recv(timeout=1.0)


def test_a_cli_rename_is_pushed_live_and_the_servers_own_once(
    server: Running, http: httpx.Client
) -> None:
    """`forest rename` in a terminal (another process) is noticed as `renamed`, after
    this server's own append to the chat; the server's own rename is told once."""
    sid = call(http, "sessions/create", {"title": "terminal"})["id"]
    call(http, "sessions/append", [sid, "user.message", {"content": TEXT}])
    with connect(server.ws) as socket:
        peer = Peer(socket)
        peer.call("sessions/subscribe", {"session_id": sid})
        subprocess.run(
            [FOREST, "--db", str(server.db), "rename", sid, "from the shell"],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        (note,) = [n["params"] for n in peer.wait(1)]
        assert (note["session_id"], note["change"]) == (sid, "renamed"), note
        assert call(http, "sessions/get", [sid])["title"] == "from the shell"
        call(http, "sessions/rename", {"session_id": sid, "title": "from the UI"})
        notes = [n["params"] for n in peer.wait(2)]
        assert notes[1]["change"] == "renamed"
        with pytest.raises(TimeoutError):
            socket.recv(timeout=1.0)
