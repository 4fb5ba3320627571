"""A search stops when its deadline passes or it is cancelled (a server's client that
went away), raising SearchStopped, and leaves the store serving the next search."""

from __future__ import annotations

import pytest

from sessionforest import Deadline, Forest, SearchStopped

from .conftest import NOW, chat


class Expiring(Deadline):
    """A deadline that passes at its `after`-th look: mid-search, wherever that falls."""

    def __init__(self, after: int) -> None:
        super().__init__(None)
        self.looks = 0
        self.after = after

    @property
    def reason(self) -> str | None:
        self.looks += 1
        return "its deadline passed" if self.looks >= self.after else None


@pytest.fixture
def store(forest: Forest) -> tuple[Forest, str]:
    sid = ""
    for i in range(30):
        sid = chat(forest, f"chat {i}", [f"the parser broke on input {i}", "fixed the parser"])
    return forest, sid


def test_a_cancelled_search_stops_before_it_reads(store: tuple[Forest, str]) -> None:
    forest, sid = store
    gone = Deadline(30)
    gone.cancel()
    with pytest.raises(SearchStopped, match="the client went away"):
        forest.search_chats("parser", now=NOW, deadline=gone)
    with pytest.raises(SearchStopped):
        forest.search_session_entries(sid, "parser", deadline=gone)
    assert forest.search_chats("parser", now=NOW).hits  # the store serves the next one


@pytest.mark.parametrize("after", [2, 5, 20])
def test_a_deadline_passing_midway_stops_the_search_and_leaves_nothing_behind(
    store: tuple[Forest, str], after: int
) -> None:
    forest, sid = store
    deadline = Expiring(after)
    with pytest.raises(SearchStopped, match="deadline passed"):
        forest.search_chats("parser input fixed", now=NOW, deadline=deadline)
    with pytest.raises(SearchStopped):  # recall looks fewer times: early on
        forest.search_session_entries(sid, "parser input", deadline=Expiring(min(after, 3)))
    # The connection went back clean: later searches (with or without a deadline) answer.
    found = forest.search_chats("parser input fixed", now=NOW, deadline=Deadline(60))
    assert len(found.hits) == 8
    assert forest.search_session_entries(sid, "parser", deadline=Deadline(60))


def test_a_search_inside_its_deadline_answers_as_without_one(store: tuple[Forest, str]) -> None:
    forest, _ = store
    plain = forest.search_chats("parser input 7", now=NOW)
    timed = forest.search_chats("parser input 7", now=NOW, deadline=Deadline(60))
    assert timed == plain
