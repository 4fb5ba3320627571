"""`forest serve --watch`: the file mirror (mirror/watcher.py) inside a running server.

The watcher runs on its own thread; each import it makes runs as one job of
the server's writer thread (`Server.write`), like any other write, so it is
ordered with the requests' writes and what it wrote reaches subscribers at
once as `sessions/changed` ("imported"), and the sidebar search finds it (the
import indexed it in its own transaction). A stop lets the import in progress
finish, then the writer drains as for every other write.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from ..forest import Forest
from ..mirror.sources import Location
from ..mirror.watcher import Change as MirrorChange
from ..mirror.watcher import Watcher
from ..model import FollowReport
from .api import METHODS
from .changes import imported
from .context import Call, Client, Server

log = logging.getLogger("sessionforest.server")


class ServerMirror:
    """The watcher of one server (see the module docstring)."""

    def __init__(self, server: Server, locations: Sequence[Location]) -> None:
        self._server = server
        self._client = Client("mirror")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.watcher = Watcher(server.forest, locations, self._said, write=self._write)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self.watcher.run, args=(self._stop,), name="forest-mirror", daemon=True
            )
            self._thread.start()

    def _write(self, work: Callable[[Forest], FollowReport]) -> FollowReport:
        server = self._server

        def job(call: Call) -> FollowReport:
            done = work(call.forest)
            for change in imported(call.forest, done.report):
                server.statuses.set(change.session_id, change.status)
                call.changed(change)
            return done

        call = Call(server.forest, self._client, server, METHODS)
        return server.write_now(job, call)

    def _said(self, change: MirrorChange) -> None:
        if change.event == "failed":
            log.warning("mirror: %s %s: %s", change.format, change.path, change.error)
        else:
            log.info("mirror: %s", change.line())

    def wake(self) -> None:
        """Nothing to do: the system's notifications wake the watcher."""

    def stop(self) -> None:
        """Stop after the import in progress (before the writer drains)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
