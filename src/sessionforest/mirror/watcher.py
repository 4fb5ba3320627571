"""`Watcher`: follow locations through file notifications and import what changes.

The operating system tells us (watchfiles: inotify, FSEvents, ReadDirectoryChangesW
through the Rust `notify` crate) which files changed; each changed file of a
location is imported from its stored position (`Forest.import_followed`:
only complete lines, a shrunk or replaced file read again whole, the new
position stored after the chats committed). So:

- a file that grew costs what its new lines cost, not what the file holds;
- a half-written last line waits for its end (it is not consumed);
- nothing here holds a lock or a handle a harness could wait on: each file is
  opened, read to its last whole line and closed; a SQLite source (OpenCode)
  is read through a read-only connection, and only when its
  `PRAGMA data_version` moved since the last read;
- a restart resumes: `catch_up` compares every file with its stored position
  (size and mtime) and imports those that changed while nobody watched, in
  the order their importer reads a directory (a worker's chat after its
  parent's); it runs again once the notifications are set up, so nothing
  written in between is missed;
- a location that does not exist yet is looked for again every
  `LOOK_AGAIN` seconds and followed once it is there; a directory location
  is watched with everything below it, a file location (a history file, a
  database) through its own directory alone.

Each chat an import wrote to becomes one `Change` (`emit`), and so does each
file that failed. `run` stops between two files once `stop` is set: a file's
import is whole or not at all, so a stop never leaves part of one.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, TypeVar

import orjson

from ..errors import ForestError
from ..forest import Forest
from ..model import FollowReport
from ..render import escape
from ..text import plural
from .sources import Location

log = logging.getLogger("sessionforest.mirror")

T = TypeVar("T")
# How an import reaches the store: directly (the CLI), or on the server's writer
# thread, which publishes what it wrote (server/mirror.py).
Write = Callable[[Callable[[Forest], FollowReport]], FollowReport]

# watchfiles' grouping: a batch is yielded once no new change came for STEP ms, or
# DEBOUNCE ms after its first change at the latest (a file written to without a
# pause is still imported about twice a second).
STEP_MS: Final = 50
DEBOUNCE_MS: Final = 400
LOOK_AGAIN: Final = 5.0  # seconds between looks for a location that is not there yet
DATABASE_SUFFIXES: Final = (".db", ".sqlite", ".sqlite3")


@dataclass(frozen=True, slots=True)
class Change:
    """One line of `forest watch`: a chat an import wrote to, or a file that failed."""

    event: str  # "imported" or "failed"
    format: str
    path: str
    session_id: str | None = None
    title: str = ""
    created: bool = False
    added: int = 0
    entries: int = 0
    restarted: bool = False  # the file no longer fit its position: read again whole
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"event": self.event, "format": self.format, "path": self.path}
        if self.event == "failed":
            found["error"] = self.error
            return found
        found |= {
            "session_id": self.session_id,
            "title": self.title,
            "created": self.created,
            "added": self.added,
            "entries": self.entries,
            "restarted": self.restarted,
        }
        return found

    def line(self) -> str:
        """The change as one line of text (escaped: titles and paths come from files)."""
        if self.event == "failed":
            return escape(f"failed   {self.format}  {self.path}: {self.error}")
        what = "new chat" if self.created else "chat"
        again = " (file rewritten: read again)" if self.restarted else ""
        title = f' "{self.title}"' if self.title else ""
        return escape(
            f"+{self.added:<5} {self.format}  {what} {self.session_id}{title}  "
            f"({plural(self.entries, 'entry', 'entries')}){again}  {self.path}"
        )


def changes_of(forest: Forest, done: FollowReport) -> list[Change]:
    """The Changes one import of a followed file made (none when nothing changed)."""
    found = []
    for chat in done.report.chats:
        if not (chat.created or chat.added):
            continue
        try:
            title = forest.session(chat.session_id).title
        except ForestError:
            title = ""
        change = Change("imported", done.format, done.path, chat.session_id, title)
        found.append(
            replace(
                change,
                created=chat.created,
                added=chat.added,
                entries=chat.entries,
                restarted=done.restarted,
            )
        )
    for failure in done.report.failed:
        where = f"line {failure.line}: " if failure.line is not None else ""
        found.append(Change("failed", done.format, done.path, error=where + failure.reason))
    return found


class Watcher:
    """Follows `locations` into `forest` (see the module docstring)."""

    def __init__(
        self,
        forest: Forest,
        locations: Sequence[Location],
        emit: Callable[[Change], None],
        *,
        write: Write | None = None,
        step_ms: int = STEP_MS,
        debounce_ms: int = DEBOUNCE_MS,
        look_again: float = LOOK_AGAIN,
    ) -> None:
        self.forest = forest
        self.locations = list(locations)
        self._emit = emit
        self._write: Write = write or (lambda work: work(forest))
        self._step = step_ms
        self._debounce = debounce_ms
        self._look_again = look_again
        # A SQLite source's read-only connection and the data_version it last saw.
        self._versions: dict[Path, tuple[sqlite3.Connection, int | None]] = {}
        self.imported = 0  # files whose import ran (tests, benchmarks)

    # --- what changed -------------------------------------------------------------

    def catch_up(self, stop: threading.Event | None = None) -> int:
        """Import every file of every location that changed since its stored position
        (all of them on a first run); returns how many were imported."""
        kept = {row.path: row for row in self.forest.followed_sources()}
        due: list[tuple[Location, Path]] = []
        for location in self.locations:
            for path in location.files():
                row = kept.get(str(path))
                if (
                    row is None
                    or row.error is not None
                    or self._is_database(path)  # its WAL changes leave the file's stat be
                    or _moved(path, row.position)
                ):
                    due.append((location, path))
        # A file deleted while nothing watched (the watcher down, or the moment before
        # its notifications were set up) is forgotten here: no event will say so.
        for name in kept:
            path = Path(name)
            if self._location_of(path) is not None and not path.exists():
                self._forget(path)
        return self._import(due, stop)

    def changed(self, paths: Iterable[str], stop: threading.Event | None = None) -> int:
        """Import the files of `paths` (what the notifications named) that belong to a
        location; forget the position of those that are gone. Returns files imported."""
        due: list[tuple[Location, Path]] = []
        seen: set[Path] = set()
        for name in paths:
            path = _database_of(Path(name))
            if path in seen:
                continue
            seen.add(path)
            location = self._location_of(path)
            if location is None:
                continue
            if not path.exists():
                self._forget(path)
            elif not self._is_database(path) or self._version_moved(path):
                due.append((location, path))
        return self._import(self._ordered(due), stop)

    def _location_of(self, path: Path) -> Location | None:
        for location in self.locations:
            if location.holds(path):
                return location
        return None

    def _ordered(self, due: list[tuple[Location, Path]]) -> list[tuple[Location, Path]]:
        """Grouped by location, each group in its importer's order."""
        ordered = []
        for location in self.locations:
            mine = sorted(path for where, path in due if where is location)
            ordered += [(location, path) for path in location.reader.order(mine)]
        return ordered

    def _import(self, due: list[tuple[Location, Path]], stop: threading.Event | None) -> int:
        count = 0
        for location, path in due:
            if stop is not None and stop.is_set():
                break
            fmt = location.format
            try:
                done = self._write(_importing(fmt, path))
            except ForestError as exc:
                self._emit(Change("failed", fmt, str(path), error=str(exc)))
                continue
            count += 1
            for change in changes_of(self.forest, done):
                self._emit(change)
        self.imported += count
        return count

    def _forget(self, path: Path) -> None:
        try:
            self.forest.forget_followed(path)
        except ForestError as exc:
            log.warning("could not forget %s: %s", path, exc)
        conn = self._versions.pop(path, (None, None))[0]
        if conn is not None:
            conn.close()

    # --- SQLite sources -----------------------------------------------------------

    def _is_database(self, path: Path) -> bool:
        return path.suffix in DATABASE_SUFFIXES

    def _version_moved(self, path: Path) -> bool:
        """Whether another connection committed to the database since we last looked
        (its PRAGMA data_version, on our own read-only connection: no lock is held
        between looks)."""
        conn, before = self._versions.get(path, (None, None))
        try:
            if conn is None:
                conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.5)
            now = int(conn.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error:
            return True  # cannot tell: let the importer read it (and say what is wrong)
        self._versions[path] = (conn, now)
        return before is None or now != before

    # --- the watch ------------------------------------------------------------------

    def _roots(self) -> tuple[list[Path], list[Path]]:
        """(directories watched with all below them, directories watched alone): each
        directory location's root; the directory of each file location (not below
        it: a history file in a home directory must not watch the whole home)."""
        trees: set[Path] = set()
        alone: set[Path] = set()
        for location in self.locations:
            if location.directory and location.root.is_dir():
                trees.add(location.root)
            elif not location.directory and location.root.parent.is_dir():
                alone.add(location.root.parent)
        # A tree inside another is watched through it (watches of trees are recursive).
        kept = sorted(t for t in trees if not any(t != o and t.is_relative_to(o) for o in trees))
        return kept, sorted(a for a in alone if not any(a.is_relative_to(t) for t in kept))

    def _wanted(self, _change: Any, name: str) -> bool:
        return self._location_of(_database_of(Path(name))) is not None

    def run(self, stop: threading.Event) -> None:
        """Catch up, then import changes as they are notified, until `stop` is set."""
        try:
            self.catch_up(stop)
            while not stop.is_set():
                self._watch(stop)
        finally:
            self.close()

    def _watch(self, stop: threading.Event) -> None:
        """One watch of the locations there are (a thread per kind of watch feeding one
        queue this thread imports from), until `stop` or a missing location appears."""
        trees, alone = self._roots()
        missing = [loc for loc in self.locations if not loc.exists()]
        if not trees and not alone:
            stop.wait(self._look_again)
            return
        named: queue.SimpleQueue[list[str] | None] = queue.SimpleQueue()
        done = threading.Event()  # this watch is over (stop, or a location appeared)
        watches = [
            threading.Thread(
                target=self._notify,
                args=(roots, recursive, named, done, stop),
                name="forest-notify",
                daemon=True,
            )
            for roots, recursive in ((trees, True), (alone, False))
            if roots
        ]
        for thread in watches:
            thread.start()
        try:
            fresh = True
            while not stop.is_set():
                try:
                    batch = named.get(timeout=self._look_again)
                except queue.Empty:
                    batch = []
                if batch is None:
                    return  # a notification thread ended (its roots went away)
                if batch:
                    self.changed(batch, stop)
                if fresh and not batch:
                    # The notifications are set up by now: what was written between the
                    # first catch-up and this point is found by comparing again.
                    self.catch_up(stop)
                    fresh = False
                if any(loc.exists() for loc in missing):
                    return  # watch it too (the next watch catches up what it holds)
        finally:
            done.set()
            for thread in watches:
                thread.join()

    def _notify(
        self,
        roots: list[Path],
        recursive: bool,
        named: queue.SimpleQueue[list[str] | None],
        done: threading.Event,
        stop: threading.Event,
    ) -> None:
        """Put each batch of changed files the system reports under `roots` on `named`."""
        import watchfiles

        try:
            for batch in watchfiles.watch(
                *roots,
                watch_filter=self._wanted,
                step=self._step,
                debounce=self._debounce,
                stop_event=_Either(done, stop),
                rust_timeout=0,
                recursive=recursive,
                raise_interrupt=False,
                ignore_permission_denied=True,
            ):
                named.put([name for _, name in batch])
        except (OSError, RuntimeError) as exc:  # a root went away, the watch limit, ...
            log.warning("watching %s stopped: %s", ", ".join(map(str, roots)), exc)
        named.put(None)

    def close(self) -> None:
        for conn, _ in self._versions.values():
            conn.close()
        self._versions.clear()


class _Either:
    """Set when either event is (what watchfiles' stop_event asks for)."""

    def __init__(self, one: threading.Event, other: threading.Event) -> None:
        self._one, self._other = one, other

    def is_set(self) -> bool:
        return self._one.is_set() or self._other.is_set()


def _importing(fmt: str, path: Path) -> Callable[[Forest], FollowReport]:
    def work(forest: Forest) -> FollowReport:
        return forest.import_followed(fmt, path)

    return work


def _database_of(path: Path) -> Path:
    """A SQLite database's own path for its -wal and -shm files."""
    name = path.name
    for tail in ("-wal", "-shm", "-journal"):
        if name.endswith(tail) and name[: -len(tail)].endswith(DATABASE_SUFFIXES):
            return path.with_name(name[: -len(tail)])
    return path


def _moved(path: Path, position: str) -> bool:
    """Whether `path`'s size or mtime differ from those its position was taken at."""
    try:
        stat = path.stat()
        kept = orjson.loads(position)
    except (OSError, orjson.JSONDecodeError):
        return True
    if not isinstance(kept, dict):
        return True
    return (kept.get("size"), kept.get("mtime_ns")) != (stat.st_size, stat.st_mtime_ns)
