"""What an import did, chat by chat: the report, its notes, bad lines, failed chats.

An import goes on past a chat that fails: `failures` records the error as a
`ImportFailure` (file, line, reason, ids) and drops what that chat had noted, so the
report lists every chat written, every line skipped and every chat refused.
`ImportRun` is what every importer is handed: the stores, the report, the switches.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import (
    ForestError,
    ImportRejected,
    InvalidPayload,
    SessionExists,
    SessionQuarantined,
)
from ..model import ImportFailure, ImportReport, SkippedLine
from ..store.base import AgentLinks, BulkStore
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


# --- bad lines --------------------------------------------------------------------

# Malformed input surfaces as these while mapping a record; each becomes a bad line.
MALFORMED = (ValueError, TypeError, AttributeError, KeyError)
# ... and so does a record that maps to a payload its kind refuses.
UNMAPPABLE = (*MALFORMED, InvalidPayload)


def reason(exc: BaseException) -> str:
    if isinstance(exc, ValueError | InvalidPayload):
        return str(exc)
    return f"unexpected shape ({exc!r})"


class BadLines:
    """The `--skip-bad` switch: a bad line either fails its chat or is recorded and skipped."""

    def __init__(self, report: ImportReport, skip: bool) -> None:
        self._report = report
        self.skip = skip

    def bad(self, path: Path, line: int | None, reason: str, entry_id: str | None = None) -> None:
        if not self.skip:
            raise ImportRejected(str(path), line, reason, entry_id)
        self._report.skipped.append(SkippedLine(str(path), line, reason))

    def unmappable(self, path: Path, line: int | None, exc: BaseException, where: str = "") -> None:
        """A record that raised one of UNMAPPABLE while it was mapped: a bad line whose
        reason (led by `where`) says why."""
        self.bad(path, line, where + reason(exc))


# --- one import -------------------------------------------------------------------


class Progress(Protocol):
    """Where importers report bytes read (the CLI draws a rich progress bar)."""

    def begin(self, total: int) -> None: ...

    def advance(self, done: int) -> None: ...


@dataclass(frozen=True, slots=True)
class ImportRun:
    """One import: what it writes through, what it reports into, how it treats bad lines."""

    bulk: BulkStore
    links: AgentLinks  # worker chats are linked under their parent chat in the agent tree
    report: ImportReport
    bad: BadLines
    progress: Progress | None


def link_worker(
    links: AgentLinks,
    worker: str,
    parent_chat: str | None,
    policy: dict[str, Any],
    notes: Notes,
) -> None:
    """Link the imported worker chat `worker` under `parent_chat` in the agent tree (once:
    a re-import finds the link made). A parent not imported yet, or itself a worker, is
    noted and the worker left unlinked; a later import of it links it."""
    if parent_chat is None:
        notes.add("worker chat has no parent session id: left unlinked")
        return
    try:
        links.session(parent_chat)
    except ForestError:
        notes.add("the parent session of this worker is not imported: left unlinked for now")
        return
    if links.agent_for_session(worker) is not None:
        return  # linked by an earlier import
    orchestrator = links.agent_for_session(parent_chat)
    if orchestrator is None:
        orchestrator_id = links.add_orchestrator(parent_chat)
    elif orchestrator.role == "orchestrator":
        orchestrator_id = orchestrator.id
    else:
        notes.add(f"parent chat {parent_chat} is itself a worker: left unlinked")
        return
    links.add_worker(orchestrator_id, worker, policy)
