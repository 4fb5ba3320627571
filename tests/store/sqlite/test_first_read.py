"""A process's first brief read runs on the idle writer (database.Database._lend).

An agent process that opens the store, loads its history once and appends
never opens a reader connection (which would parse the whole schema); a write
of another thread waits behind that one read; every later read takes a reader.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest
from sessionforest.errors import UnknownSession
from sessionforest.store.sqlite.database import Database

from .conftest import NOW, text

WAIT_S = 10.0  # a bound on a wait that should end at once, not a timing


def _stored(tmp_path: Path, count: int = 3) -> tuple[Path, str]:
    path = tmp_path / "forest.db"
    with Forest.open(path, clock=lambda: NOW, background_index=False) as forest:
        sid = forest.create_session("t")
        for i in range(count):
            forest.append(sid, "user.message", text(f"turn {i}"))
    return path, sid


def _database(forest: Forest) -> Database:
    db: Database = forest._store._db  # type: ignore[attr-defined]
    return db


@pytest.fixture
def reopened(tmp_path: Path) -> Iterator[tuple[Forest, str, list[Any]]]:
    """A new process's store (nothing read yet) and a log of the readers it opens."""
    path, sid = _stored(tmp_path)
    forest = Forest.open(path, clock=lambda: NOW, background_index=False)
    db = _database(forest)
    opened: list[Any] = []
    connect = db._connect

    def counted() -> Any:
        conn = connect()
        opened.append(conn)
        return conn

    db._connect = counted  # type: ignore[method-assign]
    yield forest, sid, opened
    forest.close()


def test_a_process_that_loads_its_history_once_opens_no_reader(
    reopened: tuple[Forest, str, list[Any]],
) -> None:
    forest, sid, opened = reopened
    path = forest.active_path(sid)
    assert [e.payload for e in path] == [text(f"turn {i}") for i in range(3)]
    assert opened == []
    assert not _database(forest).write_lock.locked()
    forest.append(sid, "user.message", text("turn 3"))
    # Only the first brief read is lent: the next one takes a reader, as before.
    assert [e.payload for e in forest.active_path(sid)][-1] == text("turn 3")
    assert len(opened) == 1


def test_a_first_read_while_a_write_holds_the_writer_takes_a_reader(
    reopened: tuple[Forest, str, list[Any]],
) -> None:
    forest, sid, opened = reopened
    db = _database(forest)
    inside, leave = threading.Event(), threading.Event()

    def hold_a_write() -> None:
        with db.write():
            inside.set()
            leave.wait(WAIT_S)

    with ThreadPoolExecutor(2) as pool:
        writing = pool.submit(hold_a_write)
        assert inside.wait(WAIT_S)
        # It does not wait for the write: it reads on a new reader.
        read = pool.submit(forest.active_path, sid).result(timeout=WAIT_S)
        leave.set()
        writing.result(timeout=WAIT_S)
    assert len(read) == 3
    assert len(opened) == 1


def test_a_write_of_another_thread_waits_for_the_lent_read_then_lands(
    reopened: tuple[Forest, str, list[Any]],
) -> None:
    forest, sid, opened = reopened
    db = _database(forest)
    with ThreadPoolExecutor(1) as pool:
        with db.read(brief=True) as conn:
            assert conn is db.writer
            appending = pool.submit(forest.append, sid, "user.message", text("late"))
            # Blocked on the writer's lock while the read lasts (done would mean it did not wait).
            with pytest.raises(TimeoutError):
                appending.result(timeout=0.2)
        appended = appending.result(timeout=WAIT_S)
    assert forest.active_path(sid)[-1].id == appended.id
    assert len(opened) == 1


def test_a_lent_read_that_fails_frees_the_writer(
    reopened: tuple[Forest, str, list[Any]],
) -> None:
    forest, sid, opened = reopened
    db = _database(forest)
    with pytest.raises(UnknownSession):
        forest.active_path("no-such-session")
    assert not db.write_lock.locked()
    assert not db.writer.in_transaction  # type: ignore[union-attr]
    forest.append(sid, "user.message", text("after"))
    assert len(forest.active_path(sid)) == 4
    assert len(opened) == 1  # the first brief read was the failed one


def test_a_write_inside_the_lent_read_is_refused_as_inside_any_read(
    reopened: tuple[Forest, str, list[Any]],
) -> None:
    forest, sid, _ = reopened
    db = _database(forest)
    with db.read(brief=True) as conn:
        assert conn is db.writer
        with pytest.raises(RuntimeError, match="inside another transaction"):
            forest.append(sid, "user.message", text("refused"))
    assert not db.write_lock.locked()
    forest.append(sid, "user.message", text("after"))
    assert [e.payload for e in forest.active_path(sid)][-1] == text("after")


def test_a_read_only_store_reads_on_its_one_connection(tmp_path: Path) -> None:
    path, sid = _stored(tmp_path)
    with Forest.open(path, readonly=True) as forest:
        db = _database(forest)
        assert db.writer is None
        for _ in range(2):  # the first brief read, then a later one
            assert [e.payload for e in forest.active_path(sid)] == [
                text(f"turn {i}") for i in range(3)
            ]
