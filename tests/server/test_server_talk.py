"""`chat/reply` against the provider stand-in (tests/standin.py): a real `forest serve`
whose official SDK client streams from a local server speaking the provider's API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from .conftest import TEXT, Running, call, check_result, start

MODELS = {"anthropic": "claude-standin", "openai": "gpt-standin"}


@pytest.fixture(params=sorted(MODELS))
def talking(request: pytest.FixtureRequest, provider_standin: Any, tmp_path: Path) -> Any:
    provider = request.param
    env = {**provider_standin.environ(), "FOREST_PROVIDER": provider,
           "FOREST_MODEL": MODELS[provider]}  # fmt: skip
    running = start(tmp_path / "store.db", env=env)
    yield provider, running, provider_standin
    assert running.stop() == 0


def _ask(running: Running, params: dict[str, Any], *, stop_after: int | None = None) -> Any:
    """chat/reply over a WebSocket: (the answer or error, the chat/delta texts)."""
    deltas: list[str] = []
    with connect(running.ws) as ws:
        ws.send(json.dumps({"jsonrpc": "2.0", "method": "chat/reply", "params": params, "id": 1}))
        while True:
            message = json.loads(ws.recv(timeout=30))
            if message.get("method") == "chat/delta":
                deltas.append(message["params"]["text"])
                if stop_after is not None and len(deltas) == stop_after:
                    stop = {"reply_id": params["reply_id"]}
                    ws.send(json.dumps({"jsonrpc": "2.0", "method": "chat/stop",
                                        "params": stop, "id": 2}))  # fmt: skip
            elif message.get("id") == 1:
                return message, deltas


def _session(http: httpx.Client) -> str:
    sid: str = call(http, "sessions/create", {"title": "talk"})["id"]
    call(http, "sessions/append", [sid, "user.message", {"content": TEXT}])
    return sid


def test_a_reply_streams_and_lands_as_entries(talking: Any) -> None:
    provider, running, standin = talking
    standin.reply_text("General Kenobi! You are a bold one.", chunks=4)
    with httpx.Client(base_url=running.url) as http:
        sid = _session(http)
        assert call(http, "chat/model") == {"configured": True, "provider": provider,
                                            "model": MODELS[provider],
                                            "api": {"anthropic": "messages",
                                                    "openai": "responses"}[provider]}  # fmt: skip
        answer, deltas = _ask(running, {"session_id": sid, "reply_id": "r1"})
        assert "result" in answer, answer
        result = answer["result"]
        check_result("chat/reply", result)
        assert "".join(deltas) == "General Kenobi! You are a bold one." and len(deltas) >= 2
        assert (result["incomplete"], result["stopped"]) == (False, False)
        path = call(http, "sessions/log", {"session_id": sid})
        assert path[-1]["id"] == result["entry"]["id"]
        assert path[-1]["payload"]["content"] == [
            {"type": "text", "text": "General Kenobi! You are a bold one."}
        ]
        assert any(e["kind"] == "provider.notification" for e in path)
    sent = standin.requests[-1]
    assert sent.body["stream"] is True and sent.body["model"] == MODELS[provider]
    assert "hello there" in json.dumps(sent.body)  # the projected branch was sent


def test_stop_records_an_incomplete_message(talking: Any) -> None:
    _, running, standin = talking
    standin.reply_text(" ".join(f"word{i}" for i in range(40)), chunks=40, chunk_delay=0.1)
    with httpx.Client(base_url=running.url) as http:
        sid = _session(http)
        answer, deltas = _ask(running, {"session_id": sid, "reply_id": "r2"}, stop_after=2)
        result = answer["result"]
        assert result["stopped"] is True and result["incomplete"] is True
        assert len(deltas) < 40
        head = call(http, "sessions/log", {"session_id": sid})[-1]
        assert head["kind"] == "assistant.message" and head["payload"]["incomplete"] is True


def test_regenerate_branches_from_the_parent(talking: Any) -> None:
    _, running, standin = talking
    standin.reply_text("first answer")
    standin.reply_text("second answer")
    with httpx.Client(base_url=running.url) as http:
        sid = _session(http)
        question = call(http, "sessions/get", {"session_id": sid})["head"]
        first = _ask(running, {"session_id": sid, "reply_id": "a"})[0]["result"]["entry"]
        # "regenerate": a new reply below the question the first one answered
        second = _ask(running, {"session_id": sid, "reply_id": "b",
                                "parent": question})[0]["result"]["entry"]  # fmt: skip
        path = [e["id"] for e in call(http, "sessions/log", {"session_id": sid})]
        assert question in path and second["id"] == path[-1] and first["id"] not in path
        assert call(http, "sessions/entry", {"session_id": sid, "entry_id": first["id"]})
        snap = call(http, "sessions/forest_snapshot", {"session_id": sid})
        assert len(snap["tips"]) == 2 and snap["head"] == second["id"]
        assert standin.requests[-1].body == standin.requests[-2].body  # same context sent


def test_a_provider_failure_says_why_and_writes_nothing(talking: Any) -> None:
    _, running, standin = talking
    standin.reply_error(429, "insufficient_quota")
    with httpx.Client(base_url=running.url) as http:
        sid = _session(http)
        before = call(http, "sessions/get", {"session_id": sid})["entry_count"]
        answer, _ = _ask(running, {"session_id": sid, "reply_id": "r3"})
        assert answer["error"]["code"] == -32004
        assert answer["error"]["data"]["type"] == "ProviderError"
        assert answer["error"]["data"]["reason"] == "quota"
        assert call(http, "sessions/get", {"session_id": sid})["entry_count"] == before


def test_stop_from_another_connection_stops_nothing(talking: Any) -> None:
    # Before: replies were kept in one process-wide table keyed by the caller's reply id,
    # so any client could stop any other's reply by naming its id.
    _, running, standin = talking
    standin.reply_text(" ".join(f"word{i}" for i in range(20)), chunks=20, chunk_delay=0.05)
    with httpx.Client(base_url=running.url) as http, connect(running.ws) as other:
        sid = _session(http)
        deltas: list[str] = []
        with connect(running.ws) as ws:
            ws.send(json.dumps({"jsonrpc": "2.0", "method": "chat/reply", "id": 1,
                                "params": {"session_id": sid, "reply_id": "same"}}))  # fmt: skip
            while True:
                message = json.loads(ws.recv(timeout=30))
                if message.get("method") == "chat/delta":
                    deltas.append(message["params"]["text"])
                    if len(deltas) == 2:  # the reply is running: another client tries
                        stop = {"jsonrpc": "2.0", "method": "chat/stop", "id": 9,
                                "params": {"reply_id": "same"}}  # fmt: skip
                        other.send(json.dumps(stop))
                        tried = json.loads(other.recv(timeout=30))
                        assert tried["result"] == {"reply_id": "same", "stopping": False}
                elif message.get("id") == 1:
                    break
        result = message["result"]
        assert (result["stopped"], result["incomplete"]) == (False, False)
        assert len(deltas) >= 2
        # Over HTTP each request is a connection of its own: it cannot stop a reply either.
        assert call(http, "chat/stop", {"reply_id": "same"})["stopping"] is False
