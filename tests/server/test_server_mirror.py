"""`forest serve --watch`: the file mirror inside a real server process.

A Claude Code transcript in the server's HOME is caught up when it starts;
lines written while it runs reach a WebSocket subscriber as `sessions/changed`
and the sidebar's search (`sessions/search_chats`) finds them; SIGTERM stops
it cleanly with the store checked.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import orjson
from websockets.sync.client import connect

from sessionforest import Forest

from .conftest import call, start
from .test_server_ws import Peer

DEADLINE = 90.0  # seconds; the mirror needs well under one


def record(session: str, n: int, text: str) -> bytes:
    """Claude Code's record `n` of `session`: a user line (even n) or a reply, each the
    child of the one before."""
    user = n % 2 == 0
    message: dict[str, Any] = (
        {"role": "user", "content": text}
        if user
        else {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-x",
              "content": [{"type": "text", "text": text}]}
    )  # fmt: skip
    body = {
        "type": "user" if user else "assistant",
        "uuid": f"{session}-{n}",
        "parentUuid": f"{session}-{n - 1}" if n else None,
        "sessionId": session,
        "timestamp": f"2026-01-01T00:00:{n:02d}.000Z",
        "cwd": "/tmp/project",
        "message": message,
    }
    return orjson.dumps(body) + b"\n"


def found(http: httpx.Client, word: str) -> list[str]:
    hits = call(http, "sessions/search_chats", {"query": word})["hits"]
    return [h["session_id"] for h in hits]


def eventually(done: Any, what: str) -> Any:
    end = time.monotonic() + DEADLINE
    while not (value := done()):
        assert time.monotonic() < end, f"{what} did not happen within {DEADLINE:.0f} s"
        time.sleep(0.05)
    return value


def test_serve_watch_mirrors_a_growing_transcript_to_subscribers_and_search(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    transcript = home / ".claude" / "projects" / "p" / "live.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(
        b"".join(record("live", n, f"before zqbefore line {n}") for n in range(4))
    )
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    server = start(tmp_path / "f.db", "--watch", env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            (sid,) = eventually(lambda: found(http, "zqbefore"), "the catch-up")
            with connect(server.ws) as socket:
                peer = Peer(socket)
                peer.call("sessions/subscribe", {"session_id": sid})
                with transcript.open("ab") as out:
                    out.write(record("live", 4, "zqduring a line written while it runs"))
                    out.write(record("live", 5, "and its answer"))
                note = peer.wait(1)[0]
                assert note["method"] == "sessions/changed"
                assert note["params"]["session_id"] == sid
                assert note["params"]["change"] == "imported"
            assert eventually(lambda: found(http, "zqduring"), "the search") == [sid]
            assert call(http, "sessions/get", [sid])["entry_count"] == 6
    finally:
        code = server.stop()
    assert code == 0
    with Forest.open(tmp_path / "f.db") as forest:
        assert forest.check().ok
        assert [s.id for s in forest.sessions()] == [sid]
