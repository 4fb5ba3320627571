"""One maintenance thread per backend: the work a store does behind its writes.

A backend keeps derived state that its writes leave behind on purpose, so
that an append or an import does not pay for it: on SQLite the full-text
index (store/sqlite/derived.py), on any backend with the `[semantic]` extra
the entry vectors (search/semantic.py). Each kind of work is a `Job` on the
backend's one `Maintenance`: a step that does a bounded amount (one write
transaction of it) and says whether more is left. Whoever leaves work marks
the job `due`; the thread, started by the first `due`, runs due jobs in the
order they were added (full text before vectors: vectors are computed from
indexed text), each once nothing marked it due for its `quiet` seconds, so a
burst of writes never waits for its own maintenance. Between steps the
thread checks again: a job marked due during a run waits for the next pause,
an earlier job that became due runs first, and `close` stops it after the
step it is in.

Nothing here is needed for correctness: a search catches the full-text index
up before it reads and embeds a few pending entries itself, a closing writer
indexes the rest, and a kill -9 mid-step rolls that step's transaction back.
A step that fails with a `ForestError` (another process holding the write
lock past the busy timeout, a full disk) is logged once and tried again when
the job is next due; any other failure (the embedding model itself) is
logged once and that job stops. The thread holds each job's owner only
weakly: a store or a Forest dropped without `close()` is collected, its jobs
end with it and the thread with the last of them.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from ...errors import ForestError

if TYPE_CHECKING:
    import logging


def _log() -> logging.Logger:
    # Imported on a failure only: every store opens a Maintenance, and logging costs
    # a command as much as the rest of this package's base layer.
    import logging

    return logging.getLogger("sessionforest.maintenance")


FULL_TEXT: Final = "full text"
VECTORS: Final = "vectors"


@dataclass(eq=False)
class Job:
    """One kind of maintenance work: `step()` does a bounded part and returns whether
    any is left (held weakly: a dead owner ends the job)."""

    name: str
    step: Callable[[], Callable[[], bool] | None]  # the weak reference to the step
    quiet: float
    then: tuple[str, ...]  # jobs made due once a run of this one ends
    due: bool = False
    last: float = 0.0  # monotonic time it was last marked due
    failed: bool = False
    stopped: bool = False
    runs: int = field(default=0)  # runs ended (tests and benchmarks wait on it)


def _weak(step: Callable[[], bool]) -> Callable[[], Callable[[], bool] | None]:
    if hasattr(step, "__self__") and hasattr(step, "__func__"):
        return weakref.WeakMethod(step)
    return lambda: step


class Maintenance:
    """A backend's maintenance thread and its jobs (see the module docstring)."""

    def __init__(self, name: str, *, enabled: bool = True) -> None:
        self._name = name
        # False: no thread and no job (a store opened read-only, or with
        # background_index=False): what is due waits for a search, a close or a
        # command that does it.
        self.enabled = enabled
        self._jobs: dict[str, Job] = {}
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closing = False
        self._running: Job | None = None

    # --- jobs -----------------------------------------------------------------------

    def add(
        self,
        name: str,
        step: Callable[[], bool],
        *,
        quiet: float = 0.0,
        then: tuple[str, ...] = (),
    ) -> None:
        """Add (or replace) the job `name`; `step` is held weakly when it is a bound method.
        Nothing is added while the maintenance is not `enabled`."""
        if not self.enabled:
            return
        job = Job(name, _weak(step), quiet, then)
        owner = getattr(step, "__self__", None)
        if owner is not None:
            weakref.finalize(owner, self._owner_gone, name, job)
        with self._wake:
            self._jobs[name] = job

    def has(self, name: str) -> bool:
        with self._wake:
            return name in self._jobs

    def due(self, name: str) -> None:
        """Mark the job `name` due (nothing happens without such a job); called after a
        commit, by the committing thread: a clock read and, the first time, a wake."""
        job = self._jobs.get(name)
        if job is None:
            return
        job.last = time.monotonic()
        if job.due:
            return  # the thread has not started on the last one: it covers this one
        with self._wake:
            if self._closing or job.stopped:
                return
            job.due = True
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"forest-maintain {self._name}", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def idle(self, timeout: float) -> bool:
        """Wait until no job is due or running (tests, benchmarks, a clean stop);
        returns whether that happened within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._wake:
            while self._running is not None or any(
                j.due and not j.stopped for j in self._jobs.values()
            ):
                left = deadline - time.monotonic()
                if left <= 0 or self._closing:
                    return False
                self._wake.wait(min(left, 0.05))
        return True

    def runs(self, name: str) -> int:
        """How many runs of the job `name` have ended (0: none, or no such job)."""
        job = self._jobs.get(name)
        return 0 if job is None else job.runs

    def close(self) -> None:
        """Stop the thread after the step it is in (the caller finishes what it must)."""
        with self._wake:
            self._closing = True
            self._wake.notify_all()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _owner_gone(self, name: str, job: Job) -> None:
        with self._wake:
            if self._jobs.get(name) is job:
                del self._jobs[name]
            self._wake.notify_all()

    # --- the thread -------------------------------------------------------------------

    def _next(self) -> Job | None:
        """Holding the condition: the first due job whose pause has passed, waiting for
        one; None when closing or no job is left."""
        while not self._closing and self._jobs:
            now = time.monotonic()
            wait: float | None = None
            for job in self._jobs.values():
                if not job.due or job.stopped:
                    continue
                left = job.last + job.quiet - now
                if left <= 0:
                    job.due = False  # cleared first: a `due` from now on means another run
                    self._running = job
                    return job
                wait = left if wait is None else min(wait, left)
            self._wake.notify_all()  # idle() waiters: nothing is running
            self._wake.wait(wait)
        return None

    def _run(self) -> None:
        while True:
            with self._wake:
                job = self._next()
                if job is None:
                    self._running = None
                    self._thread = None  # a later `due` starts another
                    self._wake.notify_all()
                    return
            try:
                self._steps(job)
            finally:
                with self._wake:
                    job.runs += 1
                    self._running = None
                    for name in job.then:
                        later = self._jobs.get(name)
                        if later is not None and not later.stopped:
                            later.due, later.last = True, time.monotonic()
                    self._wake.notify_all()

    def _steps(self, job: Job) -> None:
        started = job.last
        try:
            while True:
                step = job.step()
                if step is None:
                    return  # its owner is gone
                more = step()
                del step  # hold the owner only while stepping
                if not more or self._closing:
                    break
                if job.last != started or self._earlier_due(job):
                    job.due = True  # written to meanwhile, or another job comes first
                    break
            job.failed = False
        except ForestError as exc:  # busy, read-only now, a full disk: tried again when due
            if not job.failed:
                _log().warning("%s upkeep of %s failed: %s", job.name, self._name, exc)
            job.failed = True
        except Exception:  # the work itself is broken (the model): say so once and stop
            _log().exception("%s upkeep of %s failed; it stops", job.name, self._name)
            job.stopped = True

    def _earlier_due(self, job: Job) -> bool:
        for other in self._jobs.values():
            if other is job:
                return False
            if other.due and not other.stopped:
                return True
        return False
