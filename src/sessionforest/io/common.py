"""What every importer shares: derived ids, bounded line reading, safe file walks.

Input is untrusted: lines are capped (a huge line is an error, never a huge
allocation), directory walks never leave the given root (symlinks pointing
outside are refused) and nothing is ever evaluated, only parsed as JSON.
Unreadable lines are explained in plain words (`unreadable`) by every importer.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from ..ids import CONTROL, iso
from ..model import ImportReport
from ..wrappers import cut_at_word
from .report import BadLines, Notes, Progress

MAX_LINE = 64 * 2**20  # one JSONL line (or one ChatGPT conversation) at most
BOM = b"\xef\xbb\xbf"  # UTF-8 byte order mark: skipped at the start of a file
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
NEWLINE = b"\n"

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


def file_time(path: Path) -> str:
    """The file's modification time: when a chat that states no time of its own was written."""
    return iso(datetime.fromtimestamp(path.stat().st_mtime, UTC))


# Where str.splitlines breaks a line.
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
_WORD = re.compile(r"\S+")


def one_line(text: str | Iterable[str], limit: int = 80) -> str:
    """A title from free text: first non-blank line, whitespace folded, control characters
    dropped, cut at `limit`. `text` may come in pieces (a message's text blocks), read
    as if joined by spaces. Reads no further than it needs: a pasted 60 MB log as the
    first prompt costs a few words, not a list of its million lines."""
    words: list[str] = []
    size = -1
    for piece in [text] if isinstance(text, str) else text:
        start = 0
        while True:
            found = _LINE_BREAK.search(piece, start)
            end = found.start() if found else len(piece)
            for match in _WORD.finditer(piece, start, end):
                word = CONTROL.sub("", match.group())
                if word:
                    words.append(word)
                    size += len(word) + 1
                    if size > limit:
                        return _cut(words, limit)
            if found is None:
                break  # the line goes on in the next piece
            if words:
                return _cut(words, limit)
            start = found.end()
    return _cut(words, limit)


def _cut(words: list[str], limit: int) -> str:
    return cut_at_word(" ".join(words), limit)


# --- reading ----------------------------------------------------------------------


TOO_LONG = b""  # yielded in place of a line longer than MAX_LINE (already skipped)


@dataclass(frozen=True, slots=True)
class Mark:
    """A place in a line file: the byte just past a whole line, and that line's number."""

    offset: int = 0
    line: int = 0


class Lines:
    """(1-based number, stripped line) for each non-blank line, never holding more than
    `limit` (default MAX_LINE) bytes of one; a UTF-8 BOM opening the file is skipped.

    A longer line is consumed in bounded chunks and yielded as `TOO_LONG`, so
    the caller decides between failing and skipping it. `partial` says whether
    the line just yielded ends the file without a newline (a file still being
    written ends so). An iterator class, not a generator: it keeps no reference
    to a line it returned, so a caller can let go of a huge one.

    `start` resumes a file at a saved position: `handle` is already at byte
    `start.offset`, and lines are numbered on from `start.line`. `offset` and
    `line` are then where the last whole line read ends (a partial last line is
    not counted: a later read starts with it).
    """

    STEP = 1 << 20

    def __init__(
        self,
        handle: IO[bytes],
        progress: Progress | None = None,
        limit: int | None = None,
        start: Mark | None = None,
    ) -> None:
        self._handle = handle
        self._progress = progress
        self._limit = MAX_LINE if limit is None else limit
        self._pending = 0
        self.number = start.line if start is not None else 0
        self.partial = False
        self.offset = start.offset if start is not None else 0
        self.line = self.number

    def __iter__(self) -> Lines:
        return self

    def __next__(self) -> tuple[int, bytes]:
        while True:
            raw = self._handle.readline(self._limit + 1)
            if not raw:
                self._advance(0)
                raise StopIteration
            self.number += 1
            self._advance(len(raw))
            if len(raw) > self._limit:  # (a BOM counts: the test must see what was read)
                while not raw.endswith(b"\n"):
                    raw = self._handle.readline(self.STEP)
                    self._advance(len(raw))
                    if not raw:
                        break
                self._ended(raw)
                return self.number, TOO_LONG
            self._ended(raw)
            if self.number == 1 and raw.startswith(BOM):
                raw = raw[len(BOM) :]
            raw = raw.strip()
            if raw:
                return self.number, raw

    def _ended(self, raw: bytes) -> None:
        self.partial = not raw.endswith(b"\n")
        if not self.partial:
            self.offset, self.line = self._handle.tell(), self.number

    def mark(self) -> Mark:
        """Where the last whole line read ends."""
        return Mark(self.offset, self.line)

    def _advance(self, size: int) -> None:
        if self._progress is None:
            return
        self._pending += size
        if self._pending >= self.STEP or (size == 0 and self._pending):
            self._progress.advance(self._pending)
            self._pending = 0


def lines(handle: IO[bytes], progress: Progress | None = None, limit: int | None = None) -> Lines:
    return Lines(handle, progress, limit)


def too_long(limit: int | None = None) -> str:
    size = (MAX_LINE if limit is None else limit) / 2**20
    return f"line is longer than {size:g} MiB; refusing to load it"


def unreadable(raw: bytes, exc: Exception, what: str = "line", line: int | None = None) -> str:
    """Why `raw` is no JSON, in plain words: a misplaced BOM, UTF-16, bad UTF-8 (which byte,
    where), or orjson's own message. `line`: the file line `raw` starts on, when it may
    span several (a ChatGPT conversation), so the bad byte's own line is named."""
    if raw.startswith(BOM):
        return (
            f"{what} starts with a UTF-8 byte order mark (BOM), which only the start "
            "of a file may have"
        )
    if raw.startswith(_UTF16_BOMS):
        return f"{what} is UTF-16 (it starts with a UTF-16 byte order mark), not UTF-8"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        start = raw.rfind(b"\n", 0, bad.start) + 1  # where the bad byte's line starts
        column = len(raw[start : bad.start].decode("utf-8")) + 1
        where = f"column {column}"
        if line is not None:
            where = f"line {line + raw.count(NEWLINE, 0, bad.start)}, {where}"
        return f"{what} is not valid UTF-8 (byte 0x{raw[bad.start]:02x} at {where})"
    return f"invalid JSON: {exc}"


def parse(raw: bytes, what: str = "line") -> Any:
    """`raw` as JSON; a ValueError says in plain words why it is not."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(unreadable(raw, exc, what)) from None


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


def is_jsonl(path: Path) -> bool:
    return path.suffix == ".jsonl"


def jsonl_files(
    root: Path, report: ImportReport, accept: Callable[[Path], bool] = is_jsonl
) -> list[Path]:
    """`root` if it is a file, else every file under it that `accept`s (by default the
    `.jsonl` ones; see `walk`); what the walk refused is noted in `report`."""
    if root.is_file():
        return [root]
    found = walk(root, accept)
    report.notes += [f"{path}: refused: {why}" for path, why in found.refused]
    return found.files


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def incomplete(number: int) -> str:
    return (
        f"line {number} is incomplete (the file ends in the middle of it, as a file still "
        "being written does): skipped; a later import reads it once it is whole"
    )


def json_lines(path: Path, reader: Lines, bad: BadLines, notes: Notes) -> Iterator[tuple[int, Any]]:
    """(line number, JSON value) for each line `reader` yields.

    A line that is too long or no JSON goes to `bad`; an over-long line is then
    yielded as `TOO_LONG` (formats that count lines may need to). An incomplete
    last line (no newline after it, and no JSON) is skipped with a note instead:
    it is how a transcript that is still being written ends.
    """
    for number, raw in reader:
        if raw == TOO_LONG:
            bad.bad(path, number, too_long())
            yield number, TOO_LONG
            continue
        try:
            value = parse(raw)
        except ValueError as exc:
            if reader.partial:
                notes.add(incomplete(number))
            else:
                bad.bad(path, number, str(exc))
            continue
        del raw  # a huge line: only its parsed value stays
        yield number, value


def records(
    path: Path, handle: IO[bytes], bad: BadLines, notes: Notes, progress: Progress | None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each JSONL line; see `json_lines` for the rest."""
    return objects(path, Lines(handle, progress), bad, notes)


def objects(
    path: Path, reader: Lines, bad: BadLines, notes: Notes
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each line `reader` yields (`records` over a given reader)."""
    for number, value in json_lines(path, reader, bad, notes):
        if value is TOO_LONG:
            continue
        if not isinstance(value, dict):
            bad.bad(path, number, "expected a JSON object")
            continue
        yield number, value
