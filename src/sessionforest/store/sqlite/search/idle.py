"""A writer's background indexer: what appends left pending, indexed once they pause.

An append only notes its session as pending (catchup.py) and tells this
thread it wrote (`noted`: one clock read, no lock). The thread, started by a
writer's first append, waits until its process has appended nothing for
QUIET seconds and then indexes what is pending, from every process, in
write transactions of catchup.CHUNK entries each on the store's shared
writer connection. When appends resume between chunks it waits for the next
pause again, so a writer that resumes waits for one chunk at most, and a
burst of appends never pays for its index while it lasts. An agent's appends
are separated by model calls of seconds: the index is written between them.

Nothing here is needed for correctness: a search indexes what is still
pending before it reads, a closing writer indexes the rest, and a kill -9
mid-chunk rolls that chunk back with its pending note. A failure (another
process holding the write lock past the busy timeout, a full disk) is logged
once and tried again after the next append.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from typing import Final, Protocol

from . import catchup

log = logging.getLogger("sessionforest.index")

# Seconds without an append before the thread indexes: longer than the gaps in
# a burst of appends (tens of microseconds), far shorter than a model call.
QUIET: Final = 0.05


class Indexes(Protocol):
    def index_some(self, limit: int | None = None) -> bool:
        """Index about `limit` pending entries in one write transaction; returns
        whether any are left (store.py)."""
        ...


class IdleIndexer:
    """One writer's background indexer, for the store that owns it.

    The thread holds the store only weakly: a store dropped without `close()` is
    collected as before, and its thread then ends (the store's finalizer wakes it)."""

    def __init__(self, store: Indexes, name: str) -> None:
        self._store = weakref.ref(store)
        weakref.finalize(store, self._stop)
        self._name = name
        self._last = 0.0  # monotonic time of the last append noted
        self._noted = False  # an append since the thread last started indexing
        self._closing = False
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._failed = False

    def noted(self) -> None:
        """Called after each append commits (by the appending thread)."""
        self._last = time.monotonic()
        if self._noted:
            return  # the thread has not started on the last one: it covers this one
        with self._wake:
            if self._closing:
                return
            self._noted = True
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name=f"forest-index {self._name}", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def close(self) -> None:
        """Stop the thread, after the chunk it may be indexing (the caller indexes
        the rest)."""
        self._stop()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _stop(self) -> None:
        with self._wake:
            self._closing = True
            self._wake.notify()

    def _run(self) -> None:
        wake = self._wake
        while True:
            with wake:
                while not self._noted and not self._closing:
                    wake.wait()
                if not self._quiet():
                    return
                # Cleared before indexing: an append committed before this point is
                # indexed by the chunks below; one noted after it wakes another round.
                self._noted = False
            started = self._last
            store = self._store()
            if store is None:
                return  # the store is gone
            try:
                while store.index_some(catchup.CHUNK):
                    if self._closing:
                        return
                    if self._last != started:  # appends resumed: wait for them to pause
                        with wake:
                            self._noted = True
                        break
                self._failed = False
            except Exception as exc:  # logged, retried after the next append
                if not self._failed:
                    log.warning("background indexing of %s failed: %s", self._name, exc)
                self._failed = True
            del store  # hold the store only while indexing

    def _quiet(self) -> bool:
        """Wait (holding the condition) until no append came for QUIET seconds;
        False when closing."""
        while not self._closing:
            left = self._last + QUIET - time.monotonic()
            if left <= 0:
                return True
            self._wake.wait(left)
        return False
