"""The Guard's newer rules: response headers, team mode's Host names, token rules.

Real server processes on loopback; the team-mode ones bind every address and
send real requests whose Host is this machine's name or one of its addresses.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from sessionforest.server.security import CSP, Hosts, is_loopback, split_host, token_problem

from .conftest import FOREST, Running, start

TOKEN = "team-token-0123456789"
LIST = {"jsonrpc": "2.0", "method": "sessions/list", "id": 1}
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _port(server: Running) -> int:
    return int(server.url.rsplit(":", 1)[1])


def _machine_address() -> str | None:
    """An address of this machine that is not loopback (None on a machine without one)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
            address = str(probe.getsockname()[0])
        except OSError:
            return None
    return None if is_loopback(address) else address


def test_every_response_carries_the_security_headers(server: Running) -> None:
    answers = [
        httpx.get(server.url + "/"),
        httpx.get(server.url + "/healthz"),
        httpx.post(server.url + "/rpc", json=LIST),
        httpx.post(server.url + "/rpc", json=LIST, headers={"Origin": "http://evil.example"}),
        httpx.get(server.url + "/no-such-file"),
    ]
    for answer in answers:
        assert answer.headers["content-security-policy"] == CSP, answer.url
        assert "frame-ancestors 'none'" in CSP and "img-src 'self' data:" in CSP
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
    with pytest.raises(InvalidStatus) as denied:
        connect(server.ws, origin="http://evil.example")  # type: ignore[arg-type]
    assert denied.value.response.headers["x-frame-options"] == "DENY"


@pytest.fixture
def team(tmp_path: Path) -> Running:
    running = start(
        tmp_path / "store.db", "--host", "0.0.0.0", "--allow-host", "forest.proxy.example",
        env={"FOREST_TOKEN": TOKEN},
    )  # fmt: skip
    yield running  # type: ignore[misc]
    assert running.stop() == 0


def _as_host(server: Running, host: str, **headers: str) -> httpx.Response:
    # Connect to loopback, but say `host`, as a client that reached the machine by it would.
    url = f"http://127.0.0.1:{_port(server)}/rpc"
    return httpx.post(url, json=LIST, headers={**AUTH, "Host": host, **headers}, timeout=30)


def test_team_mode_serves_the_machines_names_and_addresses(team: Running) -> None:
    # Before: with --host 0.0.0.0 only `Host: 0.0.0.0:PORT` was accepted (403 for the rest).
    port = _port(team)
    names = [f"{socket.gethostname()}:{port}", f"127.0.0.1:{port}", f"localhost:{port}"]
    address = _machine_address()
    if address is not None:
        names.append(f"{address}:{port}")
        direct = httpx.post(f"http://{address}:{port}/rpc", json=LIST, headers=AUTH, timeout=30)
        assert direct.status_code == 200, direct.text  # a real request to that address
    for host in names:
        reply = _as_host(team, host, Origin=f"http://{host}")
        assert reply.status_code == 200, (host, reply.text)
        assert reply.json()["result"]["total"] == 0
    for host in (f"evil.example:{port}", f"192.0.2.250:{port}", f"{socket.gethostname()}:1"):
        assert _as_host(team, host).status_code == 403, host
    # The UI's own Origin is accepted from each name; another page's is not.
    assert _as_host(team, names[0], Origin=f"http://evil.example:{port}").status_code == 403


def test_allow_host_names_a_proxy_in_front(team: Running) -> None:
    for host in ("forest.proxy.example", f"forest.proxy.example:{_port(team)}"):
        assert _as_host(team, host).status_code == 200, host
    behind_tls = _as_host(team, "forest.proxy.example", Origin="https://forest.proxy.example")
    assert behind_tls.status_code == 200
    assert _as_host(team, "other.proxy.example").status_code == 403


def test_host_values_are_parsed_strictly() -> None:
    assert split_host("Example.COM:80") == ("example.com", 80)
    assert split_host("[::1]:8765") == ("[::1]", 8765)
    for bad in ("user@localhost:8765", "localhost:8765/x", "a b", "localhost:123456", ""):
        assert split_host(bad) is None, bad
    hosts = Hosts("127.0.0.1", 8765, names=())
    assert hosts.allows("localhost:8765") and hosts.allows("[::1]:8765")
    assert not hosts.allows("user@localhost:8765") and not hosts.allows(None)
    assert not hosts.allows("localhost:8766") and not hosts.allows("localhost")
    assert not hosts.allows_origin("http://localhost:3000", frozenset())
    assert hosts.allows_origin("http://localhost:8765", frozenset())
    assert not hosts.allows_origin("https://localhost:8765", frozenset())


def test_a_name_that_merely_starts_with_127_is_not_loopback(tmp_path: Path) -> None:
    # Before: `--host 127.evil.example` passed the no-token check as "loopback".
    assert not is_loopback("127.evil.example")
    assert is_loopback("127.0.0.2") and is_loopback("::1") and is_loopback("[::1]")
    done = subprocess.run(
        [FOREST, "--db", str(tmp_path / "s.db"), "serve", "--host", "127.evil.example",
         "--port", "0"],
        capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 1
    assert "127.evil.example" in done.stderr
    assert "cannot resolve" in done.stderr or "not a loopback address" in done.stderr
    assert not (tmp_path / "s.db").exists()
    # A name that does resolve to loopback is loopback: what counts is the bound address.
    local = start(tmp_path / "l.db", "--host", "localhost")
    try:
        assert httpx.post(local.url + "/rpc", json=LIST, timeout=30).status_code == 200
    finally:
        assert local.stop() == 0


def test_a_short_token_is_refused(tmp_path: Path) -> None:
    assert token_problem("x" * 15) is not None and token_problem("x" * 16) is None
    assert token_problem("sixteen chars ok") is not None  # a space cannot travel everywhere
    for env in ({"FOREST_TOKEN": "short"}, {}):
        args = ["--token", "short"] if not env else []
        done = subprocess.run(
            [FOREST, "--db", str(tmp_path / "s.db"), "serve", "--port", "0", *args],
            capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", **env},
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        assert "at least 16 characters" in done.stderr


def test_the_token_from_a_file_stays_out_of_the_process_list(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text(TOKEN + "\n", encoding="utf-8")
    os.chmod(secret, 0o600)
    server = start(tmp_path / "store.db", "--token-file", str(secret))
    try:
        cmdline = Path(f"/proc/{server.proc.pid}/cmdline").read_bytes()
        assert TOKEN.encode() not in cmdline
        assert httpx.post(server.url + "/rpc", json=LIST, timeout=30).status_code == 401
        ok = httpx.post(server.url + "/rpc", json=LIST, headers=AUTH, timeout=30)
        assert ok.status_code == 200
    finally:
        assert server.stop() == 0
    both = subprocess.run(
        [FOREST, "--db", str(tmp_path / "s.db"), "serve", "--port", "0", "--token-file",
         str(secret)],
        capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "FOREST_TOKEN": TOKEN},
    )  # fmt: skip
    assert both.returncode != 0 and "give the token once" in both.stderr


def test_repeated_wrong_tokens_are_slowed_down(tmp_path: Path) -> None:
    # Before: every wrong guess was answered at once, as fast as a client could send.
    server = start(tmp_path / "store.db", env={"FOREST_TOKEN": TOKEN})

    async def guesses(count: int) -> list[int]:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            wrong = [
                client.post("/rpc", json=LIST, headers={"Authorization": f"Bearer guess{n:016}"})
                for n in range(count)
            ]
            return [r.status_code for r in await asyncio.gather(*wrong)]

    try:
        codes = asyncio.run(guesses(40))
        assert codes.count(401) >= 10  # the first ten are answered (at once)
        assert 429 in codes  # past four waiting, the rest are refused untried
        # A wrong first WebSocket message counts too; the right token still gets in.
        with connect(server.ws) as ws:
            ws.send(json.dumps({"jsonrpc": "2.0", "method": "rpc.authenticate",
                                "params": {"token": "guess" * 4}, "id": 0}))  # fmt: skip
            with pytest.raises(Exception) as closed:
                ws.recv(timeout=30)
            assert "4401" in str(closed.value)
        right = httpx.post(server.url + "/rpc", json=LIST, headers=AUTH, timeout=30)
        assert right.status_code == 200
    finally:
        assert server.stop() == 0
