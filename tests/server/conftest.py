"""A real `forest serve` as a subprocess on a free loopback port, and JSON-RPC helpers."""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

FOREST = str(Path(sys.executable).parent / "forest")
URL = re.compile(r"http://\S+")
TEXT = [{"type": "text", "text": "hello there"}]
CALLED: set[str] = set()  # methods whose real answers were checked against the schema


@dataclass
class Running:
    proc: subprocess.Popen[str]
    url: str
    db: Path

    @property
    def ws(self) -> str:
        return self.url.replace("http://", "ws://") + "/ws"

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=30)
        finally:
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()


def start(db: Path, *args: str, env: dict[str, str] | None = None) -> Running:
    """Start `forest serve --port 0` and wait for the URL it prints."""
    proc = subprocess.Popen(
        [FOREST, "--db", str(db), "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = URL.search(line)
    if found is None:
        proc.kill()
        err = proc.stderr.read() if proc.stderr else ""
        raise AssertionError(f"server did not start: {line!r} {err}")
    return Running(proc, found.group(0), db)


# `forest serve` with other Limits (short deadlines, a small cap): the same `run`,
# started from Python so a test need not wait out the defaults.
_LIMITED = """
import sys, json, threading
from sessionforest.server.limits import Limits
from sessionforest.server.serve import ServeOptions, run
options = json.loads(sys.argv[1])
limits = Limits(**options.pop("limits"))
if options.pop("stall", False):
    # `test/stall`: a read that pins its reader thread and never looks at its deadline,
    # as a pathological statement did (the server is stopped while these run).
    from sessionforest.server import api, openrpc
    from sessionforest.server.handlers import entries, feed, io, search, sessions, talk
    from sessionforest.server.registry import Group, NoParams, Registry
    group = Group("test")

    @group.method("test/stall", NoParams, dict, "read")
    def stall(call, p):
        threading.Event().wait()

    api.METHODS = Registry(sessions.group, entries.group, search.group, io.group, feed.group,
                           openrpc.group, talk.group, group)
options = {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
run(ServeOptions(port=0, limits=limits, **options), lambda line: print(line, flush=True))
"""


def start_limited(
    db: Path, limits: dict[str, Any], env: dict[str, str] | None = None, **options: Any
) -> Running:
    """A real server process as `forest serve` runs it, with `limits` changed."""
    import json

    spec = json.dumps({"db": str(db), "limits": limits, **options})
    proc = subprocess.Popen(
        [sys.executable, "-c", _LIMITED, spec],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    found = URL.search(line)
    if found is None:
        proc.kill()
        err = proc.stderr.read() if proc.stderr else ""
        raise AssertionError(f"server did not start: {line!r} {err}")
    return Running(proc, found.group(0), db)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Running]:
    # sessions/resume writes where the harness looks: a folder of the test's own.
    harnesses = {"CODEX_HOME": str(tmp_path / "codex-home"),
                 "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-home")}  # fmt: skip
    running = start(tmp_path / "store.db", "--import-root", str(tmp_path), env=harnesses)
    yield running
    assert running.stop() == 0


@pytest.fixture
def http(server: Running) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def call(client: httpx.Client, method: str, params: Any = None, *, id: Any = 1) -> Any:
    """The result of one call; fails the test on an error answer."""
    reply = raw(client, method, params, id=id)
    assert "error" not in reply, reply
    check_result(method, reply["result"])
    CALLED.add(method)
    return reply["result"]


def raw(client: httpx.Client, method: str, params: Any = None, *, id: Any = 1) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": id}
    if params is not None:
        message["params"] = params
    response = client.post("/rpc", json=message)
    assert response.status_code == 200, response.text
    return response.json()


def error_of(client: httpx.Client, method: str, params: Any = None) -> dict[str, Any]:
    reply = raw(client, method, params)
    assert "result" not in reply, reply
    return reply["error"]  # type: ignore[no-any-return]


@functools.cache
def openrpc() -> dict[str, Any]:
    from sessionforest.server.api import METHODS
    from sessionforest.server.openrpc import document

    return document(METHODS)


def check_result(method: str, result: Any) -> None:
    """Validate `result` against the result schema `rpc.discover` publishes for `method`
    (its "#/components/schemas/..." references resolve inside the same document)."""
    doc = openrpc()
    schema = next(m for m in doc["methods"] if m["name"] == method)["result"]["schema"]
    jsonschema.Draft202012Validator({**schema, "components": doc["components"]}).validate(result)
