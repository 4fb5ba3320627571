"""The workspace and agent tree rules, whatever stores the records.

Parent kinds (a task worktree under a repository, a worker worktree under a
task worktree), liveness (nothing new under a removed record, no removal
while live children remain), one live workspace per path, one live agent per
session, workers under orchestrators with a policy. A backend calls these
inside the write each guards; listings come out in pre-order.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import InvalidArgument
from ..jsontext import NonFinite, encode
from ..model import PARENT_KIND, AgentRole, TreeItem, Workspace, WorkspaceKind
from ..model.trees import R


def require_live(tree: str, node_id: str, removed_at: str | None, argument: str) -> None:
    if removed_at is not None:
        raise InvalidArgument(argument, f"{tree} {node_id} was removed at {removed_at}")


def check_workspace_parent(kind: str, parent: Workspace | None, argument: str) -> None:
    """A workspace of `kind` may hang under `parent` (None: a root)."""
    want = PARENT_KIND[WorkspaceKind(kind)]
    if want is None:
        return
    assert parent is not None  # every non-root adder passes its parent
    if parent.kind != want:
        raise InvalidArgument(
            argument, f"a {kind} hangs under a {want}; workspace {parent.id} is a {parent.kind}"
        )
    require_live("workspace", parent.id, parent.removed_at, argument)


def check_orchestrator(role: str, removed_at: str | None, parent_id: str) -> None:
    """A worker's parent must be a live orchestrator."""
    if role != AgentRole.ORCHESTRATOR:
        raise InvalidArgument(
            "orchestrator_id",
            f"agent {parent_id} is a worker; workers hang under an orchestrator only",
        )
    require_live("agent", parent_id, removed_at, "orchestrator_id")


def policy_text(policy: Any) -> str:
    """A worker's policy as stored: a non-empty object, sorted keys (same policy, same text)."""
    if not isinstance(policy, dict) or not policy:
        raise InvalidArgument(
            "policy", "a worker needs a non-empty dict saying what it is authorized to do"
        )
    try:
        return encode(policy, option=orjson.OPT_SORT_KEYS).decode()
    except NonFinite as exc:
        raise InvalidArgument("policy", str(exc)) from exc
    except orjson.JSONEncodeError as exc:
        raise InvalidArgument("policy", f"must be a JSON object: {exc}") from exc


def removal_refused(table: str, node_id: str, live: list[str]) -> None:
    if live:
        raise InvalidArgument(
            table[:-1], f"{node_id} still has live children {', '.join(live)}; remove them first"
        )


def preorder(rows: list[R], root_id: str | None, include_removed: bool) -> list[TreeItem[R]]:
    """Depth-first listing with an explicit stack: deep trees cannot hit the recursion limit."""
    children: dict[str | None, list[R]] = {}
    for record in rows:
        children.setdefault(record.parent_id, []).append(record)
    roots = [r for r in rows if r.id == root_id] if root_id is not None else children.get(None, [])
    out: list[TreeItem[R]] = []
    seen: set[str] = set()
    stack = [(0, r) for r in reversed(roots)]
    while stack:
        depth, record = stack.pop()
        if record.id in seen:
            continue  # only a damaged (cyclic) table gets here
        seen.add(record.id)
        # A root asked for by id is listed even when removed: it was asked for.
        if record.removed_at is not None and not include_removed and record.id != root_id:
            continue
        out.append(TreeItem(depth, record))
        stack.extend((depth + 1, c) for c in reversed(children.get(record.id, ())))
    return out
