"""The facade's workspace and agent trees, and the one decorator every facade method uses.

`Forest` is a `TreeFacade`: these methods mint ids and read the clock, apply
the tree rules of rules/trees.py where they need no store, and reach the
records only through the backend's `TreeStore`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import InvalidArgument, UnknownEntry, UnknownSession
from .ids import Clock, iso, new_id, now_text, utc_now
from .model import Agent, AgentRole, TreeItem, Workspace, WorkspaceKind
from .rules import refs
from .rules import trees as tree_rules

if TYPE_CHECKING:
    from .store.base import Store, TreeStore

F = TypeVar("F", bound=Callable[..., Any])


def suggesting(method: F) -> F:
    """A plain miss (unknown session or entry) comes out with the ids one typo away,
    looked for after the failing call ended (never inside a write transaction)."""

    @functools.wraps(method)
    def wrapper(self: TreeFacade, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (UnknownSession, UnknownEntry) as exc:
            if exc.suggestions:
                raise
            raise refs.with_suggestions(self._store, exc) from None

    return wrapper  # type: ignore[return-value]


class TreeFacade:
    """The workspace-tree and agent-tree half of `Forest`."""

    _store: Store
    _trees: TreeStore
    _clock: Clock

    def _now(self) -> str:
        clock = self._clock
        return now_text() if clock is utc_now else iso(clock())

    # --- the workspace tree ------------------------------------------------------------

    def add_repository(self, path: str | os.PathLike[str]) -> str:
        return self._add_workspace(WorkspaceKind.REPOSITORY, None, "parent_id", path, None)

    def add_task_worktree(
        self, repo_id: str, path: str | os.PathLike[str], branch: str | None = None
    ) -> str:
        return self._add_workspace(WorkspaceKind.TASK_WORKTREE, repo_id, "repo_id", path, branch)

    def add_worker_worktree(
        self, task_id: str, path: str | os.PathLike[str], branch: str | None = None
    ) -> str:
        return self._add_workspace(WorkspaceKind.WORKER_WORKTREE, task_id, "task_id", path, branch)

    def _add_workspace(
        self,
        kind: WorkspaceKind,
        parent_id: str | None,
        argument: str,
        path: str | os.PathLike[str],
        branch: str | None,
    ) -> str:
        text = os.fspath(path)
        if not text:
            raise InvalidArgument("path", "a workspace needs a path")
        workspace_id = new_id()
        self._trees.add_workspace(
            workspace_id, str(kind), parent_id, argument, text, branch, self._now()
        )
        return workspace_id

    def workspace(self, workspace_id: str) -> Workspace:
        return self._trees.workspace(workspace_id)

    def workspace_children(
        self, workspace_id: str, *, include_removed: bool = False
    ) -> list[Workspace]:
        return self._trees.workspace_children(workspace_id, include_removed)

    def workspace_tree(
        self, root_id: str | None = None, *, include_removed: bool = False
    ) -> list[TreeItem[Workspace]]:
        """The tree below `root_id` (default: every repository), in pre-order."""
        rows = self._trees.workspace_subtree(root_id)
        return tree_rules.preorder(rows, root_id, include_removed)

    def remove_workspace(self, workspace_id: str) -> Workspace:
        """Mark a workspace removed (once); refused while it has live children.
        Only the record changes: no file, agent or session entry is touched."""
        return self._trees.remove_workspace(workspace_id, self._now())

    # --- the agent tree ------------------------------------------------------------------

    def add_orchestrator(self, session_id: str, workspace_id: str | None = None) -> str:
        return self._add_agent(AgentRole.ORCHESTRATOR, None, session_id, None, workspace_id)

    def add_worker(
        self,
        orchestrator_id: str,
        session_id: str,
        policy: dict[str, Any],
        workspace_id: str | None = None,
    ) -> str:
        """Register a worker under an orchestrator, writing to `session_id`, bound by `policy`."""
        text = tree_rules.policy_text(policy)
        return self._add_agent(AgentRole.WORKER, orchestrator_id, session_id, text, workspace_id)

    def _add_agent(
        self,
        role: AgentRole,
        parent_id: str | None,
        session_id: str,
        policy: str | None,
        workspace_id: str | None,
    ) -> str:
        agent_id = new_id()
        self._trees.add_agent(
            agent_id, str(role), parent_id, session_id, policy, workspace_id, self._now()
        )
        return agent_id

    def agent(self, agent_id: str) -> Agent:
        return self._trees.agent(agent_id)

    def agent_children(self, agent_id: str, *, include_removed: bool = False) -> list[Agent]:
        return self._trees.agent_children(agent_id, include_removed)

    def agent_tree(
        self, root_id: str | None = None, *, include_removed: bool = False
    ) -> list[TreeItem[Agent]]:
        """The tree below `root_id` (default: every orchestrator), in pre-order."""
        return tree_rules.preorder(self._trees.agent_subtree(root_id), root_id, include_removed)

    def agent_for_session(self, session_id: str) -> Agent | None:
        """The live agent writing to `session_id`, if any."""
        return self._trees.agent_for_session(session_id)

    def remove_agent(self, agent_id: str) -> Agent:
        """Mark an agent removed (once); an orchestrator is refused while it has live
        workers. Only the record changes: its session, entries and head stay."""
        return self._trees.remove_agent(agent_id, self._now())

    @suggesting
    def resolve_evidence(
        self, session_id: str, entry_id: str, for_agent: str | None = None
    ) -> dict[str, Any]:
        """The exact payload of worker.result `entry_id`, if it is evidence right now.

        Checked afresh on every call, never cached: the entry exists, belongs
        to `session_id`, is a worker.result and lies on the session's current
        active branch. With `for_agent`, that agent must be a live worker whose
        orchestrator writes to `session_id`.
        """
        return self._trees.resolve_evidence(session_id, entry_id, for_agent)
