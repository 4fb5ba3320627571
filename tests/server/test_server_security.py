"""Token, Host and Origin checks, refusing to start unsafely, and the limits."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from .conftest import FOREST, Running, call, start

TOKEN = "s3cret-token_value"


@pytest.fixture
def guarded(tmp_path: Path) -> Running:
    running = start(tmp_path / "store.db", env={"FOREST_TOKEN": TOKEN})
    yield running  # type: ignore[misc]
    assert running.stop() == 0


def _post(url: str, headers: dict[str, str]) -> httpx.Response:
    body = {"jsonrpc": "2.0", "method": "sessions/list", "id": 1}
    return httpx.post(url + "/rpc", json=body, headers=headers)


def test_token_required_on_every_request(guarded: Running) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        denied = _post(guarded.url, headers)
        assert denied.status_code == 401 and denied.content == b""
    assert httpx.get(guarded.url + "/healthz").status_code == 401
    ok = _post(guarded.url, {"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200 and ok.json()["result"]["total"] == 0


def test_only_the_web_ui_shell_is_served_without_the_token(guarded: Running) -> None:
    page = httpx.get(guarded.url + "/")
    assert page.status_code == 200 and '<div id="root">' in page.text
    assets = [a.split('"')[0] for a in page.text.split('src="./assets/')[1:]]
    assert assets, "the page names its script"
    script = httpx.get(f"{guarded.url}/assets/{assets[0]}")
    assert script.status_code == 200 and len(script.content) > 1000
    # Data, health and anything else still need it, whatever the method.
    for method, path in (("GET", "/healthz"), ("GET", "/rpc"), ("POST", "/"), ("GET", "/x.db")):
        denied = httpx.request(method, guarded.url + path)
        assert denied.status_code == 401, (method, path)
    assert httpx.get(guarded.url + "/assets/../rpc").status_code in (401, 404)


def test_websocket_token_by_header_subprotocol_or_first_message(guarded: Running) -> None:
    hello = json.dumps({"jsonrpc": "2.0", "method": "sessions/list", "id": 1})
    with connect(guarded.ws, additional_headers={"Authorization": f"Bearer {TOKEN}"}) as ws:
        ws.send(hello)
        assert json.loads(ws.recv(timeout=30))["result"]["total"] == 0
    with connect(guarded.ws, subprotocols=["jsonrpc", f"bearer.{TOKEN}"]) as ws:  # type: ignore[list-item]
        assert ws.subprotocol == "jsonrpc"
        ws.send(hello)
        assert json.loads(ws.recv(timeout=30))["result"]["total"] == 0
    with pytest.raises(InvalidStatus) as denied:
        connect(guarded.ws, subprotocols=["jsonrpc", "bearer.wrong"])  # type: ignore[list-item]
    assert denied.value.response.status_code == 401
    with connect(guarded.ws) as ws:
        ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "method": "rpc.authenticate",
                    "params": {"token": TOKEN},
                    "id": 0,
                }
            )
        )
        assert json.loads(ws.recv(timeout=30))["result"] == {"authenticated": True}
        ws.send(hello)
        assert json.loads(ws.recv(timeout=30))["result"]["total"] == 0
    with connect(guarded.ws) as ws:
        ws.send(hello)  # not the token: closed with nothing sent back
        with pytest.raises(Exception) as closed:
            ws.recv(timeout=30)
        assert "4401" in str(closed.value)


def test_cross_origin_and_rebound_hosts_are_refused(server: Running) -> None:
    port = server.url.rsplit(":", 1)[1]
    evil = _post(server.url, {"Origin": "http://evil.example"})
    assert evil.status_code == 403
    rebound = _post(server.url, {"Host": f"evil.example:{port}"})
    assert rebound.status_code == 403
    assert _post(server.url, {"Origin": server.url}).status_code == 200
    assert _post(server.url, {"Origin": f"http://localhost:{port}"}).status_code == 200
    with pytest.raises(InvalidStatus) as denied:
        connect(server.ws, origin="http://evil.example")  # type: ignore[arg-type]
    assert denied.value.response.status_code == 403


def test_non_loopback_without_token_refuses_to_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [FOREST, "--db", str(tmp_path / "s.db"), "serve", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 1
    assert "--token" in done.stderr and "refusing to start" in done.stderr
    assert not (tmp_path / "s.db").exists()


def test_limits(server: Running, http: httpx.Client) -> None:
    huge = b'{"jsonrpc": "2.0", "method": "sessions/list", "id": 1, "x": "' + b"a" * (17 * 2**20)
    too_big = http.post("/rpc", content=huge + b'"}', headers={"content-type": "application/json"})
    assert too_big.status_code == 413 and "exceeds" in too_big.json()["error"]["message"]
    deep: object = "x"
    for _ in range(70):
        deep = [deep]
    nested = http.post(
        "/rpc", json={"jsonrpc": "2.0", "method": "sessions/list", "id": 1, "params": [deep]}
    )
    assert nested.json()["error"]["code"] == -32600 and "deeper" in nested.text
    sid = call(http, "sessions/create")["id"]
    long_query = http.post(
        "/rpc",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "sessions/search_chats",
            "params": {"query": "x" * 1001},
        },
    ).json()
    assert long_query["error"]["code"] == -32602 and long_query["error"]["data"]["field"] == "query"
    page = http.post(
        "/rpc",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "sessions/entries",
            "params": {"session_id": sid, "limit": 1001},
        },
    ).json()
    assert page["error"]["data"]["field"] == "limit"
    form = http.post("/rpc", content=b"{}", headers={"content-type": "text/plain"})
    assert form.status_code == 415


def test_websocket_count_is_limited(server: Running) -> None:
    from contextlib import ExitStack

    with ExitStack() as stack:
        open_ = [stack.enter_context(connect(server.ws)) for _ in range(32)]
        extra = stack.enter_context(connect(server.ws))
        with pytest.raises(Exception) as closed:
            extra.recv(timeout=30)
        assert "1013" in str(closed.value)
        open_[0].send(json.dumps({"jsonrpc": "2.0", "method": "sessions/list", "id": 1}))
        assert json.loads(open_[0].recv(timeout=30))["result"]["total"] == 0
