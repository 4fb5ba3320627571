"""PostgreSQL: a search's statements are bounded by its deadline (statement_timeout)
and a cancel from another thread stops the running one (a cancel request)."""

from __future__ import annotations

import threading
import time

import pytest

from sessionforest import Deadline, Forest, SearchStopped


def test_a_running_statement_stops_when_the_search_is_cancelled(pg_forest: Forest) -> None:
    deadline = Deadline(None)
    threading.Timer(0.3, deadline.cancel).start()
    began = time.monotonic()
    with (
        pytest.raises(SearchStopped, match=r"the client went away"),
        pg_forest._backend.search(deadline) as index,
    ):
        index._conn.execute("SELECT pg_sleep(60)")
    assert time.monotonic() - began < 30
    with pg_forest._backend.search() as index:  # the pooled connection is clean
        index._conn.execute("SELECT pg_sleep(0.5)")
    assert pg_forest.search_chats("anything").hits == ()


def test_a_statement_past_the_deadline_stops(pg_forest: Forest) -> None:
    began = time.monotonic()
    with (
        pytest.raises(SearchStopped, match=r"deadline of 0\.5 s passed"),
        pg_forest._backend.search(Deadline(0.5)) as index,
    ):
        index._conn.execute("SELECT pg_sleep(60)")
    assert time.monotonic() - began < 30
    with pg_forest._backend.search(Deadline(60)) as index:  # statement_timeout was local
        index._conn.execute("SELECT pg_sleep(1)")
