"""Connection exhaustion: idle, slow and unauthenticated sockets never lock clients out.

Every attack here runs on loopback against a real server process, bounded in
count (a few hundred sockets at most) and in time (short deadlines set through
`Limits`; each wait is an upper bound for something the server must do).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from .conftest import Running, start, start_limited

TOKEN = "a-token-of-twenty-chars"
LIST = {"jsonrpc": "2.0", "method": "sessions/list", "id": 1}


def _address(server: Running) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _idle_sockets(server: Running, count: int, stack: ExitStack) -> list[socket.socket]:
    socks = []
    for _ in range(count):
        sock = stack.enter_context(closing(socket.create_connection(_address(server))))
        socks.append(sock)
    return socks


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closes `sock` within `within` seconds (reads until EOF)."""
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionError:
        return True
    return True


@pytest.fixture
def quick(tmp_path: Path) -> Iterator[Running]:
    """Short deadlines and a small cap, so each attack is over in seconds."""
    limits = {"header_timeout": 1.0, "auth_timeout": 1.0, "max_connections": 40}
    running = start_limited(tmp_path / "store.db", limits, token=TOKEN)
    yield running
    assert running.stop() == 0


def _list(server: Running, **headers: str) -> httpx.Response:
    auth = {"Authorization": f"Bearer {TOKEN}"} if "Authorization" not in headers else {}
    return httpx.post(server.url + "/rpc", json=LIST, headers={**auth, **headers}, timeout=30)


def test_idle_sockets_do_not_lock_out_a_client(tmp_path: Path) -> None:
    # Before: 64 idle TCP connections gave every client 503 for as long as they stayed.
    server = start(tmp_path / "store.db")
    try:
        with ExitStack() as stack:
            _idle_sockets(server, 300, stack)  # more than the default cap of 256
            reply = httpx.post(server.url + "/rpc", json=LIST, timeout=30)
            assert reply.status_code == 200, reply.text
            assert reply.json()["result"]["total"] == 0
    finally:
        assert server.stop() == 0


def test_a_socket_that_sends_nothing_is_closed_at_the_header_deadline(quick: Running) -> None:
    with ExitStack() as stack:
        (sock,) = _idle_sockets(quick, 1, stack)
        assert _closed_by_server(sock, within=30)


def test_headers_sent_a_byte_at_a_time_are_cut_off_at_the_deadline(quick: Running) -> None:
    # Slowloris: the keep-alive timer restarts on every byte; the header deadline does not.
    with closing(socket.create_connection(_address(quick))) as sock:
        sock.sendall(b"POST /rpc HTTP/1.1\r\nHost: " + _address(quick)[0].encode() + b"\r\n")
        started = time.monotonic()
        closed = False
        while time.monotonic() - started < 30:
            try:
                sock.sendall(b"X")
            except OSError:
                closed = True
                break
            sock.settimeout(0.2)
            try:
                if sock.recv(1) == b"":
                    closed = True
                    break
            except TimeoutError:
                pass
            except ConnectionError:
                closed = True
                break
        assert closed


def test_endless_headers_are_refused_with_431(quick: Running) -> None:
    with closing(socket.create_connection(_address(quick))) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
        answer = b""
        sock.settimeout(30)
        try:
            for _ in range(200):
                sock.sendall(b"X-Filler: " + b"y" * 1000 + b"\r\n")
        except OSError:
            pass
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionError:
            pass
        assert answer.startswith(b"HTTP/1.1 431"), answer[:100]


def test_at_the_cap_idle_sockets_give_way_and_clients_still_get_in(quick: Running) -> None:
    with ExitStack() as stack:
        idle = _idle_sockets(quick, 40, stack)  # the whole cap
        assert _list(quick).status_code == 200  # evicts the oldest idle one
        assert _closed_by_server(idle[0], within=30)
        # A keep-alive client between requests is idle too, and still gets its answers.
        with httpx.Client(base_url=quick.url, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
            for _ in range(5):
                _idle_sockets(quick, 10, stack)
                assert c.post("/rpc", json=LIST).status_code == 200


def test_only_work_fills_the_cap(tmp_path: Path) -> None:
    server = start_limited(tmp_path / "store.db", {"max_connections": 4}, token=TOKEN)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with ExitStack() as stack:
            sockets = [stack.enter_context(connect(server.ws, additional_headers=auth))
                       for _ in range(4)]  # fmt: skip
            for ws in sockets:  # authenticated WebSockets are work: they are not evicted
                ws.send(json.dumps(LIST))
                assert json.loads(ws.recv(timeout=30))["result"]["total"] == 0
            refused = httpx.post(server.url + "/rpc", json=LIST, headers=auth, timeout=30)
            assert refused.status_code == 503
            assert "busy" in refused.text
            sockets[0].close()
        assert _list(server).status_code == 200
    finally:
        assert server.stop() == 0


def test_a_websocket_that_never_authenticates_is_closed_at_the_deadline(quick: Running) -> None:
    with connect(quick.ws) as ws:
        with pytest.raises(Exception) as closed:
            ws.recv(timeout=30)
        assert "4401" in str(closed.value)


def test_websockets_that_never_authenticate_do_not_lock_out_clients(tmp_path: Path) -> None:
    # Before: 32 WebSockets that never sent the auth message locked out every real client.
    server = start(tmp_path / "store.db", env={"FOREST_TOKEN": TOKEN})
    hello = json.dumps({"jsonrpc": "2.0", "method": "rpc.authenticate",
                        "params": {"token": TOKEN}, "id": 0})  # fmt: skip
    try:
        with ExitStack() as stack:
            for _ in range(40):  # more than max_websockets, none authenticated
                stack.enter_context(connect(server.ws))
            with connect(server.ws) as real:
                real.send(hello)
                assert json.loads(real.recv(timeout=30))["result"] == {"authenticated": True}
                real.send(json.dumps(LIST))
                assert json.loads(real.recv(timeout=30))["result"]["total"] == 0
    finally:
        assert server.stop() == 0
