"""The workspace and agent trees' records, kept apart from the conversation tree.

Workspaces: repository -> task worktree -> optional worker worktree. Agents:
orchestrator -> policy-authorized workers. `PARENT_KIND` is the workspace rule.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar

import msgspec

from .value import Value


class WorkspaceKind(StrEnum):
    REPOSITORY = "repository"
    TASK_WORKTREE = "task_worktree"
    WORKER_WORKTREE = "worker_worktree"


class AgentRole(StrEnum):
    ORCHESTRATOR = "orchestrator"
    WORKER = "worker"


# kind -> the kind its parent must be; None: a root.
PARENT_KIND: dict[WorkspaceKind, WorkspaceKind | None] = {
    WorkspaceKind.REPOSITORY: None,
    WorkspaceKind.TASK_WORKTREE: WorkspaceKind.REPOSITORY,
    WorkspaceKind.WORKER_WORKTREE: WorkspaceKind.TASK_WORKTREE,
}


class Workspace(Value, frozen=True):
    """A workspace record: a repository, a task worktree or a worker worktree."""

    wire_name: ClassVar[str] = "WorkspaceJson"

    id: str
    parent_id: str | None
    kind: str
    path: str
    branch: str | None
    created_at: str
    removed_at: str | None

    @property
    def live(self) -> bool:
        return self.removed_at is None


class Agent(Value, frozen=True):
    """An agent record: an orchestrator, or a worker with its policy."""

    wire_name: ClassVar[str] = "AgentJson"

    id: str
    parent_id: str | None
    role: str
    session_id: str
    workspace_id: str | None
    # What a worker is authorized to do; None for an orchestrator. Kept out of
    # the hash (a dict cannot be hashed) but not out of equality; to_json copies it,
    # so callers cannot reach the stored policy.
    policy: dict[str, Any] | None
    created_at: str
    removed_at: str | None

    def __hash__(self) -> int:
        return hash((self.id, self.session_id, self.created_at, self.removed_at))

    @property
    def live(self) -> bool:
        return self.removed_at is None


R = TypeVar("R", Workspace, Agent)


class TreeItem(msgspec.Struct, Generic[R], frozen=True):
    """One record of a tree listing, in pre-order; `depth` 0 is the listing's root."""

    depth: int
    node: R

    def to_json(self) -> dict[str, Any]:
        """The record's JSON with its depth first."""
        return {"depth": self.depth, **self.node.to_json()}
