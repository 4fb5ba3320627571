"""What every importer shares: derived ids, bounded line reading, safe file walks, reports.

Input is untrusted: lines are capped (a huge line is an error, never a huge
allocation), directory walks never leave the given root (symlinks pointing
outside are refused) and nothing is ever evaluated, only parsed as JSON.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

import orjson

from ..errors import ImportRejected
from ..ids import iso
from ..render import plural
from ..store.sqlite.bulk import ChatResult

MAX_LINE = 64 * 2**20  # one JSONL line (or one ChatGPT conversation) at most
NOTES_PER_FILE = 20  # per-file notes beyond this are counted, not listed
EPOCH = "1970-01-01T00:00:00.000Z"

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]
_SHIFTS = tuple(range(120, -1, -10))


def _hash(text: str, size: int) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=size).digest())


class Ids:
    """Deterministic ids for one source chat: the same source always maps to the same ids.

    They look like the forest's own ids (26 base32 characters), but the high 48
    bits hash the chat instead of holding a time: a chat's entries share one
    key range, which keeps bulk inserts local in the B-tree as time order does.
    """

    __slots__ = ("_prefix", "_seed", "session")

    def __init__(self, fmt: str, source_id: str) -> None:
        self._seed = f"{fmt}\x1f{source_id}\x1f"
        self._prefix = _hash(self._seed, 6) << 80
        self.session = self.entry("")

    def entry(self, key: str) -> str:
        value = self._prefix | _hash(self._seed + key, 10)
        pairs = _PAIRS
        return "".join([pairs[(value >> shift) & 1023] for shift in _SHIFTS])


def iso_time(value: Any) -> str | None:
    """An RFC 3339 string or epoch number (s or ms) as the forest's timestamp form."""
    try:
        if isinstance(value, str) and value:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            seconds = value / 1000 if value > 1e11 else value  # ms vs s
            moment = datetime.fromtimestamp(seconds, UTC)
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    return iso(moment)


def one_line(text: str, limit: int = 80) -> str:
    """A title from free text: first non-blank line, whitespace folded, cut at `limit`."""
    for line in text.splitlines():
        folded = " ".join(line.split())
        if folded:
            return folded if len(folded) <= limit else folded[: limit - 1].rstrip() + "…"
    return ""


# --- reading ----------------------------------------------------------------------


class Progress(Protocol):
    """Where importers report bytes read (the CLI draws a rich progress bar)."""

    def begin(self, total: int) -> None: ...

    def advance(self, done: int) -> None: ...


TOO_LONG = b""  # yielded in place of a line longer than MAX_LINE (already skipped)


def lines(
    handle: IO[bytes], progress: Progress | None = None, limit: int | None = None
) -> Iterator[tuple[int, bytes]]:
    """(1-based number, stripped line) for each non-blank line, never holding more than
    `limit` (default MAX_LINE) bytes of one.

    A longer line is consumed in bounded chunks and yielded as `TOO_LONG`, so
    the caller decides between failing and skipping it.
    """
    limit = MAX_LINE if limit is None else limit
    step = 1 << 20
    pending = 0
    for number, raw in enumerate(iter(lambda: handle.readline(limit + 1), b""), 1):
        pending += len(raw)
        if len(raw) > limit:
            while not raw.endswith(b"\n"):
                raw = handle.readline(step)
                pending += len(raw)
                if not raw:
                    break
            yield number, TOO_LONG
        else:
            line = raw.strip()
            if line:
                yield number, line
        if progress is not None and pending >= step:
            progress.advance(pending)
            pending = 0
    if progress is not None and pending:
        progress.advance(pending)


def too_long() -> str:
    return f"line is longer than {MAX_LINE / 2**20:g} MiB; refusing to load it"


# --- walking a directory ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Found:
    files: list[Path]
    refused: list[tuple[Path, str]]


def walk(root: Path, accept: Callable[[Path], bool]) -> Found:
    """Every regular file under `root` that `accept`s, sorted; never leaves `root`.

    Symlinked directories are not descended into; a symlinked file is kept only
    when it resolves inside `root`, otherwise it is refused with a reason.
    """
    base = root.resolve()
    files: dict[Path, None] = {}  # ordered set: a file and a link to it are one file
    refused: list[tuple[Path, str]] = []
    for folder, dirs, names in os.walk(base, followlinks=False):
        here = Path(folder)
        for name in dirs:
            if (here / name).is_symlink():
                refused.append((here / name, "symlinked directory: not followed"))
        dirs.sort()
        for name in sorted(names):
            path = here / name
            if not accept(path):
                continue
            if path.is_symlink():
                target = path.resolve()
                if not target.is_relative_to(base):
                    refused.append((path, f"symlink points outside {base}"))
                    continue
                if not target.is_file():
                    refused.append((path, "symlink to something that is not a file"))
                    continue
                path = target
            elif not path.is_file():
                continue
            files[path] = None
    return Found(sorted(files), refused)


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


# --- the report -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SkippedLine:
    path: str
    line: int | None
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "reason": self.reason}

    def __str__(self) -> str:
        at = f":{self.line}" if self.line is not None else ""
        return f"{self.path}{at}: {self.reason}"


@dataclass(slots=True)
class ChatReport:
    """One chat of an import: where it came from and what the import changed."""

    session_id: str
    source_format: str
    source_path: str
    source_id: str
    created: bool
    added: int
    unchanged: int
    entries: int
    branches: int
    head: str | None
    hidden: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "source": {
                "format": self.source_format,
                "path": self.source_path,
                "id": self.source_id,
            },
            "created": self.created,
            "added": self.added,
            "unchanged": self.unchanged,
            "entries": self.entries,
            "branches": self.branches,
            "head": self.head,
            "hidden": self.hidden,
        }


@dataclass(slots=True)
class ImportReport:
    """What an import did: chats written, entries added, branches, skipped lines, notes."""

    format: str
    chats: list[ChatReport] = field(default_factory=list)
    skipped: list[SkippedLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def entries(self) -> int:
        return sum(c.added for c in self.chats)

    @property
    def unchanged(self) -> int:
        return sum(c.unchanged for c in self.chats)

    @property
    def branches(self) -> int:
        return sum(c.branches for c in self.chats)

    def add(
        self, result: ChatResult | None, fmt: str, path: Path, source_id: str, hidden: bool = False
    ) -> None:
        """Record a committed chat (`ChatWriter.result`)."""
        assert result is not None, "a chat is recorded after its transaction committed"
        self.chats.append(
            ChatReport(
                result.session_id, fmt, str(path), source_id, result.created, result.added,
                result.unchanged, result.entries, result.branches, result.head, hidden,
            )
        )  # fmt: skip

    def summary(self) -> str:
        new = sum(1 for c in self.chats if c.created)
        workers = sum(1 for c in self.chats if c.hidden)
        return (
            f"{plural(len(self.chats), 'chat')} ({new} new, {workers} worker), "
            f"{plural(self.entries, 'entry', 'entries')} added ({self.unchanged} already there), "
            f"{plural(self.branches, 'branch', 'branches')}, "
            f"{plural(len(self.skipped), 'skipped line')}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "chats": len(self.chats),
            "entries": self.entries,
            "unchanged": self.unchanged,
            "branches": self.branches,
            "skipped": [s.to_json() for s in self.skipped],
            "notes": list(self.notes),
            "sessions": [c.to_json() for c in self.chats],
        }


class Notes:
    """Per-file notes, capped so a file of a million odd lines cannot flood the report."""

    def __init__(self, report: ImportReport, path: Path) -> None:
        self._report = report
        self._path = path
        self._count = 0

    def add(self, text: str) -> None:
        self._count += 1
        if self._count <= NOTES_PER_FILE:
            self._report.notes.append(f"{self._path}: {text}")

    def close(self) -> None:
        if self._count > NOTES_PER_FILE:
            more = self._count - NOTES_PER_FILE
            self._report.notes.append(
                f"{self._path}: ... and {plural(more, 'more note')} like these"
            )


class BadLines:
    """The `--skip-bad` switch: a bad line either fails its chat or is recorded and skipped."""

    def __init__(self, report: ImportReport, skip: bool) -> None:
        self._report = report
        self.skip = skip

    def bad(self, path: Path, line: int | None, reason: str, entry_id: str | None = None) -> None:
        if not self.skip:
            raise ImportRejected(str(path), line, reason, entry_id)
        self._report.skipped.append(SkippedLine(str(path), line, reason))


# Malformed input surfaces as these while mapping a record; each becomes a bad line.
MALFORMED = (ValueError, TypeError, AttributeError, KeyError)


def reason(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, ValueError) else f"unexpected shape ({exc!r})"


def records(
    path: Path, handle: IO[bytes], bad: BadLines, progress: Progress | None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each JSONL line; unreadable lines go to `bad`."""
    for number, raw in lines(handle, progress):
        if raw == TOO_LONG:
            bad.bad(path, number, too_long())
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            bad.bad(path, number, f"invalid JSON: {exc}")
            continue
        if not isinstance(obj, dict):
            bad.bad(path, number, "expected a JSON object")
            continue
        yield number, obj
