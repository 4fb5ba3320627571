"""Abandoned searches stop (issue 22): a search past `Limits.search_seconds` answers
SearchStopped (-32004), and the searches of a client that went away are cancelled,
so they never keep every reader thread.

A search is held up for real: another PostgreSQL connection holds an ACCESS
EXCLUSIVE lock on `chat_digests`, so each search's statements wait on it
(as behind a migration or a VACUUM FULL of another process)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from conformance.backends.postgres import _unavailable, new_schema_url, psycopg
from sessionforest import Forest
from sessionforest.server.threads import READERS

from .conftest import Running, call, start, start_limited

SEARCH = {"jsonrpc": "2.0", "method": "sessions/search_chats", "params": {"query": "parser"}}


@pytest.fixture
def pg_store() -> str:
    why = _unavailable()
    if why is not None:
        pytest.skip(f"postgres: {why}")
    url = new_schema_url()
    with Forest.open(url) as forest:
        sid = forest.create_session("the parser chat")
        forest.append(sid, "user.message", {"content": [{"type": "text", "text": "parser"}]})
    return url


@pytest.fixture
def locked(pg_store: str) -> Iterator[Any]:
    """The store's chat digests locked by another connection for as long as the test runs."""
    with psycopg.connect(pg_store) as conn:
        conn.execute("LOCK TABLE chat_digests IN ACCESS EXCLUSIVE MODE")
        yield conn
        conn.rollback()


def _waiting(url: str) -> int:
    """Backends of this database waiting on a lock now."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        ).fetchone()
        return int(row[0]) if row else 0


def _until(test: Callable[[], bool], seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while not test():
        assert time.monotonic() < end, f"not within {seconds:.0f} s: {what}"
        time.sleep(0.1)


def _stop(running: Running) -> None:
    assert running.stop() == 0


def test_searches_of_clients_that_went_away_stop_and_free_the_readers(
    pg_store: str, locked: Any
) -> None:
    running = start(pg_store)  # type: ignore[arg-type]  # a URL where a path goes
    try:
        sockets = [connect(running.ws) for _ in range(READERS)]
        for n, socket in enumerate(sockets, 1):
            socket.send(json.dumps({**SEARCH, "id": n}))
        # Every reader thread now waits on the lock with one search.
        _until(lambda: _waiting(pg_store) >= READERS, 30, "the searches to wait")
        for socket in sockets:
            socket.close()
        # Their clients are gone: the server cancels them while the lock is still held.
        _until(lambda: _waiting(pg_store) == 0, 30, "the abandoned searches to stop")
        with httpx.Client(base_url=running.url, timeout=30) as http:
            listed = call(http, "sessions/list")  # a reader thread is free to answer
        assert [s["title"] for s in listed["sessions"]] == ["the parser chat"]
    finally:
        locked.rollback()
        _stop(running)


def test_a_search_past_its_deadline_answers_search_stopped(pg_store: str, locked: Any) -> None:
    running = start_limited(
        pg_store,  # type: ignore[arg-type]
        {"search_seconds": 1.0},
    )
    try:
        began = time.monotonic()
        with httpx.Client(base_url=running.url, timeout=30) as http:
            answer = http.post("/rpc", json={**SEARCH, "id": 1}).json()
            assert time.monotonic() - began < 20
            error = answer["error"]
            assert error["code"] == -32004
            assert error["message"] == "the search stopped: its deadline of 1 s passed"
            assert error["data"]["type"] == "SearchStopped"
            assert _waiting(pg_store) == 0
            locked.rollback()  # the lock goes: the same search answers
            found = call(http, "sessions/search_chats", {"query": "parser"})
        assert [h["title"] for h in found["hits"]] == ["the parser chat"]
    finally:
        _stop(running)


def test_searches_of_http_clients_that_hung_up_stop(pg_store: str, locked: Any) -> None:
    # Over HTTP the server watches for the hang-up from a request's first read on.
    running = start(pg_store)  # type: ignore[arg-type]  # a URL where a path goes
    host, port = running.url.removeprefix("http://").rsplit(":", 1)
    try:
        body = json.dumps({**SEARCH, "id": 1}).encode()
        head = (f"POST /rpc HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json"
                f"\r\nContent-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
        sockets = [socket.create_connection((host, int(port))) for _ in range(READERS)]
        for sock in sockets:
            sock.sendall(head + body)
        _until(lambda: _waiting(pg_store) >= READERS, 30, "the searches to wait")
        for sock in sockets:
            sock.close()
        _until(lambda: _waiting(pg_store) == 0, 30, "the abandoned searches to stop")
        with httpx.Client(base_url=running.url, timeout=30) as http:
            assert call(http, "sessions/list")["total"] == 1
    finally:
        locked.rollback()
        _stop(running)
