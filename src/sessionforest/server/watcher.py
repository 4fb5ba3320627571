"""Other processes' commits as `sessions/changed`: the watcher thread.

Commits by other processes (a `forest append` or `forest rename` in a terminal,
another server, an importer) are noticed every `WATCH_SECONDS`, only when the
store's commit probe moved (`Forest.commit_probe`: SQLite's `PRAGMA
data_version`, PostgreSQL's LISTEN/NOTIFY), and then only the sessions that
changed are read, each's head, activity, status and title (the probe's
`changed()`: SQLite's `session_changes` revs, the notified ids): an idle store
costs one pragma or none a poll, and a poll after a commit reads the rows of
that commit, however many sessions the store holds. Every head is read
(`Forest.heads()`) only at the start and when a probe cannot tell. What this
server's own writer committed is remembered (`OwnCommits`) so it is not told
twice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..errors import ForestError
from ..forest import Forest
from ..store.base import CommitProbe, HeadRow
from .changes import Change

# How often other processes' commits are looked for: the UI's "within a second".
WATCH_SECONDS = 0.25


class OwnCommits:
    """What this server's writer committed last, per session: (head, status).

    The writer holds `guard()` from a commit until it is remembered, and the
    watcher holds it from a poll until it has judged it: a poll never sees a
    commit of ours that is not remembered yet."""

    def __init__(self) -> None:
        # (head, status, the title it last renamed the session to, None: never)
        self._last: dict[str, tuple[str | None, str, str | None]] = {}
        self._lock = threading.RLock()

    @contextmanager
    def guard(self) -> Iterator[None]:
        with self._lock:
            yield

    def remember(self, changes: list[Change]) -> None:
        with self._lock:
            for change in changes:
                kept = self._last.get(change.session_id)
                title = change.title
                if title is None and kept is not None:
                    title = kept[2]
                self._last[change.session_id] = (change.head, change.status, title)

    def snapshot(self) -> dict[str, tuple[str | None, str, str | None]]:
        with self._lock:
            return dict(self._last)


class Watcher:
    """The `forest-watch` thread: polls heads, reports what other processes changed."""

    def __init__(
        self,
        forest: Forest,
        own: OwnCommits,
        on_changes: Callable[[list[Change]], None],
        every: float = WATCH_SECONDS,
    ) -> None:
        self.forest = forest
        self.own = own
        self.every = every
        self._on_changes = on_changes
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start polling (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="forest-watch", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        probe = self._probe()
        try:
            self._watch(probe)
        finally:
            if probe is not None:
                probe.close()

    def _probe(self) -> CommitProbe | None:
        try:
            return self.forest.commit_probe()
        except ForestError:
            return None  # polled without one: every tick scans

    def _moved(self, probe: CommitProbe | None, last: list[int | None]) -> bool:
        """Whether anyone committed since the last reading (True without a probe)."""
        if probe is None:
            return True
        try:
            now = probe()
        except Exception:  # a probe that fails says nothing: scan
            return True
        moved, last[0] = now != last[0], now
        return moved

    def _watch(self, probe: CommitProbe | None) -> None:
        last: list[int | None] = [None]
        self._moved(probe, last)  # the reading the first scan is current with
        seen = {sid: (head, at, status, title) for sid, head, at, status, title in self._poll()}
        while not self._stop.wait(self.every):
            if not self._moved(probe, last):
                continue
            changes = []
            with self.own.guard():
                polled = self._changed(probe)
                ours = self.own.snapshot()
            for sid, head, updated, status, title in polled:
                before = seen.get(sid)
                seen[sid] = (head, updated, status, title)
                if before == (head, updated, status, title):
                    continue
                own = ours.get(sid)
                if before is None and own is not None:
                    # New to this watcher, but this server wrote it (and said it was
                    # created) after the watcher's last poll: compare with what it said,
                    # title too (another process may have renamed it since).
                    # (A change that did not say its title, an import's: taken as this.)
                    before = (own[0], updated, own[1], title if own[2] is None else own[2])
                    if before == (head, updated, status, title):
                        continue
                retitled = before is not None and before[3] != title
                ours_alone = own is not None and (not retitled or own[2] == title)
                if ours_alone and own is not None and own[:2] == (head, status):
                    continue  # this server's writer committed it and said so
                kind = "created" if before is None else "head_moved"
                if before is not None and before[0] == head and before[2] != status:
                    kind = "status"
                elif before is not None and before[:3] == (head, updated, status):
                    kind = "renamed"  # `forest rename` in a terminal: only the title moved
                changes.append(Change(sid, kind, head, status, None))
            if changes:
                self._on_changes(changes)

    def _changed(self, probe: CommitProbe | None) -> list[HeadRow]:
        """The heads of the sessions changed since the last poll (every head when the
        probe cannot tell)."""
        if probe is not None:
            try:
                rows = probe.changed()
            except Exception:  # a probe that fails says nothing: read every head
                rows = None
            if rows is not None:
                return rows
        return self._poll()

    def _poll(self) -> list[HeadRow]:
        try:
            return self.forest.heads()
        except ForestError:
            return []  # busy or briefly unreadable: the next poll sees the change

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
