"""Where an import of one source stopped, so the next import starts there (the live mirror).

`SourcePosition` is what `importers.import_source` returns and takes back: for
a line format (Claude Code, Codex, Gemini JSONL, Copilot, pi) the byte just past
the last whole line imported, that line's number and what the format's reader
needs to attach the next lines (`Cursor.state`: the entry the chat goes on
from, open tool calls, the turns a rewind counts back, ...). For a source read
whole (a JSON file, a database, a Markdown history) it is the size and mtime
seen, and a changed source is imported again whole, which is idempotent.

A position is plain JSON (`to_json`/`from_json`), made to be stored by the
caller (the watcher keeps one per source in the store) and handed back
unchanged. A position that does not fit the source any more (the file shrank
or its first line changed: it was replaced) starts the source over; that is
safe, because a whole import of what is already stored changes nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument
from .common import Mark

HEAD_BYTES = 1024  # how much of the first line identifies a file


@dataclass(slots=True)
class Cursor:
    """A line reader's place: the mark after the last whole line it imported and the
    format's state there (JSON values only)."""

    mark: Mark = field(default_factory=Mark)
    state: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SourcePosition:
    """How far one source was imported (see the module docstring)."""

    format: str
    path: str
    offset: int = 0  # bytes imported: just past the last whole line (or the size read)
    line: int = 0  # lines imported
    size: int = 0  # the source's size when it was read
    mtime_ns: int = 0  # and its modification time
    head: str = ""  # a hash of the first line's first bytes: a replaced file starts over
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def cursor(self) -> Cursor:
        return Cursor(Mark(self.offset, self.line), self.state)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "path": self.path,
            "offset": self.offset,
            "line": self.line,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "head": self.head,
            "state": self.state,
        }

    @classmethod
    def from_json(cls, data: Any) -> SourcePosition:
        """A position `to_json` made; InvalidArgument names what is wrong with another."""
        if not isinstance(data, dict):
            raise InvalidArgument("position", "expected an object")
        for key in ("format", "path"):
            if not isinstance(data.get(key), str):
                raise InvalidArgument(f"position.{key}", "expected a string")
        numbers = {}
        for key in ("offset", "line", "size", "mtime_ns"):
            value = data.get(key, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidArgument(f"position.{key}", "expected a whole number >= 0")
            numbers[key] = value
        head, state = data.get("head", ""), data.get("state", {})
        if not isinstance(head, str):
            raise InvalidArgument("position.head", "expected a string")
        if not isinstance(state, dict):
            raise InvalidArgument("position.state", "expected an object")
        return cls(data["format"], data["path"], head=head, state=state, **numbers)


def head_of(path: Path) -> str:
    """The hash of the first line's first HEAD_BYTES bytes ("" for an empty file)."""
    with path.open("rb") as handle:
        first = handle.readline(HEAD_BYTES)
    return hashlib.blake2b(first, digest_size=12).hexdigest() if first else ""


def fits(position: SourcePosition | None, fmt: str, path: Path, size: int) -> bool:
    """Whether `position` was taken from this very source, which has only grown since."""
    if position is None or position.format != fmt or position.path != str(path):
        return False
    if size < position.offset:
        return False  # it shrank: rewritten, not appended to
    return position.offset == 0 or not path.is_file() or head_of(path) == position.head
