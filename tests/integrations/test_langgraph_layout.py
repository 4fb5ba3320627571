"""Where `ForestSaver` hangs its entries (integrations/langgraph/index.py), and stores
written in the layout before 2026-12-03 (every write and mark on a log line of its own
below the thread's start, each checkpoint below its parent checkpoint's entry): they
read as the same thread, and the saver goes on writing them in the current layout."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from sessionforest import Forest
from sessionforest.integrations.langgraph import ForestSaver, session_id_for
from sessionforest.integrations.langgraph.index import FIELD, START_LABEL, ThreadIndex

from .test_langgraph_graphs import State, build, checkpoint_of, config, review

INPUT = {"steps": [], "answer": ""}


class OldLayoutSaver(ForestSaver):
    """A saver writing the layout of 2c0c447 and before: a checkpoint below its parent
    checkpoint's entry (else the start), every write and mark below the newest of the
    thread's saver records (else the start). The payloads are the same; only where
    each entry hangs differs, found here from the stored entries themselves."""

    def _append(
        self,
        index: ThreadIndex,
        kind: str,
        payload: dict[str, Any],
        visibility: str | None,
        parent: str | None,
    ) -> Any:
        entries = self.forest.entries(index.session_id)
        start = next(e.id for e in entries if e.payload.get("label") == START_LABEL)
        below: str | None = start
        if kind == "checkpoint":
            data = payload[FIELD]
            for e in entries:
                own = e.payload.get(FIELD)
                if isinstance(own, dict) and (own["ns"], own["id"]) == (data["ns"], data["parent"]):
                    below = e.id
        else:
            below = next((e.id for e in reversed(entries) if e.kind == kind), start)
        return super()._append(index, kind, payload, visibility, below)


def run(saver: ForestSaver, thread: str) -> None:
    """Interrupted, resumed by another saver, forked from before the draft (paused
    again at the review): a thread with a fork and pending writes at its newest
    checkpoint."""
    graph = build().compile(checkpointer=saver)
    graph.invoke(INPUT, config(thread))
    again = build().compile(checkpointer=type(saver)(saver.forest))
    again.invoke(Command(resume="yes"), config(thread))
    history = list(graph.get_state_history(config(thread)))
    before_draft = next(h for h in history if h.next == ("draft",))
    graph.invoke(None, before_draft.config)


def plain(value: Any) -> Any:
    """A write's value without the ids LangGraph makes per run (an interrupt's)."""
    if isinstance(value, list):
        return [getattr(v, "value", v) for v in value]
    return value


def read(saver: ForestSaver, thread: str) -> list[Any]:
    """What LangGraph reads of a thread, without its ids (which differ per run)."""
    graph = build().compile(checkpointer=saver)
    found = []
    for t in saver.list(config(thread)):
        writes = sorted((channel, repr(plain(value))) for _, channel, value in t.pending_writes)
        found.append((t.checkpoint["channel_values"], t.metadata.get("step"),
                      t.metadata.get("source"), writes, t.parent_config is None))  # fmt: skip
    state = graph.get_state(config(thread))
    return [found, state.values, state.next, [i.value for i in state.interrupts]]


def test_a_linear_thread_is_one_line_of_appends_below_the_head(forest: Forest) -> None:
    saver = ForestSaver(forest)
    graph = build().compile(checkpointer=saver)
    for _ in range(3):
        graph.invoke(INPUT, config("line"), durability="async")
        graph.invoke(Command(resume="ok"), config("line"), durability="sync")
    sid = session_id_for("line")
    entries = forest.entries(sid)
    # Each entry below the one before, whatever order LangGraph's background executor
    # sent a checkpoint and its writes in (early, late): each append was below the head.
    assert [e.parent_id for e in entries[1:]] == [e.id for e in entries[:-1]]
    assert forest.head(sid) == entries[-1].id and len(forest.tips(sid)) == 1
    kinds = {e.kind for e in entries[1:]}
    assert kinds == {"checkpoint", "provider.notification"}


def test_marks_and_a_thread_started_again_hang_where_they_cost_no_walk(forest: Forest) -> None:
    saver = ForestSaver(forest)
    graph = build().compile(checkpointer=saver)
    graph.invoke(INPUT, config("again"))
    sid = session_id_for("again")
    newest = forest.entries(sid)[-1]
    saver.delete_thread("again")
    mark = forest.entries(sid)[-1]
    assert mark.payload["event"]["op"] == "delete_thread" and mark.parent_id == newest.id
    graph.invoke(INPUT, config("again"))
    start = forest.entries(sid)[0]
    fresh = [e for e in forest.entries(sid) if e.sequence > mark.sequence]
    assert fresh[0].kind == "checkpoint" and fresh[0].parent_id == start.id  # empty again
    assert graph.get_state(config("again")).values["steps"] == ["draft"]


def test_a_store_in_the_old_layout_reads_the_same_and_goes_on_in_the_new(forest: Forest) -> None:
    run(OldLayoutSaver(forest), "old")
    run(ForestSaver(forest), "new")
    sid = session_id_for("old")
    entries = forest.entries(sid)
    start = entries[0]
    # The old layout as stored: the writes on one line of their own below the start,
    # each checkpoint below its parent checkpoint.
    log = [e for e in entries if e.kind == "provider.notification"]
    assert log[0].parent_id == start.id
    assert [e.parent_id for e in log[1:]] == [e.id for e in log[:-1]]
    by_id = {e.id: e for e in entries}
    for e in entries[1:]:
        if e.kind == "checkpoint" and e.payload[FIELD]["parent"]:
            assert by_id[str(e.parent_id)].payload[FIELD]["id"] == e.payload[FIELD]["parent"]
    assert len(forest.tips(sid)) == 3  # the log line and the two checkpoint branches

    # A saver of today, on a fresh index, reads it as the same thread as one it wrote.
    assert read(ForestSaver(forest), "old") == read(ForestSaver(forest), "new")

    # ... and goes on: its new entries hang in the current layout, the writes of an
    # old checkpoint below that checkpoint, not on the log line.
    paused = ForestSaver(forest).get_tuple(config("old"))
    assert paused is not None
    cid = paused.config["configurable"]["checkpoint_id"]
    cp = next(e for e in entries[1:] if e.kind == "checkpoint" and checkpoint_of(e) == cid)
    graph = build().compile(checkpointer=ForestSaver(forest))
    done = graph.invoke(Command(resume="no"), config("old"))
    assert done["steps"] == ["draft", "review:no", "publish"]
    build().compile(checkpointer=ForestSaver(forest)).invoke(Command(resume="no"), config("new"))
    assert read(ForestSaver(forest), "old") == read(ForestSaver(forest), "new")
    added = [e for e in forest.entries(sid) if e.sequence > entries[-1].sequence]
    assert added[0].parent_id == cp.id
    assert [e.parent_id for e in added[1:]] == [e.id for e in added[:-1]]
    assert not any(e.parent_id in (start.id, log[-1].id) for e in added)


def test_a_subgraph_is_a_branch_off_the_checkpoint_that_ran_it(forest: Forest) -> None:
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
    graph.invoke(INPUT, config("nested"))
    assert graph.invoke(Command(resume="ok"), config("nested"))["steps"] == ["inner", "review:ok"]
    sid = session_id_for("nested")
    # The graph's line and the subgraph's branch; writes LangGraph's executor sends late
    # for an earlier checkpoint may hang a branch of their own (timing: under load).
    assert len(forest.tips(sid)) >= 2
    checkpoints = [e for e in forest.entries(sid)[1:] if e.kind == "checkpoint"]
    line = {e.id for e in forest.active_path(sid)}  # the head: the graph's newest
    assert {e.id for e in checkpoints if e.payload[FIELD]["ns"] == ""} <= line
    assert not {e.id for e in checkpoints if e.payload[FIELD]["ns"] != ""} & line
