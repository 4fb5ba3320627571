"""The workspace tree: repository -> task worktree -> worker worktree, on a real store."""

from __future__ import annotations

import sys

import pytest

from conformance.backends import Harness, Refused
from sessionforest import Forest, InvalidArgument, UnknownTreeNode
from sessionforest.model import Workspace


def build(forest: Forest) -> dict[str, str]:
    repo = forest.add_repository("/src/app")
    task = forest.add_task_worktree(repo, "/wt/app-task", branch="task/login")
    worker = forest.add_worker_worktree(task, "/wt/app-task-w1", branch="task/login-w1")
    return {"repo": repo, "task": task, "worker": worker}


def test_records_carry_kind_parent_path_and_branch(forest: Forest) -> None:
    ids = build(forest)
    repo, task, worker = (forest.workspace(ids[k]) for k in ("repo", "task", "worker"))
    assert (repo.kind, repo.parent_id, repo.path, repo.branch) == (
        "repository",
        None,
        "/src/app",
        None,
    )
    assert (task.kind, task.parent_id, task.branch) == ("task_worktree", repo.id, "task/login")
    assert (worker.kind, worker.parent_id, worker.path) == (
        "worker_worktree",
        task.id,
        "/wt/app-task-w1",
    )
    assert repo.live and repo.removed_at is None
    assert worker.to_json() == {
        "id": worker.id,
        "parent_id": task.id,
        "kind": "worker_worktree",
        "path": "/wt/app-task-w1",
        "branch": "task/login-w1",
        "created_at": worker.created_at,
        "removed_at": None,
    }


def test_children_and_tree_navigate_in_creation_order(forest: Forest) -> None:
    repo = forest.add_repository("/r")
    t1 = forest.add_task_worktree(repo, "/r-t1")
    t2 = forest.add_task_worktree(repo, "/r-t2")
    w1 = forest.add_worker_worktree(t1, "/r-t1-w1")
    w2 = forest.add_worker_worktree(t1, "/r-t1-w2")
    other = forest.add_repository("/other")

    assert [w.id for w in forest.workspace_children(repo)] == [t1, t2]
    assert [w.id for w in forest.workspace_children(t1)] == [w1, w2]
    assert forest.workspace_children(w1) == []
    tree = forest.workspace_tree(repo)
    assert [(i.depth, i.node.id) for i in tree] == [(0, repo), (1, t1), (2, w1), (2, w2), (1, t2)]
    assert tree[0].to_json() == {"depth": 0, **forest.workspace(repo).to_json()}
    # No root: every repository, each followed by its subtree.
    everything = forest.workspace_tree()
    assert [(i.depth, i.node.id) for i in everything] == [
        (0, repo),
        *[(i.depth, i.node.id) for i in tree[1:]],
        (0, other),
    ]
    assert [(i.depth, i.node.id) for i in forest.workspace_tree(t1)] == [(0, t1), (1, w1), (1, w2)]


def test_a_wide_tree_lists_every_record_once_parents_first(forest: Forest) -> None:
    expected: list[tuple[int, str]] = []
    for r in range(4):
        repo = forest.add_repository(f"/r{r}")
        expected.append((0, repo))
        for t in range(5):
            task = forest.add_task_worktree(repo, f"/r{r}-t{t}")
            expected.append((1, task))
            for w in range(3):
                expected.append((2, forest.add_worker_worktree(task, f"/r{r}-t{t}-w{w}")))
    tree = forest.workspace_tree()
    assert [(i.depth, i.node.id) for i in tree] == expected
    position = {item.node.id: n for n, item in enumerate(tree)}
    for item in tree:
        if item.node.parent_id is not None:
            assert position[item.node.parent_id] < position[item.node.id]


def test_a_tree_deeper_than_the_recursion_limit_is_built_iteratively(
    forest: Forest, harness: Harness
) -> None:
    # The API caps the depth at three, so the chain is written directly: this
    # checks that neither the query nor the listing recurses per level.
    depth = sys.getrecursionlimit() * 3
    repo = forest.add_repository("/deep")
    ids = [repo] + [f"deep-{n:05d}" for n in range(1, depth)]
    harness.insert_rows(
        forest,
        "workspaces",
        (
            {
                "id": ids[n],
                "parent_id": ids[n - 1],
                "kind": "task_worktree",
                "path": f"/deep/{n}",
                "created_at": "2025-01-01T00:00:00.000Z",
            }
            for n in range(1, depth)
        ),
    )
    tree = forest.workspace_tree(repo)
    assert [(i.depth, i.node.id) for i in tree] == list(enumerate(ids))
    assert [i.node.id for i in forest.workspace_tree(ids[depth // 2])] == ids[depth // 2 :]


@pytest.mark.parametrize(
    ("adder", "parent", "message"),
    [
        ("add_task_worktree", "task", "a task_worktree hangs under a repository"),
        ("add_task_worktree", "worker", "a task_worktree hangs under a repository"),
        ("add_worker_worktree", "repo", "a worker_worktree hangs under a task_worktree"),
        ("add_worker_worktree", "worker", "a worker_worktree hangs under a task_worktree"),
    ],
)
def test_parent_rules_are_enforced(forest: Forest, adder: str, parent: str, message: str) -> None:
    ids = build(forest)
    before = forest.workspace_tree()
    with pytest.raises(InvalidArgument) as caught:
        getattr(forest, adder)(ids[parent], "/elsewhere")
    assert message in str(caught.value)
    assert ids[parent] in str(caught.value)
    assert caught.value.argument in ("repo_id", "task_id")
    assert forest.workspace_tree() == before


def test_unknown_and_removed_parents_are_refused(forest: Forest) -> None:
    with pytest.raises(UnknownTreeNode) as caught:
        forest.add_task_worktree("no-such-repo", "/x")
    assert (caught.value.tree, caught.value.node_id) == ("workspace", "no-such-repo")
    repo = forest.add_repository("/gone")
    forest.remove_workspace(repo)
    with pytest.raises(InvalidArgument, match=f"workspace {repo} was removed"):
        forest.add_task_worktree(repo, "/gone-task")


@pytest.mark.needs("database_guards")
def test_the_schema_itself_refuses_a_parented_repository_or_an_orphan_worktree(
    forest: Forest, harness: Harness
) -> None:
    repo = forest.add_repository("/r")
    for row in [
        ("a", repo, "repository", "/a"),
        ("b", None, "task_worktree", "/b"),
        ("c", repo, "workspace", "/c"),
    ]:
        columns = dict(zip(("id", "parent_id", "kind", "path"), row, strict=True))
        with pytest.raises(Refused):
            harness.insert_rows(forest, "workspaces", [{**columns, "created_at": "now"}])


def test_paths_are_unique_among_live_workspaces(forest: Forest) -> None:
    repo = forest.add_repository("/r")
    task = forest.add_task_worktree(repo, "/r-task")
    with pytest.raises(InvalidArgument, match=f"/r-task is already live workspace {task}"):
        forest.add_task_worktree(repo, "/r-task")
    with pytest.raises(InvalidArgument, match="needs a path"):
        forest.add_repository("")
    forest.remove_workspace(task)
    again = forest.add_task_worktree(repo, "/r-task")
    assert again != task


def test_remove_refuses_while_live_children_remain(forest: Forest) -> None:
    ids = build(forest)
    with pytest.raises(InvalidArgument) as caught:
        forest.remove_workspace(ids["repo"])
    assert ids["task"] in str(caught.value) and "remove them first" in str(caught.value)
    assert forest.workspace(ids["repo"]).live

    removed = forest.remove_workspace(ids["worker"])
    assert removed.removed_at is not None and not removed.live
    assert forest.workspace(ids["worker"]) == removed
    forest.remove_workspace(ids["task"])
    forest.remove_workspace(ids["repo"])
    assert forest.workspace_tree() == []


def test_removing_twice_keeps_the_first_removal(forest: Forest) -> None:
    repo = forest.add_repository("/r")
    first = forest.remove_workspace(repo)
    assert forest.remove_workspace(repo) == first == forest.workspace(repo)


def test_removed_records_are_hidden_unless_asked_for(forest: Forest) -> None:
    ids = build(forest)
    forest.remove_workspace(ids["worker"])
    assert forest.workspace_children(ids["task"]) == []
    assert [w.id for w in forest.workspace_children(ids["task"], include_removed=True)] == [
        ids["worker"]
    ]
    assert [i.node.id for i in forest.workspace_tree()] == [ids["repo"], ids["task"]]
    assert [i.node.id for i in forest.workspace_tree(include_removed=True)] == [
        ids["repo"],
        ids["task"],
        ids["worker"],
    ]
    # A root asked for by id is listed even when removed.
    assert [i.node.id for i in forest.workspace_tree(ids["worker"])] == [ids["worker"]]


@pytest.mark.parametrize(
    "call", ["workspace", "workspace_children", "workspace_tree", "remove_workspace"]
)
def test_unknown_workspace_ids_raise(forest: Forest, call: str) -> None:
    with pytest.raises(UnknownTreeNode, match="unknown workspace record: forged"):
        getattr(forest, call)("forged")


def test_records_are_frozen(forest: Forest) -> None:
    record = forest.workspace(forest.add_repository("/r"))
    assert isinstance(record, Workspace)
    with pytest.raises(AttributeError):
        record.path = "/elsewhere"  # type: ignore[misc]
