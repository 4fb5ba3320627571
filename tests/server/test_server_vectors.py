"""A running server computes the semantic leg's vectors behind the appends.

A search embeds at most a handful of pending entries itself
(search/semantic.py SEARCH_BUDGET), so without the server's background step a
chat appended to through the server, or by another process, would wait for
`forest index --semantic`. Real model, real server process, real SQLite file.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from sessionforest import Forest
from sessionforest.errors import InvalidArgument
from sessionforest.search import semantic

from .conftest import call, start

pytestmark = pytest.mark.semantic

LINES = 40  # more than a search embeds on its own
assert LINES > semantic.SEARCH_BUDGET


def counts(db: Path) -> tuple[int, int]:
    """(entries with searchable text, entry vectors) in the store's file."""
    with closing(sqlite3.connect(db)) as conn:
        entries = conn.execute(
            "SELECT count(*) FROM session_entries"
            " WHERE kind IN ('user.message', 'assistant.message')"
        ).fetchone()[0]
        vectors = conn.execute("SELECT count(*) FROM entry_vectors").fetchone()[0]
    return int(entries), int(vectors)


def wait_for_vectors(db: Path, expected: int, seconds: float = 180) -> int:
    deadline = time.monotonic() + seconds
    while True:
        _, vectors = counts(db)
        if vectors >= expected or time.monotonic() > deadline:
            return vectors
        time.sleep(0.2)


def message(text: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": text}]}


def append_through(http: httpx.Client, title: str, line: str) -> None:
    """A chat of LINES user messages appended through the server (`line` formats `i`)."""
    sid = call(http, "sessions/create", {"title": title})["id"]
    for i in range(LINES):
        call(http, "sessions/append", [sid, "user.message", message(line.format(i=i))])


def test_appends_through_the_server_and_by_another_process_get_vectors(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    running = start(db, env={"FOREST_SEMANTIC": "on"})
    try:
        with httpx.Client(base_url=running.url, timeout=60) as http:
            append_through(
                http, "garden notes", "note {i}: the tomatoes in bed {i} wilt unless watered"
            )
            assert wait_for_vectors(db, LINES) == LINES
            assert counts(db) == (LINES, LINES)

            # Another process appends: the server's watcher sees the commit and wakes
            # the same step.
            with Forest.open(db) as other:
                theirs = other.create_session("bike repair")
                for i in range(LINES):
                    text = f"part {i}: the rear derailleur skips on gear {i}"
                    other.append(theirs, "user.message", message(text))
            assert wait_for_vectors(db, 2 * LINES) == 2 * LINES
            assert counts(db) == (2 * LINES, 2 * LINES)
    finally:
        assert running.stop() == 0


def test_a_backlog_from_before_the_server_started_is_caught_up(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    with Forest.open(db) as forest:  # appends embed nothing: LINES entries wait
        sid = forest.create_session("standing backlog")
        for i in range(LINES):
            forest.append(
                sid,
                "user.message",
                message(f"line {i} of the backlog"),
            )
    assert counts(db) == (LINES, 0)
    running = start(db, env={"FOREST_SEMANTIC": "on"})
    try:
        assert wait_for_vectors(db, LINES) == LINES
    finally:
        assert running.stop() == 0


def test_without_the_leg_the_server_computes_no_vectors(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    running = start(db, env={"FOREST_SEMANTIC": "off"})
    try:
        with httpx.Client(base_url=running.url, timeout=60) as http:
            append_through(http, "plain", "x {i}")
            time.sleep(1.0)  # several watcher ticks: nothing may embed meanwhile
    finally:
        assert running.stop() == 0
    assert counts(db) == (LINES, 0)


def test_index_semantic_embeds_at_most_its_limit(tmp_path: Path) -> None:
    """The step the server takes: `index_semantic(limit=N)` embeds N and says what waits."""
    db = tmp_path / "store.db"
    with Forest.open(db, background_index=False) as forest:  # nothing embeds behind
        assert forest.semantic
        sid = forest.create_session("steps")
        for i in range(LINES):
            forest.append(sid, "user.message", message(f"step {i}"))
        done, waiting = forest.index_semantic(limit=10)
        assert (done, waiting) == (10, 1)
        assert counts(db) == (LINES, 10)
        done, waiting = forest.index_semantic()
        assert (done, waiting) == (LINES - 10, 0)
        with pytest.raises(InvalidArgument, match="limit"):
            forest.index_semantic(limit=0)
    assert counts(db) == (LINES, LINES)
