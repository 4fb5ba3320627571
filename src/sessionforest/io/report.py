"""What an import did, chat by chat: the report, its notes, and the chats that failed.

An import goes on past a chat that fails: `failures` records the error as a
`ImportFailure` (file, line, reason, ids) and drops what that chat had noted, so the
report lists every chat written, every line skipped and every chat refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ImportRejected, SessionExists, SessionQuarantined
from ..render import plural
from ..store.sqlite.bulk import ChatResult

NOTES_PER_FILE = 20  # per-file notes beyond this are counted, not listed


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


@dataclass(frozen=True, slots=True)
class ImportFailure:
    """A chat (or a whole file) that was not imported, and why; the store has nothing of it."""

    path: str
    line: int | None
    reason: str
    message: str  # the whole error, as the CLI prints it
    entry_id: str | None = None
    source_id: str | None = None

    @classmethod
    def of(cls, exc: Exception, path: Path) -> ImportFailure:
        if isinstance(exc, ImportRejected):
            source = getattr(exc, "source_id", None)
            return cls(exc.path, exc.line, exc.reason, str(exc), exc.entry_id, source)
        if isinstance(exc, OSError):
            why = f"cannot read the file: {exc.strerror or exc}"
            return cls(str(path), None, why, f"{path}: {why}; nothing of it was imported")
        return cls(str(path), None, str(exc), f"{path}: {exc}")

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "reason": self.reason,
            "message": self.message,
            "entry_id": self.entry_id,
            "source_id": self.source_id,
        }

    def __str__(self) -> str:
        return self.message


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
    """What an import did: chats written, entries added, branches, skipped lines, notes,
    and the chats that failed (`failed`; the import went on with the others)."""

    format: str
    chats: list[ChatReport] = field(default_factory=list)
    skipped: list[SkippedLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failed: list[ImportFailure] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing failed (skipped lines, which `skip_bad` asked for, are no failure)."""
        return not self.failed

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
            "failed": [f.to_json() for f in self.failed],
            "sessions": [c.to_json() for c in self.chats],
        }


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
