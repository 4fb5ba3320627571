"""The two hot paths' promises, whatever a backend keeps to make them fast.

Loading: the active path (whole, or its last N entries) is always the walk of
parent links up from the head, after any mix of appends, branches and head
moves. Finding: a search issued after an append was acknowledged finds it, in
this process or another, and an append that failed is never found.
"""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import Forest, HeadMoved, InvalidArgument
from sessionforest.model import Entry


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def walk(forest: Forest, sid: str) -> list[str]:
    """The path by parent links from the head, root first, from `entries` alone."""
    parents = {e.id: e.parent_id for e in forest.entries(sid)}
    node = forest.head(sid)
    path: list[str] = []
    while node is not None:
        path.append(node)
        node = parents[node]
    return path[::-1]


def ids(entries: list[Entry]) -> list[str]:
    return [e.id for e in entries]


def test_the_path_is_the_parent_walk_after_any_appends_branches_and_moves(
    forest: Forest,
) -> None:
    rng = random.Random("paths")
    sid = forest.create_session("paths")
    stored: list[str] = []
    for step in range(300):
        roll = rng.random()
        if stored and roll < 0.15:
            forest.move_head(sid, rng.choice(stored))  # anywhere: back, forward, across
        elif stored and roll < 0.3:
            parent = rng.choice(stored)  # a branch below any entry
            stored.append(forest.append(sid, "user.message", user(f"b{step}"), parent=parent).id)
        else:
            stored.append(forest.append(sid, "user.message", user(f"s{step}")).id)
        if step % 10 == 0 or roll < 0.3:
            expected = walk(forest, sid)
            assert ids(forest.active_path(sid)) == expected
            for limit in (1, 2, 7, len(expected), len(expected) + 5):
                assert ids(forest.active_path(sid, limit=limit)) == expected[-limit:]
    assert ids(forest.active_path(sid)) == walk(forest, sid)


def test_a_tail_is_the_last_entries_of_the_path_in_order(forest: Forest) -> None:
    sid = forest.create_session("tail")
    made = [forest.append(sid, "user.message", user(f"m{i}")).id for i in range(50)]
    assert ids(forest.active_path(sid, limit=5)) == made[-5:]
    assert ids(forest.active_path(sid, limit=50)) == made
    assert ids(forest.active_path(sid, limit=500)) == made
    forest.move_head(sid, made[9])
    assert ids(forest.active_path(sid, limit=3)) == made[7:10]
    branch = forest.append(sid, "user.message", user("other way"))
    assert ids(forest.active_path(sid, limit=3)) == [made[8], made[9], branch.id]
    forest.move_head(sid, made[-1])  # back to the old tip: the old path again
    assert ids(forest.active_path(sid)) == made


def test_a_tail_limit_below_one_is_refused(forest: Forest) -> None:
    sid = forest.create_session("t")
    forest.append(sid, "user.message", user("x"))
    with pytest.raises(InvalidArgument, match="limit"):
        forest.active_path(sid, limit=0)


def test_an_empty_session_has_an_empty_path_and_tail(forest: Forest) -> None:
    sid = forest.create_session("empty")
    assert forest.active_path(sid) == []
    assert forest.active_path(sid, limit=3) == []


def test_a_search_right_after_an_append_finds_it(forest: Forest) -> None:
    sid = forest.create_session("fresh words")
    for i in range(200):
        forest.append(sid, "user.message", user(f"filler {i}"))
        if i % 50 == 49:
            forest.append(sid, "user.message", user(f"quokka{i}"))
            hits = forest.search_session_entries(sid, f"quokka{i}")
            assert [h.session_id for h in hits] == [sid]
            assert [h.session_id for h in forest.search_chats(f"quokka{i}").hits] == [sid]


def test_a_failed_append_is_never_found(forest: Forest) -> None:
    sid = forest.create_session("t")
    first = forest.append(sid, "user.message", user("first"))
    with pytest.raises(HeadMoved):
        forest.append(sid, "user.message", user("marmalade"), expect_head="nope")
    assert forest.search_session_entries(sid, "marmalade") == []
    assert forest.search_chats("marmalade").hits == ()
    assert ids(forest.active_path(sid)) == [first.id]


# Opens the store, appends one entry with a unique word and prints its id: the
# append is acknowledged once the line is read.
APPEND_ONE = r"""
import sys
from sessionforest import Forest

location, sid, word = sys.argv[1:4]
with Forest.open(location) as forest:
    for i in range(int(sys.argv[4])):
        forest.append(sid, "user.message", {"content": [{"type": "text", "text": f"pad {i}"}]})
    entry = forest.append(sid, "user.message", {"content": [{"type": "text", "text": word}]})
    print(entry.id, flush=True)
    sys.stdin.readline()  # stay open until told: nothing is done at close
"""


@pytest.mark.needs("processes")
def test_another_process_finds_an_acknowledged_append_at_once(harness: Harness) -> None:
    with harness.fresh() as forest:
        sid = forest.create_session("from afar")
    location = harness.location(forest)
    with harness.open(location) as reader:
        assert reader.search_session_entries(sid, "wombat") == []  # opened before it
        proc = subprocess.Popen(
            [sys.executable, "-c", APPEND_ONE, location, sid, "wombat", "300"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdin is not None
        try:
            entry_id = proc.stdout.readline().strip()
            assert entry_id
            # The writer is still open: whatever it defers, the search does first.
            hits = reader.search_session_entries(sid, "wombat")
            assert [h.entry_id for h in hits] == [entry_id]
            assert [h.session_id for h in reader.search_chats("wombat").hits] == [sid]
            assert ids(reader.active_path(sid, limit=1)) == [entry_id]
        finally:
            proc.stdin.write("\n")
            proc.stdin.flush()
            assert proc.wait(timeout=60) == 0


def test_heads_lists_every_session_with_its_head_time_and_status(forest: Forest) -> None:
    empty = forest.create_session(title="empty")
    busy = forest.create_session(title="busy")
    first = forest.append(busy, "user.message", {"content": [{"type": "text", "text": "one"}]})
    before = {sid: (head, status) for sid, head, _, status, _ in forest.heads()}
    assert before == {empty: (None, "active"), busy: (first.id, "active")}
    second = forest.append(busy, "user.message", {"content": [{"type": "text", "text": "two"}]})
    forest.set_status(empty, "ended")
    forest.rename(busy, "renamed")
    after = {sid: row for sid, *row in forest.heads()}
    assert after[busy][0] == second.id and after[busy][1] >= first.created_at
    assert after[empty][0] is None and after[empty][2] == "ended"
    assert (after[empty][3], after[busy][3]) == ("empty", "renamed")


def test_a_path_to_any_entry_is_its_parent_walk_and_leaves_the_head(forest: Forest) -> None:
    rng = random.Random("path_to")
    sid = forest.create_session("path_to")
    stored: list[str] = []
    for step in range(120):
        parent = rng.choice(stored) if stored and rng.random() < 0.25 else None
        stored.append(forest.append(sid, "user.message", user(f"m{step}"), parent=parent).id)
    head = forest.head(sid)
    parents = {e.id: e.parent_id for e in forest.entries(sid)}
    for target in rng.sample(stored, 30):
        expected: list[str] = []
        node: str | None = target
        while node is not None:
            expected.append(node)
            node = parents[node]
        expected.reverse()
        assert ids(forest.path_to(sid, target)) == expected
        for limit in (1, 3, len(expected), len(expected) + 4):
            assert ids(forest.path_to(sid, target, limit=limit)) == expected[-limit:]
    assert forest.head(sid) == head  # reading a branch never moves the head


def test_a_path_to_an_unknown_or_foreign_entry_is_refused(forest: Forest) -> None:
    from sessionforest import ForeignEntry, UnknownEntry

    sid = forest.create_session("a")
    other = forest.create_session("b")
    forest.append(sid, "user.message", user("x"))
    theirs = forest.append(other, "user.message", user("y"))
    with pytest.raises(UnknownEntry):
        forest.path_to(sid, "0" * 26)
    with pytest.raises(ForeignEntry):
        forest.path_to(sid, theirs.id)
    with pytest.raises(InvalidArgument, match="limit"):
        forest.path_to(sid, theirs.id, limit=0)


def test_a_head_move_is_not_activity(harness: Harness) -> None:
    # A clock a second further on at each reading: two writes in one millisecond would
    # tie on the time, and the tie goes to the later id (the newer chat).
    ticks = itertools.count()
    forest = harness.fresh(
        clock=lambda: datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=next(ticks))
    )
    older = forest.create_session("older")
    first = forest.append(older, "user.message", user("one"))
    forest.append(older, "user.message", user("two"))
    newer = forest.create_session("newer")
    forest.append(newer, "user.message", user("three"))
    listed = [s.id for s in forest.sessions(order="updated")]
    assert listed.index(newer) < listed.index(older)
    before = forest.session(older).updated_at
    forest.move_head(older, first.id)  # looking back at an older turn
    assert forest.session(older).updated_at == before
    listed = [s.id for s in forest.sessions(order="updated")]
    assert listed.index(newer) < listed.index(older)
    forest.append(older, "user.message", user("a new branch"))  # writing is activity
    assert next(s.id for s in forest.sessions(order="updated")) == older
