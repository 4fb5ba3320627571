"""One Forest shared by threads, as a server's thread pool uses it: reads run while
another thread writes, every write lands once, and a read sees one snapshot."""

from __future__ import annotations

import itertools
import threading
from typing import Any

from sessionforest import Forest


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def test_readers_run_while_writers_write_and_nothing_is_lost(forest: Forest) -> None:
    sid = forest.create_session("shared")
    forest.append(sid, "user.message", text("start"))
    writers, per_writer = 4, 60
    errors: list[BaseException] = []
    done = threading.Event()
    lengths: dict[int, list[int]] = {}

    def write(name: str) -> None:
        try:
            for i in range(per_writer):
                forest.append(sid, "user.message", text(f"{name} {i}"))
        except BaseException as exc:
            errors.append(exc)

    def read(n: int) -> None:
        mine = lengths.setdefault(n, [])
        try:
            while not done.is_set():
                path = forest.active_path(sid)
                # One snapshot: a contiguous chain from the root, never a torn read.
                assert all(b.parent_id == a.id for a, b in itertools.pairwise(path))
                mine.append(len(path))
                forest.search_session_entries(sid, "start")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(f"w{n}",)) for n in range(writers)]
    readers = [threading.Thread(target=read, args=(n,)) for n in range(3)]
    for t in readers + threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    for t in readers:
        t.join()
    assert errors == []
    entries = forest.entries(sid)
    assert len(entries) == 1 + writers * per_writer
    assert [e.sequence for e in entries] == list(range(1, len(entries) + 1))
    # Each reader saw the chain only ever grow (never a state older than one it saw).
    assert all(seen and seen == sorted(seen) for seen in lengths.values())
    assert len(forest.active_path(sid)) == len(entries)


def test_a_read_started_before_a_write_keeps_its_snapshot(forest: Forest) -> None:
    sid = forest.create_session("snap")
    forest.append(sid, "user.message", text("one"))
    started, wrote = threading.Event(), threading.Event()
    seen: list[int] = []

    def slow_snapshot() -> None:
        snapshot = forest.snapshot(sid)
        seen.append(len(snapshot.nodes))

    # The snapshot reads several times in one read transaction; a write from
    # another thread in between must not show up half way.
    def write() -> None:
        started.wait()
        forest.append(sid, "user.message", text("two"))
        wrote.set()

    writer = threading.Thread(target=write)
    writer.start()
    started.set()
    slow_snapshot()
    writer.join()
    assert wrote.is_set()
    assert seen[0] in (1, 2)
    snapshot = forest.snapshot(sid)
    assert len(snapshot.nodes) == 2 and len(snapshot.active_path) == 2
