"""The three trees are independent: an operation on one changes nothing in another."""

from __future__ import annotations

from typing import Any

import pytest

from sessionforest import Forest

TREE_TABLES = ("workspaces", "agents")
CONVERSATION_TABLES = ("sessions", "session_entries", "session_heads")


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


@pytest.fixture
def world(forest: Forest) -> dict[str, str]:
    lead, sub = forest.create_session(title="lead"), forest.create_session(title="sub")
    repo = forest.add_repository("/r")
    task = forest.add_task_worktree(repo, "/r-task", branch="task")
    wt = forest.add_worker_worktree(task, "/r-task-w", branch="task-w")
    orch = forest.add_orchestrator(lead, workspace_id=task)
    worker = forest.add_worker(orch, sub, {"may": ["edit"]}, workspace_id=wt)
    first = forest.append(lead, "user.message", user("start")).id
    done = forest.append(
        lead, "worker.result", {"worker_session_id": sub, "status": "succeeded", "summary": "ok"}
    ).id
    forest.append(sub, "user.message", user("work"))
    other = forest.append(lead, "user.message", user("other branch"), parent=first).id
    return {
        "lead": lead,
        "sub": sub,
        "repo": repo,
        "task": task,
        "wt": wt,
        "orch": orch,
        "worker": worker,
        "first": first,
        "done": done,
        "other": other,
    }


def test_moving_a_head_changes_no_workspace_or_agent(
    forest: Forest, world: dict[str, str], snapshot: Any
) -> None:
    before = snapshot(*TREE_TABLES)
    assert before["workspaces"] and before["agents"]
    for target in ("done", "first", "other", "done"):
        forest.move_head(world["lead"], world[target])
        assert snapshot(*TREE_TABLES) == before


def test_removing_agents_and_workspaces_changes_no_entry_or_head(
    forest: Forest, world: dict[str, str], snapshot: Any
) -> None:
    before = snapshot(*CONVERSATION_TABLES)
    workspaces = snapshot("workspaces")
    forest.remove_agent(world["worker"])
    forest.remove_agent(world["orch"])
    assert snapshot(*CONVERSATION_TABLES) == before
    # Removing agents leaves their workspaces alone too.
    assert snapshot("workspaces") == workspaces
    agents = snapshot("agents")
    for key in ("wt", "task", "repo"):
        forest.remove_workspace(world[key])
    assert snapshot(*CONVERSATION_TABLES) == before
    assert snapshot("agents") == agents


def test_removing_a_workspace_leaves_the_agents_that_name_it(
    forest: Forest, world: dict[str, str]
) -> None:
    forest.remove_workspace(world["wt"])
    worker = forest.agent(world["worker"])
    assert worker.live and worker.workspace_id == world["wt"]


def test_appending_and_branching_change_no_tree_record(
    forest: Forest, world: dict[str, str], snapshot: Any
) -> None:
    before = snapshot(*TREE_TABLES)
    forest.append(world["lead"], "user.message", user("more"))
    forest.append(world["sub"], "user.message", user("more"), parent=None)
    forest.checkpoint(world["lead"], "cp")
    assert snapshot(*TREE_TABLES) == before
