"""When a search must stop: a deadline passed, or the client asking went away.

A `Deadline` is made by whoever starts the work (the server, for each read it
runs) and handed to the facade's search methods. The work checks it where it
can stop cheaply: a SQLite statement through the connection's progress handler
(every PROGRESS_STEPS virtual-machine steps), a PostgreSQL statement through
`statement_timeout` and a cancel request, and the search funnel between its
steps (`checkpoint()`, which reads the deadline of the running search from a
context variable, so no signature below the facade carries it). A stopped
search raises `SearchStopped` and leaves nothing behind: searches only read.

`cancel()` may be called from any thread (the event loop, when a client goes away).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

from .errors import SearchStopped

# SQLite virtual-machine steps between two looks at the deadline (~0.1 ms apart).
PROGRESS_STEPS: Final = 10_000

# How long one worktree stamp may take (git status plus hashing the dirty files,
# gitstamp.py) before it is recorded as unknown: an append never waits on a huge
# tree for longer. Here, not in gitstamp, so the facade's default needs no git code.
STAMP_SECONDS: Final = 5.0

_current: ContextVar[Deadline | None] = ContextVar("forest_deadline", default=None)


class Deadline:
    """A point in time (monotonic) after which, or a cancel after which, work stops."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = seconds
        self._at = time.monotonic() + seconds if seconds is not None else None
        self._reason: str | None = None
        self._lock = threading.Lock()
        self._interrupts: list[Callable[[], None]] = []

    @property
    def reason(self) -> str | None:
        """Why the work must stop now (None: it may go on)."""
        if self._reason is None and self._at is not None and time.monotonic() >= self._at:
            self._reason = f"its deadline of {self.seconds:g} s passed"
        return self._reason

    def remaining(self) -> float | None:
        """Seconds left (0 once stopped; None: no time limit)."""
        if self.reason is not None:
            return 0.0
        return None if self._at is None else max(self._at - time.monotonic(), 0.0)

    def cancel(self, reason: str = "the client went away") -> None:
        """Stop the work as soon as it looks (any thread); interrupts what is running."""
        with self._lock:
            if self._reason is None:
                self._reason = reason
            interrupts = list(self._interrupts)
        for interrupt in interrupts:
            interrupt()

    def check(self) -> None:
        """Raise SearchStopped when the work must stop."""
        reason = self.reason
        if reason is not None:
            raise SearchStopped(reason)

    @contextmanager
    def interrupting(self, interrupt: Callable[[], None]) -> Iterator[None]:
        """Within the block, `cancel()` also calls `interrupt` (a driver's cancel of the
        statement running on a connection this work holds); never after the block."""
        with self._lock:
            self._interrupts.append(interrupt)
        try:
            yield
        finally:
            with self._lock:
                self._interrupts.remove(interrupt)


@contextmanager
def running(deadline: Deadline | None) -> Iterator[None]:
    """Make `deadline` the one `checkpoint()` sees on this thread within the block."""
    token = _current.set(deadline)
    try:
        if deadline is not None:
            deadline.check()
        yield
    finally:
        _current.reset(token)


def current() -> Deadline | None:
    """The deadline of the search running on this thread, if any."""
    return _current.get()


def checkpoint() -> None:
    """Raise SearchStopped if the running search's deadline passed or it was cancelled."""
    deadline = _current.get()
    if deadline is not None:
        deadline.check()
