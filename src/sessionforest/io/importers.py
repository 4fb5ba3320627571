"""Which importer reads which format, and the run that ties them to one report.

`run` checks the path, tells the progress display how many bytes lie ahead,
hands the path to the format's importer and returns the `ImportReport`. A
chat that fails is in `report.failed`; only a path that is not there, or a
store that cannot be written, raises.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ImportRejected, InvalidArgument
from ..model import ChatReport, ImportReport
from . import chatgpt, claude_code, pi, yoagent
from .common import BadLines, Progress, file_size, walk
from .report import failures

if TYPE_CHECKING:
    from ..forest import Forest

Importer = Callable[["Forest", Path, ImportReport, BadLines, "Progress | None"], None]

IMPORTERS: dict[str, Importer] = {
    claude_code.FORMAT: claude_code.import_tree,
    chatgpt.FORMAT: chatgpt.import_file,
    pi.FORMAT: pi.import_tree,
    yoagent.FORMAT: yoagent.import_file,
}
FORMATS = (*IMPORTERS, "native")


def total_bytes(fmt: str, path: Path) -> int:
    """How many bytes an import of `path` reads (for the progress bar)."""
    if fmt == chatgpt.FORMAT:
        return chatgpt.total_bytes(path)
    if path.is_dir():
        return sum(file_size(p) for p in walk(path, lambda p: p.suffix == ".jsonl").files)
    return file_size(path)


def run(
    forest: Forest,
    fmt: str,
    path: Path,
    *,
    skip_bad: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    if fmt not in FORMATS:
        raise InvalidArgument("format", f"expected one of {', '.join(FORMATS)}; got {fmt!r}")
    path = path.expanduser()
    if not path.exists():
        raise ImportRejected(str(path), None, "no such file or directory")
    if fmt not in (claude_code.FORMAT, pi.FORMAT) and not path.is_file():
        raise ImportRejected(str(path), None, f"a {fmt} import reads one file, not a directory")
    report = ImportReport(fmt)
    if progress is not None:
        progress.begin(total_bytes(fmt, path))
    if fmt == "native":
        with failures(report, path):
            info = forest.import_native(path)
            report.chats.append(
                ChatReport(
                    info.id, "native", str(path), info.id, True, info.entry_count, 0,
                    info.entry_count, 0, info.head,
                )
            )  # fmt: skip
        if progress is not None:
            progress.advance(file_size(path))
        return report
    IMPORTERS[fmt](forest, path, report, BadLines(report, skip_bad), progress)
    return report
