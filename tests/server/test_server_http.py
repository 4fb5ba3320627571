"""The HTTP path of `POST /rpc` (app.py's endpoint, connections.Joined): each answer
leaves in one write with its security headers, a 100 Continue is not held back,
any other method on /rpc is answered 405, with the headers every answer has."""

from __future__ import annotations

import json
import socket
from contextlib import closing

import httpx

from .conftest import Running


def _address(server: Running) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def _request(server: Running, body: bytes, *extra: bytes) -> bytes:
    host, port = _address(server)
    return b"\r\n".join(
        [
            b"POST /rpc HTTP/1.1",
            b"Host: %s:%d" % (host.encode(), port),
            b"Content-Type: application/json",
            b"Content-Length: %d" % len(body),
            *extra,
            b"",
            b"",
        ]
    )


def _split(answer: bytes) -> tuple[list[bytes], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.lower().split(b"\r\n"), body


def _length(lines: list[bytes]) -> int:
    return next(int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length:"))


def test_an_answer_leaves_in_one_write_with_its_headers(server: Running) -> None:
    body = json.dumps({"jsonrpc": "2.0", "method": "sessions/list", "id": 7}).encode()
    with closing(socket.create_connection(_address(server))) as sock:
        sock.settimeout(30)
        for _ in range(3):  # keep-alive: every answer of the connection, not only the first
            sock.sendall(_request(server, body) + body)
            # One recv: the status line, the headers and the whole body arrive together
            # (uvicorn alone wrote the headers and the body apart: two packets).
            lines, got = _split(sock.recv(65536))
            assert lines[0] == b"http/1.1 200 ok"
            assert b"content-type: application/json" in lines
            assert b"x-frame-options: deny" in lines and b"referrer-policy: no-referrer" in lines
            assert len(got) == _length(lines) and json.loads(got)["id"] == 7


def test_a_100_continue_is_sent_before_the_body_is(server: Running) -> None:
    body = json.dumps({"jsonrpc": "2.0", "method": "sessions/list", "id": 1}).encode()
    with closing(socket.create_connection(_address(server))) as sock:
        sock.settimeout(30)
        sock.sendall(_request(server, body, b"Expect: 100-continue"))
        assert sock.recv(65536).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        sock.sendall(body)
        answer = b""
        while b"\r\n\r\n" not in answer or len(_split(answer)[1]) < _length(_split(answer)[0]):
            answer += sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200 OK")
        assert json.loads(_split(answer)[1])["result"]["total"] == 0


def test_other_methods_on_rpc_run_nothing(server: Running) -> None:
    for method in ("GET", "PUT", "DELETE"):
        answer = httpx.request(method, server.url + "/rpc", timeout=30)
        assert answer.status_code == 405, method
        assert answer.headers["allow"] == "POST" and answer.headers["x-frame-options"] == "DENY"
        assert "POST /rpc" in answer.text
    # Nothing ran: the store has no session, as the server started.
    listed = httpx.post(
        server.url + "/rpc",
        json={"jsonrpc": "2.0", "method": "sessions/list", "id": 1},
        timeout=30,
    )
    assert listed.json()["result"]["total"] == 0
