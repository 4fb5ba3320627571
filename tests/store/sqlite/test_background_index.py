"""A writer's background indexing (the FULL_TEXT job of the store's maintenance thread,
store/sqlite/derived.py) on real store files.

Appends leave their entries pending; once they pause for `derived.QUIET`
seconds a thread indexes them in chunks, each its own write transaction. The
tests wait for it with a deadline (never a timing assertion) and check the
one invariant every chunk keeps: each entry below a session's pending note
is indexed, none at or above it.
"""

from __future__ import annotations

import gc
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sessionforest import Forest
from sessionforest.store.sqlite import derived

from .conftest import NOW, pending, rows, text

DEADLINE = 60.0  # seconds a test waits for the thread; it needs milliseconds


def indexed_sequences(path: Path, sid: str) -> list[int]:
    # A word row's rowid is the chat's number << 32 plus the entry's sequence.
    found = rows(
        path,
        "SELECT rowid & 4294967295 FROM session_entry_fts WHERE session_id = ? ORDER BY 1",
        sid,
    )
    return [r[0] for r in found]


def wait_for(done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE
    while not done():
        assert time.monotonic() < deadline, "the background indexer never finished"
        time.sleep(0.01)


def index_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("forest-maintain")]


def test_a_pause_after_appends_indexes_them_without_a_search(tmp_path: Path) -> None:
    path = tmp_path / "idle.db"
    with Forest.open(path) as forest:
        a = forest.create_session("a")
        b = forest.create_session("b")
        forest.append(a, "user.message", text("quince"))
        forest.append(b, "user.message", text("rhubarb"))
        forest.append(a, "assistant.message", text("sloe"))
        wait_for(lambda: pending(path) == [])
        assert indexed_sequences(path, a) == [1, 2]
        assert indexed_sequences(path, b) == [1]
        # The searches now have nothing to index first, and find what was written.
        assert [h.session_id for h in forest.search_chats("rhubarb").hits] == [b]
        assert [h.sequence for h in forest.search_session_entries(a, "sloe")] == [2]


def test_chunks_index_in_order_and_end_where_one_catch_up_would(tmp_path: Path) -> None:
    chunked, whole = tmp_path / "chunked.db", tmp_path / "whole.db"
    words = [f"w{i} tern{i % 7} common" for i in range(60)]
    sids = {}
    for path in (chunked, whole):
        with Forest.open(path, background_index=False, clock=lambda: NOW) as forest:
            for name, count in (("a", 25), ("b", 35)):
                sid = forest.create_session(name, session_id=f"s-{name}")
                sids[name] = sid
                for word in words[:count]:
                    forest.append(sid, "user.message", text(word))
            if path == chunked:
                store = forest._backend.store  # type: ignore[attr-defined]
                assert store.index_some(10) is True
                assert pending(path) == [("s-a", 11), ("s-b", 1)]
                assert indexed_sequences(path, "s-a") == list(range(1, 11))
                assert store.index_some(10) is True
                assert store.index_some(10) is True  # a's last 5, then b's first 5
                assert pending(path) == [("s-b", 6)]
                assert indexed_sequences(path, "s-a") == list(range(1, 26))
                assert indexed_sequences(path, "s-b") == [1, 2, 3, 4, 5]
                while store.index_some(10):
                    pass
                assert pending(path) == []
    # The same index: every search answers alike.
    with (
        Forest.open(chunked, clock=lambda: NOW) as one,
        Forest.open(whole, clock=lambda: NOW) as other,
    ):
        for query in ("tern3", "common", "w24", "w30 common"):
            got = [(h.session_id, h.score) for h in one.search_chats(query).hits]
            assert got == [(h.session_id, h.score) for h in other.search_chats(query).hits]
            for sid in sids.values():
                mine = [h.sequence for h in one.search_session_entries(sid, query)]
                assert mine == [h.sequence for h in other.search_session_entries(sid, query)]


def test_appends_during_background_chunks_lose_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(derived, "CHUNK", 16)  # many chunks, so appends land between them
    path = tmp_path / "busy.db"
    with Forest.open(path) as forest:
        sid = forest.create_session("t")
        for burst in range(8):
            for i in range(50):
                forest.append(sid, "user.message", text(f"b{burst}x{i} plum"))
            time.sleep(random.Random(burst).uniform(0.0, 0.12))  # sometimes long enough
        wait_for(lambda: pending(path) == [])
        assert indexed_sequences(path, sid) == list(range(1, 401))
        assert [h.sequence for h in forest.search_session_entries(sid, "b7x49")] == [400]
        assert forest.check().ok


def test_writers_on_two_threads_and_the_indexer_agree(tmp_path: Path) -> None:
    path = tmp_path / "threads.db"
    with Forest.open(path) as forest, Forest.open(path) as other:
        sids = [forest.create_session("one"), forest.create_session("two")]

        def write(store: Forest, sid: str) -> None:
            for i in range(150):
                store.append(sid, "user.message", text(f"{sid[-4:]} n{i}"))
                if i % 40 == 0:
                    time.sleep(0.08)  # a pause: the indexers run while the other writes

        threads = [
            threading.Thread(target=write, args=(store, sid))
            for store, sid in zip((forest, other), sids, strict=True)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wait_for(lambda: pending(path) == [])
        for sid in sids:
            assert indexed_sequences(path, sid) == list(range(1, 151))
        assert forest.check().ok


def test_closing_stops_the_thread_and_indexes_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "close.db"
    before = set(index_threads())
    forest = Forest.open(path)
    sid = forest.create_session("t")
    for i in range(300):
        forest.append(sid, "user.message", text(f"c{i}"))
    assert len(set(index_threads()) - before) == 1  # started by the first append
    forest.close()
    assert set(index_threads()) - before == set()
    assert pending(path) == []
    assert indexed_sequences(path, sid) == list(range(1, 301))


def test_a_store_that_only_reads_starts_no_thread(tmp_path: Path) -> None:
    path = tmp_path / "reads.db"
    with Forest.open(path) as forest:
        sid = forest.create_session("t")
        forest.append(sid, "user.message", text("one"))
    before = set(index_threads())
    with Forest.open(path) as forest, Forest.open(path, readonly=True) as reader:
        forest.active_path(sid)
        reader.search_chats("one")
        assert set(index_threads()) - before == set()


# Appends many entries, says so, then pauses so the background indexer works.
APPEND_AND_PAUSE = r"""
import sys, time
from sessionforest import Forest
from sessionforest.store.sqlite import derived

derived.CHUNK = 64
forest = Forest.open(sys.argv[1])
sid = forest.create_session("t", session_id="s-kill")
for i in range(2000):
    body = {"content": [{"type": "text", "text": f"k{i} filler text to index"}]}
    forest.append(sid, "user.message", body)
print("appended", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("seed", range(4))
def test_kill_9_mid_chunk_keeps_every_chunk_whole(tmp_path: Path, seed: int) -> None:
    path = tmp_path / f"kill{seed}.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", APPEND_AND_PAUSE, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "appended"
        time.sleep(random.Random(seed).uniform(0.0, 0.25))  # before, during or after chunks
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    done = indexed_sequences(path, "s-kill")
    note = pending(path)
    # Whole chunks only: everything below the note indexed, nothing at or above it.
    below = note[0][1] - 1 if note else 2000
    assert note in ([], [("s-kill", below + 1)])
    assert done == list(range(1, below + 1))
    with Forest.open(path) as again:
        assert [h.sequence for h in again.search_session_entries("s-kill", "k1999")] == [2000]
        assert indexed_sequences(path, "s-kill") == list(range(1, 2001))
        assert again.check().ok


def test_a_store_dropped_without_close_ends_its_thread(tmp_path: Path) -> None:
    path = tmp_path / "dropped.db"
    before = set(index_threads())
    forest = Forest.open(path)
    sid = forest.create_session("t")
    forest.append(sid, "user.message", text("tangerine"))
    assert len(set(index_threads()) - before) == 1
    wait_for(lambda: pending(path) == [])  # it indexed, then waits for more
    del forest
    gc.collect()
    wait_for(lambda: set(index_threads()) - before == set())
    assert indexed_sequences(path, sid) == [1]
