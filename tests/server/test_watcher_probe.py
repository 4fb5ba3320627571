"""The server's heads watcher: it reads anything only when the store's commit probe
moved, and then only the sessions that changed (SQLite's session_changes revs,
PostgreSQL's LISTEN/NOTIFY), on both backends."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sessionforest import Forest
from sessionforest.server.changes import Change
from sessionforest.server.watcher import OwnCommits, Watcher

MESSAGE = {"content": [{"type": "text", "text": "hello"}]}


class CountingForest(Forest):
    """A real Forest that counts its reads of every session's head."""

    scans = 0

    def heads(self) -> list[tuple[str, str | None, str, str, str]]:
        self.scans += 1
        return super().heads()


def _settles(check: Callable[[], bool], seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.01)
    return check()


def _moved(probe: Any, before: int, seconds: float = 10.0) -> int:
    """The probe's next reading that differs from `before` (a notification is
    delivered asynchronously on PostgreSQL)."""
    assert _settles(lambda: probe() != before, seconds), "the probe did not move"
    return int(probe())


def test_the_probe_moves_on_any_connection_s_commit_and_names_what_changed(
    harness: Any,
) -> None:
    with harness.fresh() as forest, harness.open(harness.location(forest)) as other:
        probe = forest.commit_probe()
        assert probe is not None
        try:
            first = probe()
            assert probe() == first  # nothing committed: the same reading
            assert probe.changed() == []
            sid = other.create_session(title="elsewhere")
            second = _moved(probe, first)
            [(changed, head, _updated, status, title)] = probe.changed()
            assert (changed, head, status, title) == (sid, None, "active", "elsewhere")
            entry = forest.append(sid, "user.message", MESSAGE)  # this Forest's own writer
            third = _moved(probe, second)
            assert [(r[0], r[1]) for r in probe.changed()] == [(sid, entry.id)]
            other.set_status(sid, "archived")
            fourth = _moved(probe, third)
            assert [(r[0], r[3]) for r in probe.changed()] == [(sid, "archived")]
            other.rename(sid, "named by hand")
            _moved(probe, fourth)
            assert [(r[0], r[4]) for r in probe.changed()] == [(sid, "named by hand")]
            assert probe.changed() == []  # asked again: nothing new
        finally:
            probe.close()


def test_a_session_changed_twice_is_one_row(harness: Any) -> None:
    with harness.fresh() as forest:
        probe = forest.commit_probe()
        assert probe is not None
        try:
            before = probe()
            sid = forest.create_session(title="busy")
            first = forest.append(sid, "user.message", MESSAGE)
            second = forest.append(sid, "user.message", MESSAGE)
            forest.move_head(sid, first.id)
            _moved(probe, before)
            time.sleep(0.05)  # every notification of the three commits delivered
            probe()
            rows = probe.changed()
            assert [(r[0], r[1]) for r in rows] == [(sid, first.id)]
            assert second.id != first.id
        finally:
            probe.close()


def test_an_idle_store_is_not_read_and_a_commit_reads_only_what_changed(
    harness: Any,
) -> None:
    changes: list[Change] = []
    got = threading.Event()

    def on_changes(batch: list[Change]) -> None:
        changes.extend(batch)
        got.set()

    with harness.fresh() as seeded:
        location = harness.location(seeded)
        for n in range(30):  # sessions that never change
            seeded.create_session(title=f"quiet {n}")
    forest = CountingForest.open(location)
    with forest, harness.open(location) as other:
        watcher = Watcher(forest, OwnCommits(), on_changes, every=0.01)
        watcher.start()
        try:
            assert _settles(lambda: forest.scans == 1)  # the first read, what later ones judge by
            time.sleep(0.2)  # about 20 polls of an idle store
            assert forest.scans == 1 and not changes
            sid = other.create_session(title="from another writer")
            assert got.wait(10)
            assert [(c.session_id, c.change) for c in changes] == [(sid, "created")]
            got.clear()
            changes.clear()
            entry = other.append(sid, "user.message", MESSAGE)
            assert got.wait(10)
            assert [(c.session_id, c.change, c.head) for c in changes] == [
                (sid, "head_moved", entry.id)
            ]
            got.clear()
            changes.clear()
            other.set_status(sid, "ended")
            assert got.wait(10)
            assert [(c.session_id, c.change, c.status) for c in changes] == [
                (sid, "status", "ended")
            ]
            # Three commits, each read as the one session it changed: never every head again.
            assert forest.scans == 1
        finally:
            watcher.stop()


CHAT = (
    Path(__file__).resolve().parents[3]
    / "shared" / "data" / "claude-code" / "ai-sessions" / "claude-code-pomodoro-timer.jsonl"
)  # fmt: skip


def test_an_import_by_another_process_is_a_change(harness: Any) -> None:
    with harness.fresh() as forest, harness.open(harness.location(forest)) as other:
        probe = forest.commit_probe()
        assert probe is not None
        try:
            before = probe()
            [made] = other.import_chats("claude-code", CHAT).chats
            _moved(probe, before)
            time.sleep(0.05)  # every notification delivered (PostgreSQL)
            probe()
            rows = probe.changed()
            head = forest.session(made.session_id).head
            assert [(r[0], r[1]) for r in rows] == [(made.session_id, head)]
            assert head is not None
        finally:
            probe.close()
