"""The server's heads watcher scans only when the store's commit probe moved."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from sessionforest import Forest
from sessionforest.server.changes import Change
from sessionforest.server.watcher import OwnCommits, Watcher

MESSAGE = {"content": [{"type": "text", "text": "hello"}]}


class CountingForest(Forest):
    """A real Forest that counts its scans of every session's head."""

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


def test_the_probe_moves_on_any_connection_s_commit(tmp_path: Path) -> None:
    db = tmp_path / "f.db"
    with Forest.open(db) as forest, Forest.open(db) as other:
        probe = forest.commit_probe()
        assert probe is not None
        try:
            first = probe()
            assert probe() == first  # nothing committed: the same reading
            sid = other.create_session(title="elsewhere")
            second = probe()
            assert second != first
            forest.append(sid, "user.message", MESSAGE)  # this Forest's own writer
            assert probe() != second
        finally:
            probe.close()


def test_an_idle_store_is_not_scanned_and_a_commit_is_reported(tmp_path: Path) -> None:
    db = tmp_path / "f.db"
    Forest.open(db).close()
    changes: list[Change] = []
    got = threading.Event()

    def on_changes(batch: list[Change]) -> None:
        changes.extend(batch)
        got.set()

    with CountingForest.open(db) as forest, Forest.open(db) as other:
        watcher = Watcher(forest, OwnCommits(), on_changes, every=0.01)
        watcher.start()
        try:
            assert _settles(lambda: forest.scans == 1)  # the first scan, what later ones judge by
            time.sleep(0.2)  # about 20 polls of an idle store
            assert forest.scans == 1 and not changes
            sid = other.create_session(title="from another writer")
            assert got.wait(10)
            assert [(c.session_id, c.change) for c in changes] == [(sid, "created")]
            assert forest.scans >= 2
        finally:
            watcher.stop()
