"""Value types of the forest: entries, sessions, visibility and schema versions.

Entries are frozen values. `payload` is the semantic content exactly as it was
validated (see `kinds.py` for the per-kind contracts); the controller-owned
`stamp` travels beside it and never inside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

# New writes use v2; v1 (the shape written before the forest, e.g. by the
# agent_events migration) is upgraded on read; anything else fails closed.
CURRENT_SCHEMA_VERSION = 2
SUPPORTED_SCHEMA_VERSIONS = frozenset({1, 2})


class Visibility(StrEnum):
    """Whether the projector may put an entry into an agent's restored context."""

    CONTEXT = "context"  # eligible for context
    HIDDEN = "hidden"  # inspect-only: shown (collapsed) in tools, never sent to a model


class SessionStatus(StrEnum):
    ACTIVE = "active"
    ENDED = "ended"
    ARCHIVED = "archived"


class SessionVisibility(StrEnum):
    TOP_LEVEL = "top-level"
    HIDDEN = "hidden"  # worker and internal sessions: navigable, never listed at top level


@dataclass(frozen=True, slots=True)
class Entry:
    """One immutable node of a session's conversation tree."""

    id: str
    session_id: str
    parent_id: str | None
    sequence: int
    kind: str
    payload: dict[str, Any]
    context_visibility: str
    semantic_schema_version: int
    created_at: str
    stamp: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The stable JSON shape used by the CLI and the server."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "parent_id": self.parent_id,
            "sequence": self.sequence,
            "kind": self.kind,
            "payload": self.payload,
            "context_visibility": self.context_visibility,
            "semantic_schema_version": self.semantic_schema_version,
            "created_at": self.created_at,
            "stamp": self.stamp,
        }


@dataclass(frozen=True, slots=True)
class Node:
    """A skeleton node: the tree shape without payloads, cheap to load in bulk."""

    id: str
    parent_id: str | None
    sequence: int
    kind: str
    context_visibility: str


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

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "harness": self.harness,
            "cwd": self.cwd,
            "status": self.status,
            "visibility": self.visibility,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "head": self.head,
            "entry_count": self.entry_count,
            "quarantine": self.quarantine,
        }


@dataclass(frozen=True, slots=True)
class Problem:
    """One integrity problem found by `Forest.check()`."""

    session_id: str
    code: str  # orphan-parent | cross-session-parent | cycle | invalid-head | ...
    entry_id: str | None
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "code": self.code,
            "entry_id": self.entry_id,
            "detail": self.detail,
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

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "sessions_checked": self.sessions_checked,
            "entries_checked": self.entries_checked,
            "problems": [p.to_json() for p in self.problems],
            "quarantined": list(self.quarantined),
        }
