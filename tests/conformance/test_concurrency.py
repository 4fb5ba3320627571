"""Several real OS processes writing one store at once: nothing is lost, no
sequence repeats, and `expect_head` turns a lost race into a clean HeadMoved.

Each child opens the store by its location (`harness.location`), as another
program would; how SQLite's durability modes set their PRAGMAs is in
tests/store/sqlite/test_durability.py."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import Entry, Forest, HeadMoved

# Each writer opens the store at the location it is given, says "ready", waits
# for "go" on stdin (so all of them start appending at the same moment), then
# appends `n` entries onto the head of the shared session (parent=None: the
# head is resolved inside the write transaction, so they race) and every
# `own_every`-th one into a session of its own. It reports what the store
# acknowledged as one JSON line.
WRITER = r"""
import json, sys
from sessionforest import Forest

location, shared, name = sys.argv[1:4]
n, own_every = int(sys.argv[4]), int(sys.argv[5])
forest = Forest.open(location)
own = forest.create_session(title=name, session_id=f"own-{name}")
print("ready", flush=True)
sys.stdin.readline()
acks = []
for i in range(n):
    kind = "user.message" if i % 2 else "assistant.message"
    payload = {"content": [{"type": "text", "text": f"{name} says {i}"}]}
    e = forest.append(shared, kind, payload)
    acks.append([e.session_id, e.id, e.parent_id, e.sequence])
    if i % own_every == 0:
        e = forest.append(own, "user.message", payload)
        acks.append([e.session_id, e.id, e.parent_id, e.sequence])
print(json.dumps(acks), flush=True)
"""

# Read the head, then append with expect_head=<that head> and parent=<that
# head> (without expect_head a lost race would fork a branch instead). Loops
# until `wins` appends succeeded; reports the winners and the HeadMoved count.
HEAD_RACER = r"""
import json, sys
from sessionforest import Forest, HeadMoved

location, sid, name, wins = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
forest = Forest.open(location)
print("ready", flush=True)
sys.stdin.readline()
won, lost, attempts = [], 0, 0
while len(won) < wins:
    attempts += 1
    head = forest.head(sid)
    payload = {"content": [{"type": "text", "text": f"{name} try {attempts}"}]}
    try:
        e = forest.append(sid, "user.message", payload, parent=head, expect_head=head)
    except HeadMoved as exc:
        assert exc.expected == head and exc.actual != head, exc
        lost += 1
        continue
    assert e.parent_id == head
    won.append(e.id)
print(json.dumps({"won": won, "lost": lost, "attempts": attempts}), flush=True)
"""

# Lock-step variant, driven line by line over stdin: "read" reads the head,
# "append" tries to append on top of what was read, "quit" ends.
STEPPER = r"""
import json, sys
from sessionforest import Forest, HeadMoved

location, sid, name = sys.argv[1], sys.argv[2], sys.argv[3]
forest = Forest.open(location)
print(json.dumps("ready"), flush=True)
head = None
for n, line in enumerate(sys.stdin):
    command = line.strip()
    if command == "read":
        head = forest.head(sid)
        print(json.dumps(head), flush=True)
    elif command == "append":
        payload = {"content": [{"type": "text", "text": f"{name} round {n}"}]}
        try:
            e = forest.append(sid, "user.message", payload, expect_head=head)
        except HeadMoved as exc:
            print(json.dumps({"lost": [exc.expected, exc.actual]}), flush=True)
        else:
            print(json.dumps({"won": [e.id, e.parent_id]}), flush=True)
    else:
        break
"""


# --- helpers ---------------------------------------------------------------------


@contextmanager
def processes(script: str, *argvs: list[str]) -> Iterator[list[subprocess.Popen[str]]]:
    """Start one `python -c script` per argv; kill whatever is still running on exit."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv in argvs
    ]
    try:
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def ask(proc: subprocess.Popen[str], line: str | None = None) -> Any:
    """Send a line (if any) and read one JSON reply; a dead child fails with its stderr."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    if line is not None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    reply = proc.stdout.readline()
    if not reply:
        proc.wait(timeout=10)
        raise AssertionError(f"child exited {proc.returncode}: {proc.stderr.read()}")
    return json.loads(reply)


def start_together(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line == "ready\n", proc.stderr.read() if proc.stderr else line
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()


def finish(procs: list[subprocess.Popen[str]]) -> list[Any]:
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    return results


def assert_one_chain(entries: list[Entry]) -> None:
    """Sequences 1..n, each entry's parent the one before it: no gaps, no forks."""
    assert [e.sequence for e in entries] == list(range(1, len(entries) + 1))
    assert [e.parent_id for e in entries] == [None] + [e.id for e in entries[:-1]]


def assert_well_formed(forest: Forest, sid: str) -> list[Entry]:
    entries = forest.entries(sid)
    sequence_of = {e.id: e.sequence for e in entries}
    assert len(sequence_of) == len(entries)
    assert [e.sequence for e in entries] == list(range(1, len(entries) + 1))
    for e in entries:
        if e.parent_id is not None:
            assert e.parent_id in sequence_of, f"{e.id} has a missing parent"
            assert sequence_of[e.parent_id] < e.sequence
    return entries


def new_store(harness: Harness, sid: str = "shared") -> str:
    """A store holding one session `sid`, closed again; its location."""
    forest = harness.fresh()
    forest.create_session(title="shared", session_id=sid)
    forest.close()
    return harness.location(forest)


# --- racing appends ----------------------------------------------------------------

WRITERS = 4
APPENDS = 150
OWN_EVERY = 5  # every 5th shared append is followed by one in the writer's own session


@pytest.mark.needs("processes")
def test_racing_writers_lose_nothing_and_never_repeat_a_sequence(harness: Harness) -> None:
    location = new_store(harness)
    names = [f"w{i}" for i in range(WRITERS)]
    with processes(
        WRITER, *[[location, "shared", name, str(APPENDS), str(OWN_EVERY)] for name in names]
    ) as procs:
        start_together(procs)
        reports = finish(procs)

    acked = [tuple(ack) for report in reports for ack in report]
    per_own = len(range(0, APPENDS, OWN_EVERY))
    assert len(acked) == WRITERS * (APPENDS + per_own)
    shared_acks = [a for a in acked if a[0] == "shared"]
    # The store handed out every shared sequence exactly once.
    assert sorted(a[3] for a in shared_acks) == list(range(1, WRITERS * APPENDS + 1))
    assert len({a[1] for a in acked}) == len(acked)

    with harness.open(location) as forest:
        sessions = {s.id: s for s in forest.sessions()}
        assert set(sessions) == {"shared"} | {f"own-{n}" for n in names}
        assert sum(s.entry_count for s in sessions.values()) == len(acked)
        for sid in sessions:
            entries = assert_well_formed(forest, sid)
            # Every append went onto the head, so each session is one chain,
            # and what each writer was told is exactly what is stored.
            assert_one_chain(entries)
            assert forest.head(sid) == entries[-1].id
            assert [e.id for e in forest.active_path(sid)] == [e.id for e in entries]
            assert [e.id for e in forest.active_path(sid, limit=4)] == [e.id for e in entries[-4:]]
            stored = {(e.session_id, e.id, e.parent_id, e.sequence) for e in entries}
            assert stored == {a for a in acked if a[0] == sid}
        assert Counter(a[0] for a in acked) == {
            sid: info.entry_count for sid, info in sessions.items()
        }
        report = forest.check()
        assert report.ok, report.problems
        assert report.entries_checked == len(acked)
        # Each writer's own appends came back in the order it made them.
        for name in names:
            texts = [e.payload["content"][0]["text"] for e in forest.entries(f"own-{name}")]
            assert texts == [f"{name} says {i}" for i in range(0, APPENDS, OWN_EVERY)]
            # And every one of them is found, whatever indexing the writers deferred.
            found = forest.search_session_entries(f"own-{name}", f"{name} says", limit=100)
            assert len(found) == per_own


# --- expect_head -------------------------------------------------------------------


@pytest.mark.needs("processes")
def test_expect_head_turns_a_lost_race_into_head_moved(harness: Harness) -> None:
    location = new_store(harness)
    wins = 60
    with processes(HEAD_RACER, *[[location, "shared", f"r{i}", str(wins)] for i in range(2)]) as p:
        start_together(p)
        reports = finish(p)

    won = [eid for r in reports for eid in r["won"]]
    for r in reports:
        assert r["attempts"] == len(r["won"]) + r["lost"]
    with harness.open(location) as forest:
        entries = forest.entries("shared")
        # Successes are exactly what is stored: a failed attempt left nothing.
        assert len(entries) == len(won) == 2 * wins
        assert {e.id for e in entries} == set(won)
        # Each append named its parent explicitly; only expect_head kept the
        # losers from forking a branch off a stale head.
        assert_one_chain(entries)
        assert len(forest.tips("shared")) == 1
        assert forest.check().ok


@pytest.mark.needs("processes")
def test_lock_step_rounds_have_exactly_one_winner(harness: Harness) -> None:
    location = new_store(harness)
    rounds = 40
    with processes(STEPPER, [location, "shared", "a"], [location, "shared", "b"]) as procs:
        assert [ask(p) for p in procs] == ["ready", "ready"]
        head = None
        won = []
        for _ in range(rounds):
            # Both read the same head, then both try to append on it.
            assert [ask(p, "read") for p in procs] == [head, head]
            for p in procs:
                assert p.stdin is not None
                p.stdin.write("append\n")
                p.stdin.flush()
            replies = [ask(p) for p in procs]
            winners = [r["won"] for r in replies if "won" in r]
            losers = [r["lost"] for r in replies if "lost" in r]
            assert len(winners) == 1 and len(losers) == 1, replies
            (new_id, parent), (expected, actual) = winners[0], losers[0]
            assert parent == head
            assert (expected, actual) == (head, new_id)
            won.append(new_id)
            head = new_id
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("quit\n")
            p.stdin.flush()

    with harness.open(location) as forest:
        entries = forest.entries("shared")
        assert [e.id for e in entries] == won
        assert_one_chain(entries)
        assert forest.head("shared") == won[-1]


def test_expect_head_failure_in_process_appends_nothing(harness: Harness) -> None:
    with harness.fresh() as forest:
        sid = forest.create_session(session_id="s")
        first = forest.append(sid, "user.message", {"content": [{"type": "text", "text": "a"}]})
        with pytest.raises(HeadMoved) as caught:
            forest.append(
                sid, "user.message", {"content": [{"type": "text", "text": "b"}]}, expect_head=None
            )
        assert (caught.value.expected, caught.value.actual) == (None, first.id)
        assert [e.id for e in forest.entries(sid)] == [first.id]
        assert forest.head(sid) == first.id
        second = forest.append(
            sid, "user.message", {"content": [{"type": "text", "text": "c"}]}, expect_head=first.id
        )
        assert second.sequence == 2
