"""Which importer reads which format, and the run that ties them to one report.

`run` checks the path, lists the files to read (walking a directory for the
formats that take one), tells the progress display how many bytes lie ahead
and hands each file to its format's reader inside `source_file`: a chat that
fails is in `report.failed`; only a path that is not there, or a store that
cannot be written, raises.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import ImportRejected, InvalidArgument
from ..model import ImportReport
from ..store.base import AgentLinks, BulkStore
from . import chatgpt, claude_code, native, pi, yoagent
from .common import file_size, jsonl_files
from .report import BadLines, ImportRun, Notes, Progress, source_file


@dataclass(frozen=True, slots=True)
class Reader:
    """How one format is read: file by file, each in its own `source_file`."""

    read: Callable[[ImportRun, Path, Notes], None]
    walks: bool = False  # a directory is walked for its .jsonl files
    order: Callable[[list[Path]], list[Path]] = list  # the order the files are read in
    size: Callable[[Path], int] = file_size  # bytes read from one file (the progress bar)


READERS: dict[str, Reader] = {
    claude_code.FORMAT: Reader(claude_code.import_file, walks=True, order=claude_code.order),
    chatgpt.FORMAT: Reader(chatgpt.import_file, size=chatgpt.total_bytes),
    pi.FORMAT: Reader(pi.import_file, walks=True),
    yoagent.FORMAT: Reader(yoagent.import_file),
    native.SOURCE_FORMAT: Reader(native.read_file),
}
FORMATS = tuple(READERS)


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
    reader = READERS.get(fmt)
    if reader is None:
        raise InvalidArgument("format", f"expected one of {', '.join(FORMATS)}; got {fmt!r}")
    path = path.expanduser()
    if not path.exists():
        raise ImportRejected(str(path), None, "no such file or directory")
    if not reader.walks and not path.is_file():
        raise ImportRejected(str(path), None, f"a {fmt} import reads one file, not a directory")
    report = ImportReport(fmt)
    files = reader.order(jsonl_files(path, report)) if reader.walks else [path]
    if progress is not None:
        progress.begin(sum(map(reader.size, files)))
    run = ImportRun(bulk, links, report, BadLines(report, skip_bad), progress)
    for file in files:
        with source_file(report, file) as notes:
            reader.read(run, file, notes)
    return report
