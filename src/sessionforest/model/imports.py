"""What importers consume and produce: a chat's session row, a chat's result, the report,
and a whole session exactly as stored (what native JSONL and a copy between stores carry).

Importers (io/) fill these; the facade returns them; the CLI and the server
print them. None of them knows a backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from ..errors import ImportRejected
from ..text import plural
from .sessions import SessionSource, SessionVisibility, SourceParts
from .value import Value


@dataclass(frozen=True, slots=True)
class ChatSpec:
    """The session row of an imported chat; `id` derives from (format, source id).

    `origin_cwd` is where the source says the chat ran: kept as data, never
    bound (no git runs there) unless the user binds the session. `cwd` binds
    at import and is for callers that vouch for the directory themselves.
    `git_commit`, `git_repository` and `origin_project` are the rest of what
    the source says about where it ran (data too); a later import that states
    one replaces it, one that does not keeps what is stored.
    """

    id: str
    title: str
    harness: str
    created_at: str
    source_format: str
    source_path: str
    source_id: str
    cwd: str | None = None
    visibility: str = SessionVisibility.TOP_LEVEL
    summary: str | None = None
    git_branch: str | None = None
    origin_cwd: str | None = None
    git_commit: str | None = None
    git_repository: str | None = None
    origin_project: str | None = None

    @property
    def provenance(self) -> tuple[str | None, str | None, str | None]:
        """(git_commit, git_repository, origin_project), the columns of PROVENANCE."""
        return self.git_commit, self.git_repository, self.origin_project


@dataclass(frozen=True, slots=True)
class ChatResult:
    session_id: str
    created: bool  # the session row is new
    added: int  # entries written by this import
    unchanged: int  # entries already stored with identical content
    entries: int  # entries of the chat after the import
    branches: int  # re-done turns (see BRANCHES; an import continuing from a saved
    # position counts those under its new entries only, as its cost is theirs)
    head: str | None


class SkippedLine(Value, frozen=True):
    """A line an import skipped (`skip_bad`), and why."""

    wire_name: ClassVar[str] = "SkippedLineJson"

    path: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        at = f":{self.line}" if self.line is not None else ""
        return f"{self.path}{at}: {self.reason}"


class ImportFailure(SkippedLine, frozen=True, kw_only=True):
    """A chat (or a whole file) that was not imported, and why; the store has nothing of it."""

    wire_name: ClassVar[str] = "ImportFailureJson"

    message: str  # the whole error, as the CLI prints it
    entry_id: str | None = None
    source_id: str | None = None

    @classmethod
    def of(cls, exc: Exception, path: Path) -> ImportFailure:
        if isinstance(exc, ImportRejected):
            source = getattr(exc, "source_id", None)
            return cls(
                exc.path, exc.line, exc.reason,
                message=str(exc), entry_id=exc.entry_id, source_id=source,
            )  # fmt: skip
        if isinstance(exc, OSError):
            why = f"cannot read the file: {exc.strerror or exc}"
            return cls(str(path), None, why, message=f"{path}: {why}; nothing of it was imported")
        return cls(str(path), None, str(exc), message=f"{path}: {exc}")

    def __str__(self) -> str:
        return self.message


class ChatReport(Value, SourceParts, frozen=True, kw_only=True):
    """One chat of an import: where it came from and what the import changed."""

    wire_name: ClassVar[str] = "ChatReportJson"

    session_id: str
    source: SessionSource
    created: bool
    added: int
    unchanged: int
    entries: int
    branches: int
    head: str | None
    hidden: bool = False


class ImportOutcome(Value, frozen=True):
    """What an import did, as its report says it (`ImportReport.outcome`): counts, the
    lines skipped, notes, the chats that failed and each chat imported."""

    wire_name: ClassVar[str] = "ImportReportJson"

    format: str
    chats: int
    entries: int
    unchanged: int
    branches: int
    skipped: list[SkippedLine]
    notes: list[str]
    failed: list[ImportFailure]
    sessions: list[ChatReport]


@dataclass(slots=True)
class ImportReport:
    """What an import did: chats written, entries added, branches, skipped lines, notes,
    and the chats that failed (`failed`; the import went on with the others).

    Filled as the import runs; `outcome()` (and `to_json`) is the finished value."""

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
                session_id=result.session_id,
                source=SessionSource(fmt, str(path), source_id),
                created=result.created,
                added=result.added,
                unchanged=result.unchanged,
                entries=result.entries,
                branches=result.branches,
                head=result.head,
                hidden=hidden,
            )
        )

    def summary(self) -> str:
        new = sum(1 for c in self.chats if c.created)
        workers = sum(1 for c in self.chats if c.hidden)
        return (
            f"{plural(len(self.chats), 'chat')} ({new} new, {workers} worker), "
            f"{plural(self.entries, 'entry', 'entries')} added ({self.unchanged} already there), "
            f"{plural(self.branches, 'branch', 'branches')}, "
            f"{plural(len(self.skipped), 'skipped line')}"
        )

    def outcome(self) -> ImportOutcome:
        return ImportOutcome(
            self.format, len(self.chats), self.entries, self.unchanged, self.branches,
            list(self.skipped), list(self.notes), list(self.failed), list(self.chats),
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return self.outcome().to_json()


class Transcript(Value, frozen=True):
    """A run's transcript file, written by the GASP exporter."""

    wire_name: ClassVar[str] = "TranscriptJson"

    run_id: str
    path: str  # DIR/transcripts/<run-id>.jsonl.gz
    relative: str  # transcripts/<run-id>.jsonl.gz, as a run event names it
    sha256: str
    entries: int
    bytes: int


@dataclass(frozen=True, slots=True)
class StoredSession:
    """One session row exactly as stored: what native export writes, restore writes back,
    and a copy between stores moves. Quarantined sessions are never read into one."""

    id: str
    title: str
    harness: str
    cwd: str | None
    created_at: str
    status: str
    visibility: str
    head: str | None
    head_moved_at: str | None  # when the head last moved; None: it never has (no head row)
    origin_cwd: str | None = None
    source_format: str | None = None
    source_path: str | None = None
    source_id: str | None = None
    summary: str | None = None
    git_branch: str | None = None
    git_commit: str | None = None
    git_repository: str | None = None
    origin_project: str | None = None


class StoredEntry(NamedTuple):
    """One entry row exactly as stored: payload and stamp as their stored JSON text, so a
    copy moves the very bytes it hashes. A tuple in the entries table's column order (the
    order `Entry.from_row` reads), so a backend binds it to its INSERT as it comes."""

    id: str
    session_id: str
    parent_id: str | None
    sequence: int
    semantic_schema_version: int
    kind: str
    payload: str
    context_visibility: str
    created_at: str
    stamp: str | None


@dataclass(frozen=True, slots=True)
class FollowReport:
    """One import of a followed file (Forest.import_followed): the file (its real
    path), its format, the import's report, whether the file no longer fit its
    stored position (shrunk or replaced: read again from its start) and the chat a
    person reads of it (None: it made none yet)."""

    path: str
    format: str
    report: ImportReport
    restarted: bool
    chat: str | None
