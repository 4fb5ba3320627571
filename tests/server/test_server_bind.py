"""Which directories a remote client may bind a session to: only inside --bind-root.

Before: `sessions/create` over HTTP took any `cwd`, and `sessions/status` then
told the caller the HEAD and dirty-file count of any repository the server's
user owns. Real git repositories, real servers on loopback.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import httpx

from .conftest import FOREST, Running, error_of, start


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    (path / "secret.txt").write_text("private\n")
    return path


def _create(server: Running, cwd: str) -> dict[str, object]:
    reply = httpx.post(server.url + "/rpc", timeout=30, json={
        "jsonrpc": "2.0", "method": "sessions/create", "params": {"cwd": cwd}, "id": 1,
    })  # fmt: skip
    return reply.json()  # type: ignore[no-any-return]


def test_without_bind_roots_a_remote_client_binds_nothing(tmp_path: Path) -> None:
    private = _repo(tmp_path / "private")
    server = start(tmp_path / "store.db")
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            error = error_of(http, "sessions/create", {"cwd": str(private)})
            assert error["code"] == -32003 and error["data"]["argument"] == "cwd"
            assert "without --bind-root" in error["message"]
            assert http.post("/rpc", json={"jsonrpc": "2.0", "method": "sessions/list",
                                           "id": 2}).json()["result"]["total"] == 0  # fmt: skip
    finally:
        assert server.stop() == 0


def test_bind_roots_admit_their_inside_only(tmp_path: Path) -> None:
    allowed = tmp_path / "work"
    inside = _repo(allowed / "project")
    outside = _repo(tmp_path / "private")
    (allowed / "escape").symlink_to(outside)  # a link inside that points outside
    server = start(tmp_path / "store.db", "--bind-root", str(allowed))
    try:
        made = _create(server, str(inside))
        assert made["result"]["cwd"] == str(inside.resolve())  # type: ignore[index]
        for path in (outside, allowed / "escape", allowed / ".." / "private"):
            refused = _create(server, str(path))["error"]
            assert refused["code"] == -32003, path  # type: ignore[index]
            assert "outside the bind roots" in refused["message"]  # type: ignore[index]
    finally:
        assert server.stop() == 0


def test_the_stdio_peer_binds_as_the_cli_does(tmp_path: Path) -> None:
    private = _repo(tmp_path / "private")
    request = {"jsonrpc": "2.0", "method": "sessions/create", "params": {"cwd": str(private)},
               "id": 1}  # fmt: skip
    done = subprocess.run(
        [FOREST, "--db", str(tmp_path / "store.db"), "serve", "--stdio"],
        input=json.dumps(request).encode() + b"\n", capture_output=True, timeout=120,
        env={**os.environ},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["cwd"] == str(private)
