"""What an import did, chat by chat: the report, its notes, and the chats that failed.

An import goes on past a chat that fails: `failures` records the error as a
`ImportFailure` (file, line, reason, ids) and drops what that chat had noted, so the
report lists every chat written, every line skipped and every chat refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import ImportRejected, SessionExists, SessionQuarantined
from ..model import ImportFailure, ImportReport
from ..text import plural

NOTES_PER_FILE = 20  # per-file notes beyond this are counted, not listed


class Notes:
    """Per-file notes, capped so a file of a million odd lines cannot flood the report.

    Kept here until `close` so a chat that fails can take back what it noted.
    """

    def __init__(self, report: ImportReport, path: Path) -> None:
        self._report = report
        self._path = path
        self._kept: list[str] = []
        self._more = 0

    def add(self, text: str) -> None:
        if len(self._kept) < NOTES_PER_FILE:
            self._kept.append(text)
        else:
            self._more += 1

    def mark(self) -> tuple[int, int]:
        return len(self._kept), self._more

    def rollback(self, mark: tuple[int, int]) -> None:
        del self._kept[mark[0] :]
        self._more = mark[1]

    def close(self) -> None:
        self._report.notes += [f"{self._path}: {text}" for text in self._kept]
        if self._more:
            self._report.notes.append(
                f"{self._path}: ... and {plural(self._more, 'more note')} like these"
            )
        self._kept, self._more = [], 0


# A chat's own problem: recorded as an ImportFailure, and the import goes on. Anything
# else (a busy, full or unreadable store, a bug) stops the import.
CHAT_ERRORS = (ImportRejected, SessionExists, SessionQuarantined, OSError)


@contextmanager
def failures(report: ImportReport, path: Path, notes: Notes | None = None) -> Iterator[None]:
    """Record a chat's failure in `report` instead of raising it.

    What the failed chat skipped or noted is taken back when none of its
    chats committed: those lines describe an import that did not happen.
    """
    chats, skipped = len(report.chats), len(report.skipped)
    mark = notes.mark() if notes is not None else None
    try:
        yield
    except CHAT_ERRORS as exc:
        if len(report.chats) == chats:
            del report.skipped[skipped:]
            if notes is not None and mark is not None:
                notes.rollback(mark)
        report.failed.append(ImportFailure.of(exc, path))


@contextmanager
def source_file(report: ImportReport, path: Path) -> Iterator[Notes]:
    """One source file of an import: its notes, and its failure recorded, not raised."""
    notes = Notes(report, path)
    try:
        with failures(report, path, notes):
            yield notes
    finally:
        notes.close()
