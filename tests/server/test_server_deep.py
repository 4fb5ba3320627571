"""Deep search through the server: search/deep, the UI's pre-started search over a
WebSocket, search/usage, against a real `forest serve` whose SDKs talk to the stand-in."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
from websockets.sync.client import connect

from sessionforest import Forest
from standin import ProviderStandIn

from .conftest import Running, call, start
from .test_server_ws import Peer

NOW = "2026-09-30T15:00:00+00:00"


def _store(db: Path) -> dict[str, str]:
    with Forest.open(db) as forest:
        ids = {}
        for key, title, when in (
            ("new", "Kanji flashcards", "2026-09-27T10:00:00.000Z"),
            ("old", "Kanji flashcards (earlier)", "2026-08-20T10:00:00.000Z"),
        ):
            sid = forest.create_session(title, "claude", created_at=when)
            for text in ("build a kanji deck", "password: hunter2hunter2 for the deck api"):
                forest.append(sid, "user.message", {"content": [{"type": "text", "text": text}]})
            ids[key] = sid
    return ids


def _until(check: Any, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(check())


def _serve_with_model(db: Path, standin: ProviderStandIn) -> Running:
    env = {**standin.environ(), "FOREST_PROVIDER": "anthropic", "FOREST_MODEL": "m"}
    return start(db, env=env)


def _type_unsure(peer: Peer) -> None:
    """The UI's as-you-type search of an unsure query, asking for a pre-start."""
    typed = peer.call(
        "sessions/search_chats", {"query": "kanji flashcards", "now": NOW, "prestart": True}
    )
    assert typed["confident"] is False


def test_a_prestart_is_dropped_when_its_websocket_closes(
    tmp_path: Path, provider_standin: ProviderStandIn
) -> None:
    db = tmp_path / "s.db"
    _store(db)
    server = _serve_with_model(db, provider_standin)
    try:
        with connect(server.ws) as socket:
            _type_unsure(Peer(socket))
            # Warmed: the prepared search's SDK client keeps its connection open for Enter.
            assert _until(lambda: [r.path for r in provider_standin.requests] == ["/v1/models"])
            assert _until(lambda: provider_standin.open_connections == 1)
            time.sleep(0.5)
            assert provider_standin.open_connections == 1
        # The client went away and its pre-start with it (Prestarts.drop: tests/deep),
        # while the server's one SDK client per model keeps its pooled connection for
        # whoever searches next: the next client's search opens no new connection.
        with connect(server.ws) as socket:
            provider_standin.reply_text('{"answer": null}')
            found = Peer(socket).call("search/deep", {"query": "kanji flashcards", "now": NOW})
            assert (found["tier"], found["prestarted"]) == ("model", False)
            assert provider_standin.open_connections == 1
    finally:
        server.stop()
    # Stopping the server closes its clients' connections.
    assert _until(lambda: provider_standin.open_connections == 0, 10)


def test_prestart_then_enter_over_a_websocket(
    tmp_path: Path, provider_standin: ProviderStandIn
) -> None:
    db = tmp_path / "s.db"
    ids = _store(db)
    server = _serve_with_model(db, provider_standin)
    try:
        with connect(server.ws) as socket:
            peer = Peer(socket)
            _type_unsure(peer)
            deadline = time.monotonic() + 30
            while not provider_standin.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            # Prepared in the background: connection warmed, no model turn.
            assert [r.path for r in provider_standin.requests] == ["/v1/models"]
            provider_standin.reply_text('{"answer": "c2"}', input_tokens=77)
            found = peer.call("search/deep", {"query": "kanji flashcards", "now": NOW})
            assert (found["tier"], found["prestarted"], found["fallback"]) == ("model", True, None)
            assert found["answer"] == found["hits"][0]["session_id"] in ids.values()
            # Consumed once: the next Enter starts cold (and finds the quota used up).
            provider_standin.reply_error(429, "insufficient_quota")
            again = peer.call("search/deep", {"query": "kanji flashcards", "now": NOW})
            assert (again["tier"], again["fallback"], again["prestarted"]) == (
                "index",
                "quota",
                False,
            )
            records = peer.call("search/usage")
            assert [(r["tier"], r["input_tokens"]) for r in records] == [
                ("model", 77),
                ("index", 0),
            ]
            listed = peer.call("sessions/list", {"include_hidden": False})  # the sidebar
            assert {s["id"] for s in listed["sessions"]} == set(ids.values())
            # Hidden usage sessions are listed only on request (as `forest list --all`).
            default = peer.call("sessions/list")
            assert {s["id"] for s in default["sessions"]} == set(ids.values())
            every = peer.call("sessions/list", {"include_hidden": True})
            hidden = {s["id"] for s in every["sessions"]} - set(ids.values())
            assert len(hidden) == 2  # the two deep searches' usage records
        for request in provider_standin.requests:
            assert "hunter2hunter2" not in json.dumps(request.body)
            assert "tools" not in request.body
        # Over plain HTTP: sessions/search_chats with deep: true is search/deep.
        with httpx.Client(base_url=server.url) as http:
            provider_standin.reply_text('{"answer": null}')
            doc = call(
                http,
                "sessions/search_chats",
                {"query": "kanji flashcards", "now": NOW, "deep": True},
            )
            assert (doc["tier"], doc["answer"], doc["fallback"]) == ("model", None, None)
    finally:
        server.stop()
