"""SIGKILL a writer in the middle of appending, then reopen the store: every
append it acknowledged is there, nothing is half-written, and the store goes on.

The writer is a child process opening the store at its location; `durability`
is passed to `Forest.open` as given (SQLite: synchronous NORMAL or FULL)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from conformance.backends import Harness

# Appends forever onto the head of one session and prints each entry id once
# append() has returned, i.e. once the store acknowledged it. Payloads of a few
# KB make each commit span several WAL pages, so a kill can land inside one.
APPENDER = r"""
import sys
from sessionforest import Forest

location, sid, durability = sys.argv[1:4]
forest = Forest.open(location, durability=durability)
filler = "lorem ipsum dolor sit amet " * 200
i = 0
while True:
    i += 1
    if i % 3:
        entry = forest.append(
            sid, "user.message", {"content": [{"type": "text", "text": f"entry{i} {filler}"}]}
        )
    else:
        entry = forest.append(
            sid,
            "tool.completed",
            {"call_id": f"call-{i}", "output": filler, "is_error": False},
        )
    sys.stdout.write(entry.id + "\n")
    sys.stdout.flush()
"""

ACKS_BEFORE_KILL = 300
KILLS = 3
ID_LENGTH = 26


def run_and_kill(location: str, sid: str, durability: str, rng: random.Random) -> list[str]:
    """Start the appender, SIGKILL it mid-stream; every id it acknowledged, in order."""
    proc = subprocess.Popen(
        [sys.executable, "-c", APPENDER, location, sid, durability],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    acked: list[str] = []
    target = ACKS_BEFORE_KILL + rng.randrange(50)
    try:
        while len(acked) < target:
            line = proc.stdout.readline()
            assert line, f"appender stopped on its own: {proc.stderr.read()}"
            acked.append(line.strip())
        # Land somewhere inside a later append, not on a clean boundary we chose.
        time.sleep(rng.uniform(0, 0.004))
        assert proc.poll() is None, "the appender must still be running when it is killed"
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # Ids printed after our last read were acknowledged too; a torn last line was not.
    rest = proc.stdout.read()
    acked += [line for line in rest.split("\n")[:-1] if len(line) == ID_LENGTH]
    assert all(len(eid) == ID_LENGTH for eid in acked)
    return acked


@pytest.mark.needs("processes")
@pytest.mark.parametrize("durability", ["normal", "full"])
def test_killed_writer_loses_no_acknowledged_append(harness: Harness, durability: str) -> None:
    rng = random.Random(f"crash-{durability}")
    with harness.fresh(durability=durability) as forest:
        sid = forest.create_session(title="crash", session_id="crash")
        forest.create_session(title="bystander", session_id="bystander")
        bystander = forest.append(
            "bystander", "user.message", {"content": [{"type": "text", "text": "still here"}]}
        )
    location = harness.location(forest)

    acked: list[str] = []
    ours: list[str] = []  # appended by this test after each reopen
    before = 0  # entries in the session when the appender started
    for _ in range(KILLS):
        new = run_and_kill(location, sid, durability, rng)
        acked += new
        acked_set = set(acked)

        with harness.open(location, durability=durability) as forest:
            entries = forest.entries(sid)
            stored = [e.id for e in entries]
            present = set(stored)
            missing = [eid for eid in acked + ours if eid not in present]
            assert not missing, f"{len(missing)} acknowledged entries lost"
            # At most one commit can go unacknowledged: the one the kill cut off
            # between its COMMIT and its print.
            assert len(stored) - before - len(new) in (0, 1)
            # Acknowledged order is storage order: each append went onto the head.
            assert [eid for eid in stored if eid in acked_set] == acked
            assert [e.sequence for e in entries] == list(range(1, len(entries) + 1))
            assert [e.parent_id for e in entries] == [None, *stored[:-1]]
            assert forest.head(sid) == stored[-1]
            assert forest.session(sid).entry_count == len(stored)
            assert [e.id for e in forest.active_path(sid)] == stored
            assert [e.id for e in forest.active_path(sid, limit=3)] == stored[-3:]
            # Whatever index work the killed writer deferred, a search finds its appends.
            said = [e for e in entries if e.kind == "user.message"][-1]
            word = said.payload["content"][0]["text"].split()[0]
            assert said.id in [h.entry_id for h in forest.search_session_entries(sid, word)]
            report = forest.check()
            assert report.ok, report.problems
            assert report.quarantined == ()
            assert [e.id for e in forest.entries("bystander")] == [bystander.id]

            fresh = forest.append(
                sid, "assistant.message", {"content": [{"type": "text", "text": "recovered"}]}
            )
            assert fresh.sequence == len(stored) + 1
            assert fresh.parent_id == stored[-1]
            assert forest.head(sid) == fresh.id
            ours.append(fresh.id)
            before = len(stored) + 1

    with harness.open(location, durability=durability) as forest:
        final = [e.id for e in forest.entries(sid)]
        assert final[-1] == ours[-1]
        assert len(final) >= len(acked) + len(ours)
        assert forest.check().ok
