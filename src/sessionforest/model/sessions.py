"""Sessions and what is said about them: status, listing info, integrity reports."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..wire import (
    BacklogJson,
    CheckReportJson,
    ProblemJson,
    RepairActionJson,
    RepairReportJson,
    SessionJson,
    SessionSourceJson,
    UnrepairedJson,
)


class SessionStatus(StrEnum):
    ACTIVE = "active"
    ENDED = "ended"
    ARCHIVED = "archived"


class SessionVisibility(StrEnum):
    TOP_LEVEL = "top-level"
    HIDDEN = "hidden"  # worker and internal sessions: navigable, never listed at top level


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    title: str
    harness: str
    cwd: str | None
    status: str
    visibility: str
    created_at: str
    updated_at: str
    head: str | None
    entry_count: int
    quarantine: str | None = None
    # Set for imported chats: the format, file and the source's own session id.
    source_format: str | None = None
    source_path: str | None = None
    source_id: str | None = None
    # Where an imported chat was recorded: data only, never a directory git
    # runs in until the session is bound to it (`Forest.bind`), which sets cwd.
    origin_cwd: str | None = None

    @property
    def source(self) -> SessionSourceJson | None:
        if self.source_format is None:
            return None
        return {"format": self.source_format, "path": self.source_path, "id": self.source_id}

    def to_json(self) -> SessionJson:
        return {
            "id": self.id,
            "title": self.title,
            "harness": self.harness,
            "cwd": self.cwd,
            "origin_cwd": self.origin_cwd,
            "status": self.status,
            "visibility": self.visibility,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "head": self.head,
            "entry_count": self.entry_count,
            "quarantine": self.quarantine,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class Problem:
    """One integrity problem found by `Forest.check()`."""

    session_id: str
    # orphan-parent | cross-session-parent | cycle | sequence-gap | unsupported-version
    # | invalid-head | missing-head | missing-session | path-mismatch
    # | parent-sequence-mismatch (SQLite: an entry's stored parent sequence)
    code: str
    entry_id: str | None
    detail: str

    def to_json(self) -> ProblemJson:
        return {
            "session_id": self.session_id,
            "code": self.code,
            "entry_id": self.entry_id,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class Backlog:
    """What waits behind a store's writes (Forest.backlog): entries not yet in the
    full-text index, and without the semantic leg's vectors (None: no leg)."""

    index_pending: int
    vectors_pending: int | None
    vector_chats_pending: int | None

    def to_json(self) -> BacklogJson:
        return {
            "index_pending": self.index_pending,
            "vectors_pending": self.vectors_pending,
            "vector_chats_pending": self.vector_chats_pending,
        }


@dataclass(frozen=True, slots=True)
class CheckReport:
    sessions_checked: int
    entries_checked: int
    problems: tuple[Problem, ...]
    quarantined: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> CheckReportJson:
        return {
            "ok": self.ok,
            "sessions_checked": self.sessions_checked,
            "entries_checked": self.entries_checked,
            "problems": [p.to_json() for p in self.problems],
            "quarantined": list(self.quarantined),
        }


@dataclass(frozen=True, slots=True)
class RepairAction:
    """One thing `Forest.repair()` changed: a head moved or a session row recreated."""

    code: str  # recreated-session-row | moved-head | set-head | cleared-head
    detail: str

    def to_json(self) -> RepairActionJson:
        return {"code": self.code, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Unrepaired:
    """A problem `Forest.repair()` left as it was, and why it cannot fix it."""

    problem: Problem
    why: str

    def to_json(self) -> UnrepairedJson:
        return {**self.problem.to_json(), "why": self.why}


@dataclass(frozen=True, slots=True)
class RepairReport:
    """What `Forest.repair(session_id)` did, what it could not fix, and the quarantine after."""

    session_id: str
    actions: tuple[RepairAction, ...]
    unrepaired: tuple[Unrepaired, ...]
    released: bool  # the session was fenced off (quarantined or rowless) and no longer is
    quarantine: str | None  # the reason it stays quarantined; None: it checks clean

    @property
    def ok(self) -> bool:
        return not self.unrepaired

    def to_json(self) -> RepairReportJson:
        return {
            "ok": self.ok,
            "session_id": self.session_id,
            "actions": [a.to_json() for a in self.actions],
            "unrepaired": [u.to_json() for u in self.unrepaired],
            "released": self.released,
            "quarantine": self.quarantine,
        }
