"""Where requests run: a pool of reader threads and ONE writer thread (group commit).

Reads run on `READERS` threads (SQLite readers never wait for the writer
beyond WAL's rules). Every write runs on the one writer thread, so writes
commit in the order they were submitted and their changes are reported
(`on_commit`, on the writer thread) in that same order. `sessions/append`s
that arrive while the writer is busy join one group, committed in one
transaction by one writer job (measured: benchmarks/bench_server.py); any
other write seals the open group first, so order still holds.

A write that appends takes its worktree stamp first, on one of `STAMPERS`
threads (`Stamps`), and hands it to the writer (`Forest.stamped`): git status
and hashing a big dirty tree (bounded: gitstamp.STAMP_SECONDS) never hold up
the writer, so an unrelated session's append never waits behind them. A
session the facade already knows is unbound needs no stamp: its append skips
that hop (`Forest.stamp_known`).

The status cache (`Statuses`) is the writer thread's: the status each
session had when this server last wrote or read it, for the changes it
reports. Nothing here runs the facade on the event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

from ..errors import ForestError
from ..forest import AppendRequest, Forest
from ..model import Entry
from ..store.base import Stamping
from .changes import Change, appended

if TYPE_CHECKING:
    from .context import Call

T = TypeVar("T")
READERS = 4  # reader threads; more would only queue on the GIL on a small machine
STAMPERS = 4  # threads taking worktree stamps ahead of appends (git runs in a child)
Stamped = Mapping[str, Stamping]
NONE: Stamped = MappingProxyType({})  # no stamp taken ahead: the writer stamps


class Readers:
    """The reader pool; it knows how many reads are running, so a stop can wait for
    them a bounded time (a read stuck in a long statement must not keep a SIGTERM from
    ending the server: reads write nothing, so leaving one is safe)."""

    def __init__(self, threads: int = READERS) -> None:
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="forest-reader")
        self._running = 0
        self._quiet = threading.Condition()

    async def run(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._counted, fn)

    def _counted(self, fn: Callable[[], T]) -> T:
        with self._quiet:
            self._running += 1
        try:
            return fn()
        finally:
            with self._quiet:
                self._running -= 1
                self._quiet.notify_all()

    def close(self, grace: float | None = None) -> int:
        """Take no more reads (queued ones are dropped) and wait for the running ones,
        at most `grace` seconds (None: as long as they take); how many still run."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._quiet:
            self._quiet.wait_for(lambda: self._running == 0, timeout=grace)
            return self._running


class Stamps:
    """Takes the stamps of appends ahead of the writer (see the module docstring)."""

    def __init__(self, forest: Forest, threads: int = STAMPERS) -> None:
        self._forest = forest
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="forest-stamp")

    async def take(self, session_id: str | None) -> Stamped:
        """The stamp an append to `session_id` will carry (NONE: the writer stamps, as
        when the store could not say whether the session is bound)."""
        if session_id is None:
            return NONE
        known = self._forest.stamp_known(session_id)
        if known is not None:  # an unbound session: no thread hop for a dict lookup
            return {session_id: known}
        loop = asyncio.get_running_loop()
        try:
            stamping = await loop.run_in_executor(self._pool, self._forest.stamp_ahead, session_id)
        except ForestError:
            return NONE
        return {session_id: stamping}

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class Statuses:
    """Each session's status as this server last wrote or read it (writer thread only)."""

    def __init__(self, forest: Forest) -> None:
        self._forest = forest
        self._known: dict[str, str] = {}

    def get(self, session_id: str) -> str:
        status = self._known.get(session_id)
        if status is None:
            status = self._known[session_id] = self._forest.session(session_id).status
        return status

    def set(self, session_id: str, status: str) -> None:
        self._known[session_id] = status


class _Group:
    """Appends gathered while the writer was busy, to be committed together."""

    __slots__ = ("items", "stamps")

    def __init__(self) -> None:
        self.items: list[tuple[AppendRequest, asyncio.Future[Entry]]] = []
        self.stamps: dict[str, Stamping] = {}


def _settle(settled: Sequence[tuple[asyncio.Future[Entry], Entry | BaseException]]) -> None:
    """On the loop: answer a whole group's appends (one wake-up of the loop for all)."""
    for future, outcome in settled:
        if future.done():
            continue
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


class Writer:
    """The one writer thread and its group commit.

    `on_commit(changes)` runs on the writer thread right after a commit that
    made changes, before the next write starts; `guard()` is held around each
    write and its report (the watcher's way to tell this server's commits from
    other processes': watcher.py)."""

    def __init__(
        self,
        forest: Forest,
        on_commit: Callable[[list[Change]], None],
        guard: Callable[[], AbstractContextManager[object]],
    ) -> None:
        self.forest = forest
        self.statuses = Statuses(forest)
        self._on_commit = on_commit
        self._guard = guard
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="forest-writer")
        self._group: _Group | None = None
        self._group_lock = threading.Lock()

    async def write(self, fn: Callable[[Call], T], call: Call, stamps: Stamped = NONE) -> T:
        """Run `fn(call)` on the writer thread (its appends carry `stamps`, taken
        ahead); report `call.changes` once it ran."""
        loop = asyncio.get_running_loop()
        with self._group_lock:
            self._group = None  # seal the open group: it commits before this write
            job = loop.run_in_executor(self._pool, self._commit, fn, call, stamps)
        return await job

    def write_now(self, fn: Callable[[Call], T], call: Call) -> T:
        """`write` from a thread that is not the event loop's: runs `fn(call)` as the
        writer's next job and waits for it."""
        with self._group_lock:
            self._group = None
            job = self._pool.submit(self._commit, fn, call, NONE)
        return job.result()

    async def append(self, request: AppendRequest, stamps: Stamped = NONE) -> Entry:
        """Append through the current group (opening one, and its writer job, if none)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Entry] = loop.create_future()
        with self._group_lock:
            group = self._group
            if group is None:
                group = self._group = _Group()
                self._pool.submit(self._commit_group, group, loop)
            group.items.append((request, future))
            group.stamps.update(stamps)
        return await future

    def _commit_group(self, group: _Group, loop: asyncio.AbstractEventLoop) -> None:
        with self._group_lock:
            if self._group is group:
                self._group = None
            items = list(group.items)
            stamps = dict(group.stamps)
        answered = False
        try:
            with self._guard():
                try:
                    with self.forest.stamped(stamps):
                        outcomes: list[Entry | ForestError] = self.forest.append_group(
                            [r for r, _ in items]
                        )
                except BaseException as exc:  # a store error: nothing of the group was written
                    answered = True
                    loop.call_soon_threadsafe(_settle, [(future, exc) for _, future in items])
                    return
                # Answered before anything else can fail: what is committed is each
                # caller's answer even if reporting the change then raises.
                answered = True
                loop.call_soon_threadsafe(
                    _settle, [(future, o) for (_, future), o in zip(items, outcomes, strict=True)]
                )
                changes = []
                for outcome in outcomes:
                    if isinstance(outcome, Entry):
                        changes.append(appended([outcome], self.statuses.get(outcome.session_id)))
                if changes:
                    self._on_commit(changes)
        except BaseException as exc:
            # The guard itself failed, before the group was tried: no caller may wait forever.
            if not answered:
                loop.call_soon_threadsafe(_settle, [(future, exc) for _, future in items])
            raise

    def _commit(self, fn: Callable[[Call], T], call: Call, stamps: Stamped) -> T:
        with self._guard():
            try:
                with self.forest.stamped(stamps):
                    return fn(call)
            finally:
                # Reported from this thread, in the order the writes ran: commit
                # order. A write that failed after committing part of its work (an
                # import) still reports what it committed.
                if call.changes:
                    self._on_commit(list(call.changes))

    def close(self) -> None:
        """Let queued writes finish (each is one transaction)."""
        self._pool.shutdown(wait=True)
