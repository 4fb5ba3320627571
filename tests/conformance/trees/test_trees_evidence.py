"""Worker results as evidence: resolved from the parent's active branch, checked every call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from sessionforest import (
    ForeignEntry,
    Forest,
    InvalidArgument,
    NotEvidence,
    NotOnActiveBranch,
    UnknownEntry,
    UnknownSession,
    UnknownTreeNode,
)


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def result(worker_session: str, summary: str, **extra: Any) -> dict[str, Any]:
    return {"worker_session_id": worker_session, "status": "succeeded", "summary": summary, **extra}


@dataclass
class Scene:
    parent: str  # the orchestrator's session
    ask: str  # user message the results hang under
    first: str  # worker 1's result, on branch A
    sibling: str  # a result on branch B, a sibling of branch A
    orch: str
    worker1: str
    worker2: str
    first_payload: dict[str, Any]


@pytest.fixture
def scene(forest: Forest) -> Scene:
    parent, w1, w2 = (forest.create_session(title=t) for t in ("parent", "w1", "w2"))
    orch = forest.add_orchestrator(parent)
    worker1 = forest.add_worker(orch, w1, {"may": ["edit"]})
    worker2 = forest.add_worker(orch, w2, {"may": ["read"]})
    ask = forest.append(parent, "user.message", user("fix the login bug")).id
    payload = result(w1, "patched auth.py", data={"files": ["auth.py"], "tests": {"passed": 12}})
    first = forest.append(parent, "worker.result", payload).id
    sibling = forest.append(parent, "worker.result", result(w1, "retry"), parent=ask).id
    forest.move_head(parent, first)
    return Scene(parent, ask, first, sibling, orch, worker1, worker2, payload)


def test_resolves_the_exact_payload(forest: Forest, scene: Scene) -> None:
    resolved = forest.resolve_evidence(scene.parent, scene.first)
    assert resolved == scene.first_payload
    assert resolved == forest.entry(scene.parent, scene.first).payload
    # A sibling worker of the same orchestrator gets the same exact payload.
    assert forest.resolve_evidence(scene.parent, scene.first, for_agent=scene.worker2) == resolved


def test_still_evidence_while_the_branch_grows_below_it(forest: Forest, scene: Scene) -> None:
    forest.append(scene.parent, "user.message", user("thanks, now the docs"))
    assert forest.resolve_evidence(scene.parent, scene.first) == scene.first_payload


def test_off_branch_is_refused_and_checked_again_on_every_call(
    forest: Forest, scene: Scene
) -> None:
    forest.move_head(scene.parent, scene.sibling)
    with pytest.raises(NotOnActiveBranch) as caught:
        forest.resolve_evidence(scene.parent, scene.first, for_agent=scene.worker2)
    assert (caught.value.entry_id, caught.value.session_id) == (scene.first, scene.parent)
    assert forest.resolve_evidence(scene.parent, scene.sibling)["summary"] == "retry"

    forest.move_head(scene.parent, scene.first)
    assert forest.resolve_evidence(scene.parent, scene.first) == scene.first_payload
    with pytest.raises(NotOnActiveBranch):
        forest.resolve_evidence(scene.parent, scene.sibling)


def test_a_head_moved_above_the_result_leaves_it_off_the_branch(
    forest: Forest, scene: Scene
) -> None:
    forest.move_head(scene.parent, scene.ask)
    with pytest.raises(NotOnActiveBranch):
        forest.resolve_evidence(scene.parent, scene.first)


def test_an_entry_of_another_session_is_foreign(forest: Forest, scene: Scene) -> None:
    elsewhere = forest.create_session()
    theirs = forest.append(elsewhere, "worker.result", result("w", "elsewhere")).id
    with pytest.raises(ForeignEntry) as caught:
        forest.resolve_evidence(scene.parent, theirs)
    assert (caught.value.entry_id, caught.value.session_id, caught.value.owner_session_id) == (
        theirs,
        scene.parent,
        elsewhere,
    )


def test_a_forged_id_is_unknown(forest: Forest, scene: Scene) -> None:
    forged = scene.first[:-1] + ("0" if scene.first[-1] != "0" else "1")
    for entry_id in (forged, "", "' OR 1=1 --"):
        with pytest.raises(UnknownEntry) as caught:
            forest.resolve_evidence(scene.parent, entry_id)
        assert (caught.value.entry_id, caught.value.session_id) == (entry_id, scene.parent)


def test_only_worker_results_are_evidence(forest: Forest, scene: Scene) -> None:
    with pytest.raises(NotEvidence) as caught:
        forest.resolve_evidence(scene.parent, scene.ask)
    assert (caught.value.entry_id, caught.value.kind) == (scene.ask, "user.message")


def test_an_unknown_session_is_refused(forest: Forest, scene: Scene) -> None:
    with pytest.raises(UnknownSession):
        forest.resolve_evidence("no-such-session", scene.first)


def test_a_worker_of_another_orchestrator_is_refused(forest: Forest, scene: Scene) -> None:
    other_lead, outsider_session = forest.create_session(), forest.create_session()
    other_orch = forest.add_orchestrator(other_lead)
    outsider = forest.add_worker(other_orch, outsider_session, {"may": ["read"]})
    with pytest.raises(ForeignEntry) as caught:
        forest.resolve_evidence(scene.parent, scene.first, for_agent=outsider)
    # Seen from the outsider: the entry is in scene.parent, not its orchestrator's session.
    assert (caught.value.entry_id, caught.value.session_id, caught.value.owner_session_id) == (
        scene.first,
        other_lead,
        scene.parent,
    )


def test_a_removed_worker_is_refused(forest: Forest, scene: Scene) -> None:
    forest.remove_agent(scene.worker2)
    with pytest.raises(InvalidArgument) as caught:
        forest.resolve_evidence(scene.parent, scene.first, for_agent=scene.worker2)
    assert caught.value.argument == "for_agent"
    assert f"agent {scene.worker2} was removed" in str(caught.value)
    # Its sibling keeps its authority.
    assert forest.resolve_evidence(scene.parent, scene.first, for_agent=scene.worker1)


def test_only_a_known_worker_may_ask(forest: Forest, scene: Scene) -> None:
    with pytest.raises(UnknownTreeNode, match="unknown agent record: nobody"):
        forest.resolve_evidence(scene.parent, scene.first, for_agent="nobody")
    with pytest.raises(InvalidArgument, match="is an orchestrator"):
        forest.resolve_evidence(scene.parent, scene.first, for_agent=scene.orch)


def test_resolving_writes_nothing(forest: Forest, scene: Scene, snapshot: Any) -> None:
    tables = ("sessions", "session_entries", "session_heads", "workspaces", "agents")
    before = snapshot(*tables)
    for _ in range(3):
        forest.resolve_evidence(scene.parent, scene.first, for_agent=scene.worker2)
    assert snapshot(*tables) == before
