"""Where the mirror looks: locations (a format and a root) and the files each one reads.

With no location given, the mirror follows every place `forest sources` knows
a harness keeps its chats (io/sources.py: the harness's own variables first,
then its defaults), whether or not it exists yet: the watcher looks for a
missing one again now and then and follows it once it is there.

A location is a directory (its files are those its harness's `accept` takes,
anywhere below it) or one file (a Markdown history, a SQLite database).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidArgument
from ..io import importers
from ..io import sources as harnesses
from ..io.common import walk


@dataclass(frozen=True, slots=True)
class Location:
    """One followed location: a format's root directory, or one file."""

    format: str
    root: Path  # absolute, real as far as it exists
    accept: Callable[[Path], bool]  # the files of a directory that are chats
    directory: bool  # a tree of files (else the root is the one file)

    @classmethod
    def of(cls, fmt: str, path: Path) -> Location:
        """The location `path` of format `fmt` (its harness's files, or its importer's)."""
        for harness in harnesses.HARNESSES:
            if harness.format == fmt:
                return _location(fmt, path, harness.accept)
        return _location(fmt, path, importers.reader_for(fmt).accept)

    @property
    def reader(self) -> importers.Reader:
        return importers.reader_for(self.format)

    def exists(self) -> bool:
        return self.root.is_dir() if self.directory else self.root.is_file()

    def holds(self, path: Path) -> bool:
        """Whether `path` is one of this location's files (by name: it may be gone)."""
        if not self.directory:
            return path == self.root
        return path != self.root and path.is_relative_to(self.root) and self.accept(path)

    def files(self) -> list[Path]:
        """Every file of this location now, in the order its importer reads them (a
        worker's chat after its parent's); links leading out of it are not followed."""
        if not self.exists():
            return []
        if not self.directory:
            return [self.root]
        return self.reader.order(walk(self.root, self.accept).files)


def real(path: Path) -> Path:
    """`path` absolute, with links resolved as far as it exists."""
    return Path(os.path.realpath(path.expanduser()))


def _location(fmt: str, path: Path, accept: Callable[[Path], bool]) -> Location:
    root = real(path)
    # A name with a suffix is one file (opencode.db, .aider.chat.history.md); a
    # directory is what the harness keeps its chats in.
    directory = root.is_dir() or (not root.exists() and not root.suffix)
    return Location(fmt, root, accept, directory)


def default_locations() -> list[Location]:
    """Every place a harness this sessionforest imports keeps its chats."""
    found: list[Location] = []
    seen: set[Path] = set()
    for harness in harnesses.HARNESSES:
        if harness.format not in importers.READERS:
            continue
        for path, _origin in harness.roots():
            location = _location(harness.format, path, harness.accept)
            if location.root not in seen:
                seen.add(location.root)
                found.append(location)
    return found


def location_for(path: Path, fmt: str | None, known: Iterable[Location]) -> Location:
    """The location a given path names: its format as given, else that of the known
    location it lies in; InvalidArgument when neither says."""
    where = real(path)
    known = list(known)
    for location in known:
        inside = where == location.root or where.is_relative_to(location.root)
        if inside and (fmt is None or fmt == location.format):
            return _location(location.format, where, location.accept)
    if fmt is not None:
        return Location.of(fmt, where)  # an unknown format is refused here
    roots = ", ".join(str(k.root) for k in known if k.directory)
    raise InvalidArgument(
        "location",
        f"{path} is not in any harness's chats ({roots}); say which format it holds with --format",
    )
