"""The backend's maintenance thread (store/base/maintenance.py) with real threads.

Jobs are plain objects whose steps record what ran; the tests wait for the
thread with `idle` (a deadline, never a timing assertion) and check the
order, the pauses, the failures and the life of the thread.
"""

from __future__ import annotations

import gc
import threading
import time

from sessionforest.errors import StoreBusy
from sessionforest.store.base.maintenance import Maintenance

DEADLINE = 60.0


def threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("forest-maintain test")]


class Work:
    """A job's owner: `left` steps of work, each recorded in `log`."""

    def __init__(self, name: str, log: list[str], left: int = 1) -> None:
        self.name = name
        self.log = log
        self.left = left
        self.fail: BaseException | None = None

    def step(self) -> bool:
        if self.fail is not None:
            failure, self.fail = self.fail, None
            raise failure
        self.log.append(self.name)
        self.left -= 1
        return self.left > 0


def test_nothing_runs_and_no_thread_starts_until_a_job_is_due() -> None:
    log: list[str] = []
    work = Work("a", log)
    m = Maintenance("test idle")
    m.add("a", work.step)
    assert m.idle(1.0)
    assert log == [] and threads() == []
    m.due("a")
    assert m.idle(DEADLINE)
    assert log == ["a"] and m.runs("a") == 1
    m.close()


def test_jobs_run_in_the_order_added_and_a_run_makes_its_followers_due() -> None:
    log: list[str] = []
    first, second = Work("first", log, left=3), Work("second", log, left=2)
    m = Maintenance("test order")
    m.add("first", first.step, then=("second",))
    m.add("second", second.step)
    m.due("first")
    assert m.idle(DEADLINE)
    # Every step of the first, then the second, made due by the first's run.
    assert log == ["first"] * 3 + ["second"] * 2
    m.close()


def test_a_job_waits_for_its_pause_and_a_burst_of_dues_is_one_run() -> None:
    log: list[str] = []
    work = Work("q", log, left=100)
    m = Maintenance("test quiet")
    m.add("q", work.step, quiet=0.2)
    started = time.monotonic()
    for _ in range(50):
        m.due("q")
    assert m.idle(DEADLINE)
    assert time.monotonic() - started >= 0.2  # not before the pause after the last due
    assert m.runs("q") == 1 and len(log) == 100
    m.close()


def test_a_store_error_is_retried_when_due_again_and_a_bug_stops_the_job() -> None:
    log: list[str] = []
    work = Work("w", log, left=10)
    m = Maintenance("test failures")
    m.add("w", work.step)
    work.fail = StoreBusy("store.db", "database is locked")
    m.due("w")
    assert m.idle(DEADLINE)
    assert log == []  # the failed step did nothing; the job waits for the next due
    m.due("w")
    assert m.idle(DEADLINE)
    assert log == ["w"] * 10
    broken = Work("b", log)
    broken.fail = RuntimeError("the model file is gone")
    m.add("b", broken.step)
    m.due("b")
    assert m.idle(DEADLINE)
    m.due("b")  # stopped: never runs again
    assert m.idle(DEADLINE)
    assert "b" not in log
    m.close()


def test_close_stops_after_the_step_it_is_in() -> None:
    entered, release = threading.Event(), threading.Event()
    steps: list[int] = []

    class Slow:
        def step(self) -> bool:
            steps.append(1)
            entered.set()
            release.wait(DEADLINE)
            return True  # always more: only close ends it

    slow = Slow()
    m = Maintenance("test close")
    m.add("slow", slow.step)
    m.due("slow")
    assert entered.wait(DEADLINE)
    closer = threading.Thread(target=m.close)
    closer.start()
    release.set()
    closer.join(DEADLINE)
    assert not closer.is_alive()
    assert steps == [1]
    assert threads() == []
    m.due("slow")  # closed: nothing starts again
    assert threads() == [] and steps == [1]


def test_a_dropped_owner_ends_its_job_and_the_thread() -> None:
    log: list[str] = []
    m = Maintenance("test owner")
    work = Work("gone", log, left=1)
    m.add("gone", work.step)
    m.due("gone")
    assert m.idle(DEADLINE)
    assert m.has("gone")  # held weakly: there while its owner lives
    del work
    gc.collect()
    assert not m.has("gone")
    deadline = time.monotonic() + DEADLINE
    while threads():
        assert time.monotonic() < deadline, "the thread outlived its last job"
        time.sleep(0.01)
    m.due("gone")  # no such job any more: nothing runs
    assert threads() == [] and log == ["gone"]
