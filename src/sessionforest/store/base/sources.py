"""The `SourceStore` contract: how far each followed transcript was imported.

The live mirror (`forest watch`, `forest serve --watch`, the Claude Code hook)
imports a source file from where its last import stopped. That place is kept
in the store beside the chats it made, one row per file path, so a restart
(or another process: a hook and a watcher may follow the same file) resumes
there. The position itself is the importer's (io/position.py), kept as JSON
text the store never reads; the rest says what a status page shows.
"""

from __future__ import annotations

from typing import Protocol

import msgspec


class FollowedSource(msgspec.Struct, frozen=True):
    """One followed source file and where its import stands."""

    path: str  # the file, absolute
    format: str  # its importer (io/importers.py)
    position: str  # the importer's SourcePosition as JSON text (opaque here)
    offset: int  # bytes of the file imported (the position's, for listings)
    chat: str | None  # the chat its last import wrote to
    updated_at: str  # when the row was last written
    error: str | None  # why the last import of it failed (None: it did not)


class SourceStore(Protocol):
    """A backend's table of followed sources (`followed_sources`)."""

    def followed(self, path: str) -> FollowedSource | None:
        """The row of `path`, if it was ever followed."""
        ...

    def all_followed(self) -> list[FollowedSource]:
        """Every row, by path."""
        ...

    def keep_followed(self, source: FollowedSource) -> None:
        """Insert or replace the row of `source.path` (one short write)."""
        ...

    def forget_followed(self, path: str) -> None:
        """Drop the row of `path` (its chats stay; a new file there starts over)."""
        ...
