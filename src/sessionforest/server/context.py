"""What every request shares: the Forest, the change hub, the threads, the client asking.

`Server` is the composition of one running server's parts, each in its own
module: where requests run (threads.py: the reader pool, the one writer and
its group commit, the status cache), other processes' commits
(watcher.py), work behind the appends (maintenance.py), which files may be
imported or bound (roots.py), running model replies (replies.py) and the provider
clients they and deep search share (providers.Clients). Nothing here runs the
facade on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..deadline import Deadline
from ..forest import AppendRequest, Forest
from ..forest_models import Prestarts
from ..ids import new_id
from ..model import Entry
from ..providers import Clients, ProviderConfig
from .changes import Change, Hub, Push
from .limits import Limits
from .maintenance import Maintenance, store_maintenance
from .replies import Replies
from .roots import BindRoots, ImportRoots
from .threads import Readers, Stamps, Writer
from .watcher import WATCH_SECONDS, OwnCommits, Watcher

if TYPE_CHECKING:
    from .registry import Registry

T = TypeVar("T")


class Client:
    """One connected client: an HTTP request, a WebSocket or the stdio peer.

    `push` sends it a notification (None: it cannot receive any, as over
    HTTP); `state` holds what later features keep per client; `on_read`, if
    given, runs before its first read (an HTTP request starts watching for its
    client hanging up only then: writes do not stop when it does).
    """

    def __init__(
        self,
        transport: str,
        push: Push | None = None,
        on_read: Callable[[], None] | None = None,
    ) -> None:
        self._id: str | None = None
        self.transport = transport
        self.push = push
        self.state: dict[str, Any] = {}
        self.deadlines: set[Deadline] = set()  # of its reads running now
        self._on_read = on_read

    @property
    def id(self) -> str:
        """Made when first asked (most HTTP requests never do)."""
        if self._id is None:
            self._id = new_id()
        return self._id

    def reading(self, deadline: Deadline) -> None:
        """A read of this client's starts: `gone` stops it from now on."""
        self.deadlines.add(deadline)
        if self._on_read is not None:
            start, self._on_read = self._on_read, None
            start()

    def gone(self, reason: str = "the client went away") -> None:
        """The client can no longer receive answers: its running searches stop."""
        for deadline in list(self.deadlines):
            deadline.cancel(reason)


@dataclass
class Call:
    """One method call: the facade, the client, the methods it was dispatched
    through, and (for writes) the changes made."""

    forest: Forest
    client: Client
    server: Server
    methods: Registry
    changes: list[Change] = field(default_factory=list)
    # A read's deadline (Limits.search_seconds, cancelled when its client goes
    # away): the search handlers hand it to the facade.
    deadline: Deadline | None = None

    def changed(self, change: Change) -> None:
        self.changes.append(change)

    def status_of(self, session_id: str) -> str:
        return self.server.statuses.get(session_id)


class Server:
    """The state of one running server."""

    def __init__(
        self,
        forest: Forest,
        *,
        limits: Limits | None = None,
        import_roots: tuple[Path, ...] = (),
        bind_roots: tuple[Path, ...] = (),
        provider: ProviderConfig | None = None,
    ) -> None:
        self.forest = forest
        self.provider = provider  # the model chat/reply talks to (None: none configured)
        self.limits = limits or Limits()
        self.import_roots = ImportRoots(import_roots)
        self.bind_roots = BindRoots(bind_roots)  # where a remote client may bind (roots.py)
        self.hub = Hub(self.limits.history)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.clients = Clients()  # SDK clients, shared by chat/reply and deep search
        self.replies = Replies()  # running chat/reply streams, for chat/stop
        # Deep search (T2): at most one pre-started search per connected client.
        self.prestarts = Prestarts(clients=self.clients)
        self.own = OwnCommits()
        self.writer = Writer(forest, self._committed, self.own.guard)
        self.readers = Readers()
        self.stamps = Stamps(forest)
        self.statuses = self.writer.statuses
        self.watcher = Watcher(forest, self.own, self._noticed, WATCH_SECONDS)
        self.maintenance: Maintenance | None = store_maintenance(forest)
        # `forest serve --watch`: the file mirror (server/mirror.py), started with the
        # watcher once the event loop runs, stopped before the writer drains.
        self.mirror: Maintenance | None = None
        # The deadlines of the reads running now (rpc.py), so a stop can end them.
        self.reading: set[Deadline] = set()

    def watch(self) -> None:
        """Start publishing other processes' commits (needs `loop`) and the work
        behind the appends; idempotent."""
        self.watcher.start()
        if self.maintenance is not None:
            self.maintenance.start()
        if self.mirror is not None:
            self.mirror.start()

    def _committed(self, changes: list[Change]) -> None:
        """The writer thread's report of a commit: remembered, then published in order."""
        self.own.remember(changes)
        self._noticed(changes)

    def _noticed(self, changes: list[Change]) -> None:
        if self.maintenance is not None:
            self.maintenance.wake()
        if self.loop is not None:
            # A stopping server's loop may be closed already: no one is left to tell.
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(self.hub.publish, changes)

    async def read(self, fn: Callable[[], T]) -> T:
        return await self.readers.run(fn)

    async def write(
        self, fn: Callable[[Call], T], call: Call, *, stamp_for: str | None = None
    ) -> T:
        """Run `fn` on the writer thread; `stamp_for`: it appends to that session, whose
        worktree stamp is taken first on a stamping thread (never on the writer)."""
        return await self.writer.write(fn, call, await self.stamps.take(stamp_for))

    def write_now(self, fn: Callable[[Call], T], call: Call) -> T:
        """`write` for a thread of the server's own (the file mirror): runs `fn` as
        the writer's next job and waits for it, without the event loop (which may
        be stopping)."""
        return self.writer.write_now(fn, call)

    async def append(self, request: AppendRequest, *, stamp_for: str | None = None) -> Entry:
        return await self.writer.append(request, await self.stamps.take(stamp_for))

    def close(self, grace: float | None = None) -> int:
        """Stop: running searches are told to stop (their deadlines), running writes
        finish (each is one transaction), running reads get at most `grace` seconds
        (None: as long as they take); then the store closes. Returns how many reads
        were still running, abandoned (reads write nothing: nothing is lost)."""
        if self.mirror is not None:
            self.mirror.stop()  # the import in progress finishes on the writer first
        self.watcher.stop()
        if self.maintenance is not None:
            self.maintenance.stop()
        for deadline in list(self.reading):
            deadline.cancel("the server is stopping")
        self.stamps.close()
        self.writer.close()
        stuck = self.readers.close(grace)
        self.clients.close()
        self.forest.close()
        return stuck
