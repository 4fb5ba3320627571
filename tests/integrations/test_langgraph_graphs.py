"""Real LangGraph graphs checkpointed by `ForestSaver`: interrupted, resumed, forked by
time travel (the fork is a branch of the thread's forest session), subgraphs, the async
runner, another process's saver, and delete_thread's marks."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from sessionforest import Forest
from sessionforest.integrations.langgraph import AsyncForestSaver, ForestSaver, session_id_for


class State(TypedDict):
    steps: Annotated[list[str], operator.add]
    answer: str


def draft(state: State) -> dict[str, Any]:
    return {"steps": ["draft"]}


def review(state: State) -> dict[str, Any]:
    decision = interrupt({"question": "approve the draft?"})
    return {"steps": [f"review:{decision}"], "answer": str(decision)}


def publish(state: State) -> dict[str, Any]:
    return {"steps": ["publish"]}


def build() -> StateGraph[State]:
    builder = StateGraph(State)
    builder.add_node("draft", draft)
    builder.add_node("review", review)
    builder.add_node("publish", publish)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "review")
    builder.add_edge("review", "publish")
    builder.add_edge("publish", END)
    return builder


def config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def checkpoint_of(entry: Any) -> str:
    """The checkpoint id an entry of the saver's belongs to (its own, or the one its
    writes name)."""
    if entry.kind == "checkpoint":
        return str(entry.payload["langgraph"]["id"])
    return str(entry.payload["event"]["checkpoint"])


def test_a_graph_is_interrupted_resumed_and_forked(forest: Forest) -> None:
    graph = build().compile(checkpointer=ForestSaver(forest))
    first = graph.invoke({"steps": [], "answer": ""}, config("t1"))
    assert first["__interrupt__"][0].value == {"question": "approve the draft?"}
    state = graph.get_state(config("t1"))
    assert state.next == ("review",) and state.values["steps"] == ["draft"]

    # Another saver on the same store (a new process) resumes it.
    other = build().compile(checkpointer=ForestSaver(forest))
    done = other.invoke(Command(resume="yes"), config("t1"))
    assert done["steps"] == ["draft", "review:yes", "publish"] and done["answer"] == "yes"
    assert graph.get_state(config("t1")).next == ()

    sid = session_id_for("t1")
    # One line so far: each checkpoint, then its writes (hidden), each entry below the
    # one before, so every append was below the head.
    entries = forest.entries(sid)
    assert len(forest.tips(sid)) == 1
    assert [e.parent_id for e in entries[1:]] == [e.id for e in entries[:-1]]
    writes = [e for e in entries if e.kind == "provider.notification"]
    assert writes and all(e.context_visibility == "hidden" for e in writes)
    assert all(e.payload["event"]["op"] == "writes" for e in writes)
    history = list(graph.get_state_history(config("t1")))
    before_draft = next(h for h in history if h.next == ("draft",))

    # Time travel: run again from before the draft (it pauses at the review again),
    # then answer differently: a fork, and the thread's newest checkpoint is on it.
    again = graph.invoke(None, before_draft.config)
    assert "__interrupt__" in again
    forked = graph.invoke(Command(resume="no"), config("t1"))
    assert forked["steps"] == ["draft", "review:no", "publish"] and forked["answer"] == "no"
    assert graph.get_state(config("t1")).values["answer"] == "no"
    tips = forest.tips(sid)
    assert len(tips) == 2
    # The two branches part at the end of the run (the checkpoint, then its writes)
    # of the checkpoint the fork started from.
    cid = before_draft.config["configurable"]["checkpoint_id"]
    paths = []
    for tip in tips:
        forest.move_head(sid, tip.id)
        paths.append([e.id for e in forest.active_path(sid)])
    shared = [a for a, b in zip(*paths, strict=False) if a == b]
    fork = forest.entry(sid, shared[-1])
    assert checkpoint_of(fork) == cid
    # (each branch goes on with an entry of another checkpoint: the fork's, or the
    # original run's next one)
    assert all(checkpoint_of(forest.entry(sid, p[len(shared)])) != cid for p in paths)
    # What a person reads: the steps and what each wrote.
    summaries = [e.payload["summary"] for e in forest.entries(sid) if e.kind == "checkpoint"]
    assert any("wrote" in s and "step" in s for s in summaries)

    # update_state on an old checkpoint forks too.
    graph.update_state(history[-1].config, {"steps": ["edited"]})
    assert len(forest.tips(sid)) == 3


def test_subgraph_checkpoints_keep_their_namespace(forest: Forest) -> None:
    inner = StateGraph(State)
    inner.add_node("step", lambda s: {"steps": ["inner"]})
    inner.add_edge(START, "step")
    inner.add_edge("step", END)
    outer = StateGraph(State)
    outer.add_node("sub", inner.compile())
    outer.add_node("pause", review)
    outer.add_edge(START, "sub")
    outer.add_edge("sub", "pause")
    outer.add_edge("pause", END)
    graph = outer.compile(checkpointer=ForestSaver(forest))
    graph.invoke({"steps": [], "answer": ""}, config("nested"))
    out = graph.invoke(Command(resume="ok"), config("nested"))
    assert out["steps"] == ["inner", "review:ok"]
    spaces = {e.payload["langgraph"]["ns"] for e in forest.entries(session_id_for("nested"))
              if "langgraph" in e.payload}  # fmt: skip
    assert "" in spaces


def test_the_async_form_runs_a_graph(forest: Forest) -> None:
    async def scenario() -> None:
        saver = AsyncForestSaver(forest)
        graph = build().compile(checkpointer=saver)
        await graph.ainvoke({"steps": [], "answer": ""}, config("a1"))
        out = await graph.ainvoke(Command(resume="async"), config("a1"))
        assert out["answer"] == "async"
        listed = [t async for t in saver.alist(config("a1"))]
        assert len(listed) >= 4 and listed[0].checkpoint["id"] > listed[-1].checkpoint["id"]

    asyncio.run(scenario())


def test_from_conn_string_opens_and_closes_the_store(harness: Any) -> None:
    location = harness.new_location()
    with ForestSaver.from_conn_string(location) as saver:
        graph = build().compile(checkpointer=saver)
        graph.invoke({"steps": [], "answer": ""}, config("c1"))
        sid = session_id_for("c1")

    async def reopened() -> None:
        async with AsyncForestSaver.from_conn_string(location) as again:
            state = await build().compile(checkpointer=again).aget_state(config("c1"))
            assert state.next == ("review",)

    asyncio.run(reopened())
    with harness.open(location) as forest:
        assert forest.session(sid).harness == "langgraph"


def test_delete_thread_hides_checkpoints_and_keeps_every_entry(forest: Forest) -> None:
    saver = ForestSaver(forest)
    graph = build().compile(checkpointer=saver)
    graph.invoke({"steps": [], "answer": ""}, config("gone"))
    sid = session_id_for("gone")
    stored = len(forest.entries(sid))
    saver.delete_thread("gone")
    assert saver.get_tuple(config("gone")) is None
    assert list(saver.list(config("gone"))) == []
    assert ForestSaver(forest).get_tuple(config("gone")) is None  # for every saver
    entries = forest.entries(sid)
    assert len(entries) == stored + 1 and entries[-1].payload["event"]["op"] == "delete_thread"
    # The thread starts again, empty.
    graph.invoke({"steps": [], "answer": ""}, config("gone"))
    assert graph.get_state(config("gone")).values["steps"] == ["draft"]


def test_thread_ids_that_are_not_forest_ids_still_work(forest: Forest) -> None:
    saver = ForestSaver(forest)
    graph = build().compile(checkpointer=saver)
    for thread in ("with space", "x" * 300, "tab\there"):
        graph.invoke({"steps": [], "answer": ""}, config(thread))
        assert graph.get_state(config(thread)).next == ("review",)
    threads = {t.config["configurable"]["thread_id"] for t in saver.list(None)}
    assert {"with space", "x" * 300, "tab\there"} <= threads
