"""SQLite: a running statement of a search stops when its deadline is cancelled from
another thread (the connection's progress handler), and the reader goes back clean."""

from __future__ import annotations

import threading
import time

import pytest

from sessionforest import Deadline, Forest, SearchStopped

# A statement that would run for minutes: counting to ten billion.
ENDLESS = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000000000) "
    "SELECT count(*) FROM n"
)


def test_a_running_statement_stops_when_the_search_is_cancelled(forest: Forest) -> None:
    sid = forest.create_session("t")
    forest.append(sid, "user.message", {"content": [{"type": "text", "text": "hello"}]})
    deadline = Deadline(None)
    threading.Timer(0.3, deadline.cancel).start()
    began = time.monotonic()
    with (
        pytest.raises(SearchStopped, match=r"the client went away"),
        forest._backend.search(deadline) as index,
    ):
        index._conn.execute(ENDLESS).fetchone()
    assert time.monotonic() - began < 30  # stopped, not finished (minutes)
    # The pooled reader has no handler left: a search without a deadline runs whole.
    with forest._backend.search() as index:
        assert index._conn.execute("SELECT count(*) FROM sessions").fetchone() == (1,)
    assert forest.search_session_entries(sid, "hello")


def test_a_statement_past_the_deadline_stops(forest: Forest) -> None:
    with (
        pytest.raises(SearchStopped, match=r"deadline of 0\.3 s passed"),
        forest._backend.search(Deadline(0.3)) as index,
    ):
        index._conn.execute(ENDLESS).fetchone()
