"""The agent tree: an orchestrator and the policy-authorized workers under it."""

from __future__ import annotations

from typing import Any

import pytest

from sessionforest import Forest, InvalidArgument, UnknownSession, UnknownTreeNode
from sessionforest.model import Agent

POLICY = {"may": ["read", "edit"], "paths": ["src/"], "network": False}


def team(forest: Forest) -> dict[str, str]:
    ids = {name: forest.create_session(title=name) for name in ("lead", "w1", "w2")}
    ids["orch"] = forest.add_orchestrator(ids["lead"])
    ids["worker1"] = forest.add_worker(ids["orch"], ids["w1"], POLICY)
    ids["worker2"] = forest.add_worker(ids["orch"], ids["w2"], {"may": ["read"]})
    return ids


def test_records_navigate_and_round_trip_the_policy(forest: Forest) -> None:
    ids = team(forest)
    orch, w1 = forest.agent(ids["orch"]), forest.agent(ids["worker1"])
    assert isinstance(orch, Agent)
    assert (orch.role, orch.parent_id, orch.session_id, orch.policy) == (
        "orchestrator",
        None,
        ids["lead"],
        None,
    )
    assert (w1.role, w1.parent_id, w1.session_id) == ("worker", ids["orch"], ids["w1"])
    assert w1.policy == POLICY
    assert [a.id for a in forest.agent_children(ids["orch"])] == [ids["worker1"], ids["worker2"]]
    assert forest.agent_children(ids["worker1"]) == []
    tree = forest.agent_tree(ids["orch"])
    assert [(i.depth, i.node.id) for i in tree] == [
        (0, ids["orch"]),
        (1, ids["worker1"]),
        (1, ids["worker2"]),
    ]
    assert forest.agent_tree() == tree
    assert forest.agent_for_session(ids["w1"]) == w1
    assert forest.agent_for_session(ids["lead"]) == orch
    assert forest.agent_for_session(forest.create_session()) is None


def test_the_stored_policy_cannot_be_changed_through_a_returned_record(forest: Forest) -> None:
    ids = team(forest)
    record = forest.agent(ids["worker1"])
    assert record.policy is not None
    record.policy["may"].append("deploy")
    record.to_json()["policy"]["network"] = True
    assert forest.agent(ids["worker1"]).policy == POLICY
    assert hash(record) == hash(forest.agent(ids["worker1"]))


def test_agents_may_name_a_workspace(forest: Forest) -> None:
    repo = forest.add_repository("/r")
    task = forest.add_task_worktree(repo, "/r-task")
    wt = forest.add_worker_worktree(task, "/r-task-w")
    lead, sub = forest.create_session(), forest.create_session()
    orch = forest.add_orchestrator(lead, workspace_id=task)
    worker = forest.add_worker(orch, sub, POLICY, workspace_id=wt)
    assert forest.agent(orch).workspace_id == task
    assert forest.agent(worker).workspace_id == wt
    with pytest.raises(UnknownTreeNode, match="unknown workspace record: nowhere"):
        forest.add_orchestrator(forest.create_session(), workspace_id="nowhere")
    gone = forest.add_repository("/gone")
    forest.remove_workspace(gone)
    with pytest.raises(InvalidArgument, match=f"workspace {gone} was removed"):
        forest.add_orchestrator(forest.create_session(), workspace_id=gone)


@pytest.mark.parametrize("policy", [{}, None, [], ["read"], {"x": object()}, {1: "one"}])
def test_a_worker_needs_a_non_empty_json_policy(forest: Forest, policy: Any) -> None:
    orch = forest.add_orchestrator(forest.create_session())
    with pytest.raises(InvalidArgument) as caught:
        forest.add_worker(orch, forest.create_session(), policy)
    assert caught.value.argument == "policy"
    assert forest.agent_children(orch) == []


def test_workers_hang_under_an_orchestrator_only(forest: Forest) -> None:
    ids = team(forest)
    with pytest.raises(InvalidArgument, match="workers hang under an orchestrator only"):
        forest.add_worker(ids["worker1"], forest.create_session(), POLICY)
    with pytest.raises(UnknownTreeNode) as caught:
        forest.add_worker("no-such-agent", forest.create_session(), POLICY)
    assert (caught.value.tree, caught.value.node_id) == ("agent", "no-such-agent")


def test_sessions_must_exist_and_have_one_live_agent(forest: Forest) -> None:
    ids = team(forest)
    with pytest.raises(UnknownSession):
        forest.add_orchestrator("no-such-session")
    with pytest.raises(UnknownSession):
        forest.add_worker(ids["orch"], "no-such-session", POLICY)
    with pytest.raises(InvalidArgument, match=f"already written by live agent {ids['worker1']}"):
        forest.add_worker(ids["orch"], ids["w1"], POLICY)
    with pytest.raises(InvalidArgument, match=f"already written by live agent {ids['orch']}"):
        forest.add_orchestrator(ids["lead"])
    # Once removed, the session may be given to a new agent.
    forest.remove_agent(ids["worker1"])
    again = forest.add_worker(ids["orch"], ids["w1"], POLICY)
    assert forest.agent_for_session(ids["w1"]) == forest.agent(again)


def test_remove_refuses_an_orchestrator_with_live_workers(forest: Forest) -> None:
    ids = team(forest)
    with pytest.raises(InvalidArgument, match="live children"):
        forest.remove_agent(ids["orch"])
    removed = forest.remove_agent(ids["worker1"])
    assert not removed.live and forest.agent(ids["worker1"]) == removed
    assert forest.remove_agent(ids["worker1"]) == removed
    assert forest.agent_for_session(ids["w1"]) is None
    assert [a.id for a in forest.agent_children(ids["orch"])] == [ids["worker2"]]
    assert [i.node.id for i in forest.agent_tree(ids["orch"], include_removed=True)] == [
        ids["orch"],
        ids["worker1"],
        ids["worker2"],
    ]
    forest.remove_agent(ids["worker2"])
    forest.remove_agent(ids["orch"])
    assert forest.agent_tree() == []
    with pytest.raises(InvalidArgument, match=f"agent {ids['orch']} was removed"):
        forest.add_worker(ids["orch"], forest.create_session(), POLICY)


@pytest.mark.parametrize("call", ["agent", "agent_children", "agent_tree", "remove_agent"])
def test_unknown_agent_ids_raise(forest: Forest, call: str) -> None:
    with pytest.raises(UnknownTreeNode, match="unknown agent record: forged"):
        getattr(forest, call)("forged")
