"""Which importer reads which format, and the run that ties them to one report.

`run` checks the path, lists the files to read (walking a directory for the
formats that take one), tells the progress display how many bytes lie ahead
and hands each file to its format's reader inside `source_file`: a chat that
fails is in `report.failed`; only a path that is not there, or a store that
cannot be written, raises.

`import_source` is the live mirror's entry point: one source (a file, or
OpenCode's database) from a saved `SourcePosition`, returning the new one. A
format whose reader can `follow` (line formats) reads only what was appended;
any other is imported again whole when its size or mtime changed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ImportRejected, InvalidArgument
from ..model import ImportReport
from ..store.base import AgentLinks, BulkStore
from .common import Mark, file_size, is_jsonl, jsonl_files
from .position import Cursor, SourcePosition, fits, head_of
from .report import BadLines, ImportRun, Notes, Progress, source_file

# Reads one file from a cursor (None: from its start) and returns where it stopped.
Follow = Callable[[ImportRun, Path, Notes, Cursor | None], Cursor]


@dataclass(frozen=True, slots=True)
class Reader:
    """How one format is read: file by file, each in its own `source_file`."""

    read: Callable[[ImportRun, Path, Notes], None]
    walks: bool = False  # a directory is walked for its .jsonl files
    folder: bool = False  # a directory is one source (OpenCode's data folder or storage/)
    order: Callable[[list[Path]], list[Path]] = list  # the order the files are read in
    size: Callable[[Path], int] = file_size  # bytes read from one file (the progress bar)
    follow: Follow | None = None  # reads what was appended since a saved position
    accept: Callable[[Path], bool] = is_jsonl  # the files a walk of a directory reads


# Each format's reader, made (and its module imported) the first time a file of that
# format is read: the Claude Code hook, one process per turn, loads no other importer.


def _claude_code() -> Reader:
    from . import claude_code as m

    return Reader(m.import_file, walks=True, order=m.order, follow=m.follow)


def _codex() -> Reader:
    from . import codex as m

    return Reader(m.import_file, walks=True, order=m.order, follow=m.follow, accept=m.accept)


def _gemini() -> Reader:
    from . import gemini as m

    return Reader(m.import_file, walks=True, order=m.order, follow=m.follow, accept=m.accept)


def _copilot() -> Reader:
    from . import copilot as m

    return Reader(m.import_file, walks=True, follow=m.follow, accept=m.accept)


def _opencode() -> Reader:
    from . import opencode as m

    return Reader(m.import_file, folder=True, follow=m.follow)


def _aider() -> Reader:
    from . import aider as m

    return Reader(m.import_file, walks=True, accept=m.accept)


def _cline() -> Reader:
    from . import cline as m

    return Reader(m.import_file, walks=True, accept=m.accept)


def _chatgpt() -> Reader:
    from . import chatgpt as m

    return Reader(m.import_file, size=m.total_bytes)


def _pi() -> Reader:
    from . import pi as m

    return Reader(m.import_file, walks=True)


def _yoagent() -> Reader:
    from . import yoagent as m

    return Reader(m.import_file)


def _native() -> Reader:
    from . import native as m

    return Reader(m.read_file)


# By format name: each module's FORMAT (native's SOURCE_FORMAT); tests/io checks they agree.
READERS: dict[str, Callable[[], Reader]] = {
    "claude-code": _claude_code,
    "codex": _codex,
    "gemini": _gemini,
    "copilot": _copilot,
    "opencode": _opencode,
    "aider": _aider,
    "cline": _cline,
    "chatgpt": _chatgpt,
    "pi": _pi,
    "yoagent": _yoagent,
    "native": _native,
}
FORMATS = tuple(READERS)


@functools.cache
def reader_for(fmt: str) -> Reader:
    make = READERS.get(fmt)
    if make is None:
        raise InvalidArgument("format", f"expected one of {', '.join(FORMATS)}; got {fmt!r}")
    return make()


def run(
    bulk: BulkStore,
    links: AgentLinks,
    fmt: str,
    path: Path,
    *,
    skip_bad: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    """Import every chat of `path` in format `fmt` through `bulk` (see Forest.import_chats)."""
    reader = reader_for(fmt)
    path = path.expanduser()
    if not path.exists():
        raise ImportRejected(str(path), None, "no such file or directory")
    if not reader.walks and not reader.folder and not path.is_file():
        raise ImportRejected(str(path), None, f"a {fmt} import reads one file, not a directory")
    report = ImportReport(fmt)
    files = reader.order(jsonl_files(path, report, reader.accept)) if reader.walks else [path]
    if progress is not None:
        progress.begin(sum(map(reader.size, files)))
    run = ImportRun(bulk, links, report, BadLines(report, skip_bad), progress)
    for file in files:
        with source_file(report, file) as notes:
            reader.read(run, file, notes)
    return report


def import_source(
    bulk: BulkStore,
    links: AgentLinks,
    fmt: str,
    path: Path,
    position: SourcePosition | None = None,
    *,
    skip_bad: bool = False,
    progress: Progress | None = None,
) -> tuple[ImportReport, SourcePosition]:
    """Import what `path` holds past `position` (None, or one that does not fit: all of
    it); returns the report and the position to pass next time. A chat that fails leaves
    the position where it was, so the next call tries the same lines again."""
    reader = reader_for(fmt)
    path = path.expanduser()
    try:
        stat = path.stat()
    except OSError as exc:
        raise ImportRejected(str(path), None, exc.strerror or "cannot read it") from None
    whole = path.is_dir() and not reader.folder  # a tree of files: read whole each time
    if whole and not reader.walks:
        raise ImportRejected(str(path), None, f"a {fmt} source is one file, not a directory")
    report = ImportReport(fmt)
    start = position if fits(position, fmt, path, stat.st_size) else None
    unchanged = (stat.st_size, stat.st_mtime_ns)
    # (A database's size and mtime stay put while its writes sit in the WAL: OpenCode's
    # reader compares each session's update time instead.)
    quick = not whole and not reader.folder
    if start is not None and quick and (start.size, start.mtime_ns) == unchanged:
        return report, start  # nothing changed since
    run = ImportRun(bulk, links, report, BadLines(report, skip_bad), progress)
    if progress is not None:
        progress.begin(max(0, stat.st_size - (start.offset if start else 0)))
    failed = len(report.failed)
    cursor: Cursor | None = None
    if whole:
        files = reader.order(jsonl_files(path, report, reader.accept))
    with source_file(report, path) as notes:
        if whole:
            for file in files:
                with source_file(report, file) as each:
                    reader.read(run, file, each)
            cursor = Cursor(Mark(stat.st_size), {})
        elif reader.follow is not None:
            cursor = reader.follow(run, path, notes, start.cursor if start else None)
        else:
            reader.read(run, path, notes)
            cursor = Cursor(Mark(stat.st_size), {})
    if cursor is None or len(report.failed) > failed:
        return report, position or SourcePosition(fmt, str(path))
    head = head_of(path) if path.is_file() and not reader.folder else ""
    return report, SourcePosition(
        fmt,
        str(path),
        cursor.mark.offset,
        cursor.mark.line,
        stat.st_size,
        stat.st_mtime_ns,
        head,
        cursor.state,
    )
