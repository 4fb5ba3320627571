"""The workspace and agent trees' records, kept apart from the conversation tree.

Workspaces: repository -> task worktree -> optional worker worktree. Agents:
orchestrator -> policy-authorized workers. `PARENT_KIND` is the workspace rule.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar, cast

from ..wire import AgentItemJson, AgentJson, WorkspaceItemJson, WorkspaceJson


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


@dataclass(frozen=True, slots=True)
class Workspace:
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

    def to_json(self) -> WorkspaceJson:
        return cast(WorkspaceJson, asdict(self))


@dataclass(frozen=True, slots=True)
class Agent:
    id: str
    parent_id: str | None
    role: str
    session_id: str
    workspace_id: str | None
    # What a worker is authorized to do; None for an orchestrator. Kept out of
    # the hash (a dict cannot be hashed) but not out of equality.
    policy: dict[str, Any] | None = field(hash=False)
    created_at: str
    removed_at: str | None

    @property
    def live(self) -> bool:
        return self.removed_at is None

    def to_json(self) -> AgentJson:
        return cast(AgentJson, asdict(self))  # a deep copy: callers cannot reach the stored policy


R = TypeVar("R", Workspace, Agent)


@dataclass(frozen=True, slots=True)
class TreeItem(Generic[R]):
    """One record of a tree listing, in pre-order; `depth` 0 is the listing's root."""

    depth: int
    node: R

    def to_json(self) -> WorkspaceItemJson | AgentItemJson:
        return {"depth": self.depth, **self.node.to_json()}
