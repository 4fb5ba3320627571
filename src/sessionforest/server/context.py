"""What every request shares: the Forest, the change hub, the threads, the client asking.

Reads run on a pool of reader threads (SQLite readers never wait for the
writer beyond WAL's rules); every write runs on ONE writer thread, so writes
commit in the order they are run and their changes reach `Hub.publish` (on
the event loop) in that same order. Nothing here runs the facade on the loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..deep import Prestarts
from ..errors import ForestError, InvalidArgument
from ..forest import AppendRequest, Forest
from ..ids import new_id
from ..model import Entry
from ..providers import ProviderConfig
from .changes import Change, Hub, Push, appended
from .limits import Limits

if TYPE_CHECKING:
    from .registry import Registry

T = TypeVar("T")
log = logging.getLogger("sessionforest.server")

# How often other processes' commits are looked for: the UI's "within a second".
WATCH_SECONDS = 0.25
READERS = 4  # reader threads; more would only queue on the GIL on a small machine
# The semantic leg's vectors (the [semantic] extra) are computed behind the
# appends by one background thread, this many entries per step, so a stop
# never waits for more than one batch.
VECTOR_STEP = 256


class Client:
    """One connected client: an HTTP request, a WebSocket or the stdio peer.

    `push` sends it a notification (None: it cannot receive any, as over
    HTTP); `state` holds what later features keep per client.
    """

    def __init__(self, transport: str, push: Push | None = None) -> None:
        self.id = new_id()
        self.transport = transport
        self.push = push
        self.state: dict[str, Any] = {}


@dataclass
class Call:
    """One method call: the facade, the client, the methods it was dispatched
    through, and (for writes) the changes made."""

    forest: Forest
    client: Client
    server: Server
    methods: Registry
    changes: list[Change] = field(default_factory=list)

    def changed(self, change: Change) -> None:
        self.changes.append(change)

    def status_of(self, session_id: str) -> str:
        return self.server.status_of(session_id)


class _Group:
    """Appends gathered while the writer was busy, to be committed together."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[tuple[AppendRequest, asyncio.Future[Entry]]] = []


def _settle(future: asyncio.Future[Entry], outcome: Entry | BaseException) -> None:
    if future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


class Server:
    """The state of one running server."""

    def __init__(
        self,
        forest: Forest,
        *,
        limits: Limits | None = None,
        import_roots: tuple[Path, ...] = (),
        provider: ProviderConfig | None = None,
    ) -> None:
        self.forest = forest
        self.provider = provider  # the model chat/reply talks to (None: none configured)
        self.limits = limits or Limits()
        self.import_roots = tuple(Path(os.path.realpath(r)) for r in import_roots)
        self.hub = Hub(self.limits.history)
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="forest-writer")
        self._readers = ThreadPoolExecutor(READERS, thread_name_prefix="forest-reader")
        self._statuses: dict[str, str] = {}  # writer thread only
        self.loop: asyncio.AbstractEventLoop | None = None
        # Group commit: `sessions/append`s that arrive while the writer is busy join
        # one group, committed in one transaction by one writer job (measured:
        # benchmarks/bench_server.py). Any other write seals the open group first,
        # so writes still commit in the order they were submitted.
        self._group: _Group | None = None
        self._group_lock = threading.Lock()
        # Deep search (T2): at most one pre-started search per connected client.
        self.prestarts = Prestarts()
        # Commits by other processes (a `forest append` in a terminal, another
        # server) are noticed by polling every session's head (`watch`); what
        # this server's own writer published is remembered so it is not told twice.
        self._ours: dict[str, tuple[str | None, str]] = {}
        # Held by the writer from a commit until it is remembered, and by the
        # watcher from a poll until it has judged it: a poll never sees a commit
        # of ours that is not remembered yet.
        self._ours_lock = threading.RLock()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        # The semantic leg's catch-up (only with the leg): woken by every commit,
        # this server's or another process's, and once at start for a backlog.
        self._vectors_due = threading.Event()
        self._vectorizer: threading.Thread | None = None

    def watch(self, every: float = WATCH_SECONDS) -> None:
        """Start publishing other processes' commits (needs `loop`) and, with the
        semantic leg, computing new entries' vectors behind the appends; idempotent."""
        if self._watcher is None:
            self._watcher = threading.Thread(
                target=self._watch, args=(every,), name="forest-watch", daemon=True
            )
            self._watcher.start()
        if self._vectorizer is None and self.forest.semantic and self.forest.readonly_why is None:
            self._vectors_due.set()  # a backlog from before this server started
            self._vectorizer = threading.Thread(
                target=self._vectorize, name="forest-vectors", daemon=True
            )
            self._vectorizer.start()

    def _vectorize(self) -> None:
        """Embed pending entries, VECTOR_STEP at a time, whenever a commit wakes it.

        Embedding runs outside any transaction and each step stores its vectors
        in one short write, so appends and searches go on meanwhile; a search
        still embeds a handful of pending entries itself (search/semantic.py),
        so what was appended a moment ago is found either way."""
        while True:
            self._vectors_due.wait()
            if self._stop.is_set():
                return
            self._vectors_due.clear()
            try:
                while not self._stop.is_set():
                    done, _ = self.forest.index_semantic(limit=VECTOR_STEP)
                    if done < VECTOR_STEP:
                        break
            except ForestError:
                continue  # busy or briefly unreadable: the next commit wakes it again
            except Exception:  # the model itself failed: say so once and stop trying
                log.exception("computing entry vectors failed; the server stops doing it")
                return

    def _remember(self, changes: list[Change]) -> None:
        with self._ours_lock:
            for change in changes:
                self._ours[change.session_id] = (change.head, change.status)

    def _watch(self, every: float) -> None:
        seen = {sid: (head, updated, status) for sid, head, updated, status in self._poll()}
        while not self._stop.wait(every):
            changes = []
            with self._ours_lock:
                polled = self._poll()
                ours = dict(self._ours)
            for sid, head, updated, status in polled:
                before = seen.get(sid)
                seen[sid] = (head, updated, status)
                if before == (head, updated, status):
                    continue
                if ours.get(sid) == (head, status):
                    continue  # this server's writer committed it and said so
                if before is None and sid in ours:
                    # New to this watcher, but this server wrote it (and said it was
                    # created) after the watcher's last poll: compare with that.
                    before = (ours[sid][0], updated, ours[sid][1])
                kind = "created" if before is None else "head_moved"
                if before is not None and before[0] == head and before[2] != status:
                    kind = "status"
                changes.append(Change(sid, kind, head, status, None))
            if changes:
                self._vectors_due.set()
                if self.loop is not None:
                    self.loop.call_soon_threadsafe(self.hub.publish, changes)

    def _poll(self) -> list[tuple[str, str | None, str, str]]:
        try:
            return self.forest.heads()
        except ForestError:
            return []  # busy or briefly unreadable: the next poll sees the change

    async def read(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._readers, fn)

    async def write(self, fn: Callable[[Call], T], call: Call) -> T:
        loop = asyncio.get_running_loop()
        with self._group_lock:
            self._group = None  # seal the open group: it commits before this write
            job = loop.run_in_executor(self._writer, self._commit, fn, call, loop)
        return await job

    async def append(self, request: AppendRequest) -> Entry:
        """Append through the current group (opening one, and its writer job, if none)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Entry] = loop.create_future()
        with self._group_lock:
            group = self._group
            if group is None:
                group = self._group = _Group()
                self._writer.submit(self._commit_group, group, loop)
            group.items.append((request, future))
        return await future

    def _commit_group(self, group: _Group, loop: asyncio.AbstractEventLoop) -> None:
        with self._group_lock:
            if self._group is group:
                self._group = None
            items = list(group.items)
        with self._ours_lock:
            try:
                outcomes: list[Entry | ForestError] = self.forest.append_group(
                    [r for r, _ in items]
                )
            except BaseException as exc:  # a store error: nothing of the group was written
                for _, future in items:
                    loop.call_soon_threadsafe(_settle, future, exc)
                return
            changes = []
            for (_, future), outcome in zip(items, outcomes, strict=True):
                if isinstance(outcome, Entry):
                    changes.append(appended([outcome], self.status_of(outcome.session_id)))
                loop.call_soon_threadsafe(_settle, future, outcome)
            if changes:
                self._remember(changes)
                self._vectors_due.set()
                loop.call_soon_threadsafe(self.hub.publish, changes)

    def _commit(self, fn: Callable[[Call], T], call: Call, loop: asyncio.AbstractEventLoop) -> T:
        with self._ours_lock:
            try:
                return fn(call)
            finally:
                # Published from this thread, in the order the writes ran: commit
                # order. A write that failed after committing part of its work (an
                # import) still reports what it committed.
                if call.changes:
                    self._remember(list(call.changes))
                    self._vectors_due.set()
                    loop.call_soon_threadsafe(self.hub.publish, list(call.changes))

    def status_of(self, session_id: str) -> str:
        """The session's status as this server last wrote or read it (writer thread)."""
        status = self._statuses.get(session_id)
        if status is None:
            status = self._statuses[session_id] = self.forest.session(session_id).status
        return status

    def set_status(self, session_id: str, status: str) -> None:
        self._statuses[session_id] = status

    def import_path(self, path: str) -> Path:
        """`path`, resolved, if it lies inside an import root; else InvalidArgument."""
        if not self.import_roots:
            raise InvalidArgument(
                "path", "this server was started without --import-root, so it imports nothing"
            )
        real = Path(os.path.realpath(path))
        for root in self.import_roots:
            if real == root or real.is_relative_to(root):
                return real
        roots = ", ".join(str(r) for r in self.import_roots)
        raise InvalidArgument("path", f"{path} is outside the import roots ({roots})")

    def close(self) -> None:
        """Let running writes finish (each is one transaction), then close the store."""
        self._stop.set()
        self._vectors_due.set()
        if self._watcher is not None:
            self._watcher.join()
        if self._vectorizer is not None:
            self._vectorizer.join()
        self._writer.shutdown(wait=True)
        self._readers.shutdown(wait=True)
        self.forest.close()
