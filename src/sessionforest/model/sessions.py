"""Sessions and what is said about them: status, listing info, integrity reports."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, ClassVar, Self

from .value import Value, derive


class SessionStatus(StrEnum):
    ACTIVE = "active"
    ENDED = "ended"
    ARCHIVED = "archived"


class SessionVisibility(StrEnum):
    TOP_LEVEL = "top-level"
    HIDDEN = "hidden"  # worker and internal sessions: navigable, never listed at top level


class SessionSource(Value, frozen=True):
    """Where an imported chat came from: its format, file and the source's own session id."""

    wire_name: ClassVar[str] = "SessionSourceJson"

    format: str
    path: str | None
    id: str | None


class SourceParts:
    """`source_format`, `source_path`, `source_id` of a value with a `source`, as
    the sessions table keeps them (None when it has no source)."""

    __slots__ = ()
    source: SessionSource | None

    @property
    def source_format(self) -> str | None:
        return self.source.format if self.source is not None else None

    @property
    def source_path(self) -> str | None:
        return self.source.path if self.source is not None else None

    @property
    def source_id(self) -> str | None:
        return self.source.id if self.source is not None else None


class SessionInfo(Value, SourceParts, frozen=True, kw_only=True):
    """A session as listed: title, harness, status, head, entry count, source."""

    wire_name: ClassVar[str] = "SessionJson"

    id: str
    title: str
    harness: str
    cwd: str | None
    # Where an imported chat was recorded: data only, never a directory git
    # runs in until the session is bound to it (`Forest.bind`), which sets cwd.
    origin_cwd: str | None = None
    # The rest of what an imported chat's source says about where it ran, data as
    # origin_cwd is: the git branch, commit and remote, and the harness's project.
    git_branch: str | None = None
    git_commit: str | None = None
    git_repository: str | None = None
    origin_project: str | None = None
    status: str
    visibility: str
    created_at: str
    updated_at: str
    head: str | None
    entry_count: int
    # What a chat list counts as messages: what was said and the replies on every
    # branch, not tool results or hidden entries (store/sql/rows.py IS_MESSAGE).
    messages: int
    quarantine: str | None = None
    # Set for imported chats.
    source: SessionSource | None = None

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any]) -> Self:
        """A row of `source_format`, `source_path`, `source_id` and the other fields."""
        row = dict(columns)
        fmt, path, source_id = (
            row.pop("source_format"),
            row.pop("source_path"),
            row.pop("source_id"),
        )
        source = None if fmt is None else SessionSource(format=fmt, path=path, id=source_id)
        return cls(**row, source=source)


class Problem(Value, frozen=True):
    """One integrity problem found by `Forest.check()`."""

    wire_name: ClassVar[str] = "ProblemJson"

    session_id: str
    # orphan-parent | cross-session-parent | cycle | sequence-gap | unsupported-version
    # | invalid-head | missing-head | missing-session | path-mismatch
    # | parent-sequence-mismatch (SQLite: an entry's stored parent sequence)
    # | bad-time (a stored created_at that is not a time: reported, never quarantined)
    code: str
    entry_id: str | None
    detail: str


class Backlog(Value, frozen=True):
    """What waits behind a store's writes (Forest.backlog): entries not yet in the
    full-text index, and without the semantic leg's vectors (None: no leg)."""

    wire_name: ClassVar[str] = "BacklogJson"

    index_pending: int
    vectors_pending: int | None
    vector_chats_pending: int | None


class CheckReport(Value, frozen=True, kw_only=True):
    """What `Forest.check()` found: the problems, and the sessions it quarantined."""

    wire_name: ClassVar[str] = "CheckReportJson"

    ok: bool = False  # derived: no problems
    sessions_checked: int
    entries_checked: int
    problems: tuple[Problem, ...]
    quarantined: tuple[str, ...]

    def __post_init__(self) -> None:
        derive(self, "ok", not self.problems)


class RepairAction(Value, frozen=True):
    """One thing `Forest.repair()` changed: a head moved or a session row recreated."""

    wire_name: ClassVar[str] = "RepairActionJson"

    code: str  # recreated-session-row | moved-head | set-head | cleared-head
    detail: str


class Unrepaired(Problem, frozen=True):
    """A problem `Forest.repair()` left as it was, and why it cannot fix it."""

    wire_name: ClassVar[str] = "UnrepairedJson"

    why: str


class RepairReport(Value, frozen=True, kw_only=True):
    """What `Forest.repair(session_id)` did, what it could not fix, and the quarantine after."""

    wire_name: ClassVar[str] = "RepairReportJson"

    ok: bool = False  # derived: nothing left unrepaired
    session_id: str
    actions: tuple[RepairAction, ...]
    unrepaired: tuple[Unrepaired, ...]
    released: bool  # the session was fenced off (quarantined or rowless) and no longer is
    quarantine: str | None  # the reason it stays quarantined; None: it checks clean

    def __post_init__(self) -> None:
        derive(self, "ok", not self.unrepaired)
