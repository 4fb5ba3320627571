"""Subscriptions are bounded per connection, fanned out off the event loop, and the
replay history is bounded in bytes.

Before: one socket could hold any number of subscriptions (31 x 9,900 froze the
loop for 5.5 s on each append) and the history kept 10,000 changes of up to
1,000 ids each (~1 GB possible).
"""

from __future__ import annotations

import asyncio
import json
from contextlib import ExitStack
from typing import Any

import httpx
import orjson
from websockets.sync.client import connect

from sessionforest.server.changes import Change, Hub

from .conftest import TEXT, Running, call
from .test_server_ws import Peer


def _raw(peer: Peer, method: str, params: Any) -> dict[str, Any]:
    peer.next_id += 1
    peer.socket.send(json.dumps({"jsonrpc": "2.0", "method": method, "params": params,
                                 "id": peer.next_id}))  # fmt: skip
    while True:
        reply = json.loads(peer.socket.recv(timeout=30))
        if reply.get("id") == peer.next_id:
            return reply  # type: ignore[no-any-return]
        peer.notes.append(reply)


def test_a_connection_holds_at_most_64_subscriptions(server: Running, http: httpx.Client) -> None:
    sid = call(http, "sessions/create", {"title": "watched"})["id"]
    with connect(server.ws) as socket:
        peer = Peer(socket)
        subs = [peer.call("sessions/subscribe", {"session_id": sid})["subscription"]
                for _ in range(64)]  # fmt: skip
        refused = _raw(peer, "sessions/subscribe", {"session_id": sid})
        assert refused["error"]["code"] == -32003
        assert "already has 64 subscriptions" in refused["error"]["message"]
        assert peer.call("sessions/unsubscribe", {"subscription": subs[0]})["removed"]
        peer.call("sessions/subscribe", {})  # a freed place can be taken again
        # Another connection has its own 64.
        with connect(server.ws) as other:
            Peer(other).call("sessions/subscribe", {"session_id": sid})


def test_every_subscription_of_every_socket_gets_each_change_once(
    server: Running, http: httpx.Client
) -> None:
    sid = call(http, "sessions/create", {"title": "fan-out"})["id"]
    with ExitStack() as stack:
        peers = [Peer(stack.enter_context(connect(server.ws))) for _ in range(4)]
        ids = [[p.call("sessions/subscribe", {"session_id": sid})["subscription"]
                for _ in range(64)] for p in peers]  # fmt: skip
        appended = [call(http, "sessions/append", [sid, "user.message", {"content": TEXT}])["id"]
                    for _ in range(3)]  # fmt: skip
        for peer, theirs in zip(peers, ids, strict=True):
            notes = peer.wait(64 * 3)
            assert len(notes) == 64 * 3
            by_sub: dict[str, list[int]] = {}
            for note in notes:
                params = note["params"]
                assert note["method"] == "sessions/changed"
                by_sub.setdefault(params["subscription"], []).append(params["seq"])
                assert params["entry_ids"][0] in appended
            assert sorted(by_sub) == sorted(theirs)
            seqs = list(by_sub.values())
            assert all(s == seqs[0] and s == sorted(s) and len(s) == 3 for s in seqs)


def test_the_history_is_bounded_in_bytes() -> None:
    hub = Hub(10_000, history_bytes=2**20)
    ids = tuple(f"entry-{n:020d}" for n in range(1000))
    hub.publish(Change(f"s{n}", "appended", ids[-1], "active", ids, 1, 1000) for n in range(500))
    assert hub.seq == 500
    assert hub.history_bytes <= 2**20
    kept = len(hub._history)
    assert 1 <= kept < 20  # ~80 KB each: about a dozen fit
    # A client that saw seq 1 is told to read again; one that saw the latest replays.
    _, answer = hub.subscribe(lambda m: None, None, 1, hub.epoch)
    assert answer["resync"] is True
    _, fresh = hub.subscribe(lambda m: None, None, hub.seq - 1, hub.epoch)
    assert fresh["resync"] is False and fresh["replayed"] == 1


def test_fan_out_runs_off_the_loop_and_keeps_order() -> None:
    got: list[bytes] = []

    async def main() -> None:
        hub = Hub(100)
        loop_thread = asyncio.get_running_loop()
        seen: list[Any] = []

        def push(message: Any) -> None:
            seen.append(asyncio.get_running_loop() is loop_thread)
            got.append(orjson.dumps(message))  # as the connection's outbox serialises it

        sub, _ = hub.subscribe(push, None, None, None)
        sub.release(hub.epoch)
        hub.publish([Change("s", "created", None, "active")])
        hub.publish([Change("s", "head_moved", "e1", "active")])
        for _ in range(200):
            if len(got) == 2:
                break
            await asyncio.sleep(0.01)
        assert seen == [True, True]  # delivered on the loop, made on the fan-out thread

    asyncio.run(main())
    notes = [json.loads(data) for data in got]
    assert [n["params"]["seq"] for n in notes] == [1, 2]
    assert [n["params"]["change"] for n in notes] == ["created", "head_moved"]
