"""The framework rows of benchmarks/peers.py: each store driven by its framework's runner.

- OpenAI Agents: a 20-turn conversation, one `Runner.run(agent, question,
  session=...)` per turn with `agents.testing.ScriptedModel` answering (the
  same runner and model work on both sides), `ForestSession` against the
  SDK's `SQLiteSession` on a fresh file each; time per turn (median of the
  turns, then of the runs) and what is stored (rows, bytes of item JSON, the
  file after a checkpoint).
- LangGraph: a one-node `StateGraph` whose state is a list of messages,
  invoked once per step on one thread, `ForestSaver` against
  `langgraph-checkpoint-sqlite`'s `SqliteSaver` (each on a fresh file): put
  (`graph.invoke`, which writes the step's checkpoints and writes) and get
  (`graph.get_state`) per step, and `list` of the thread at 1,000
  checkpoints (all of them, and the newest 10).
"""

from __future__ import annotations

import asyncio
import operator
import sqlite3
from pathlib import Path
from typing import Annotated, Any, TypedDict

import orjson

import harness
from harness import Row

TURNS = 20
CHECKPOINTS = 1_000


def _fresh(name: str) -> Path:
    path = harness.WORK / name
    harness.remove_db(path)
    return path


def _file_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


# --- OpenAI Agents ------------------------------------------------------------------


def agents_conversation(forest_side: bool) -> dict[str, float]:
    from agents import Agent, RunConfig, Runner, SQLiteSession
    from agents.testing import ScriptedModel, assistant_message

    from sessionforest import Forest
    from sessionforest.integrations.openai_agents import ForestSession

    path = _fresh(f"peers-runner-{int(forest_side)}.db")
    forest = Forest.open(path) if forest_side else None
    session: Any = ForestSession("chat", forest) if forest else SQLiteSession("chat", path)
    model = ScriptedModel()
    agent = Agent(name="bench", model=model)
    config = RunConfig(tracing_disabled=True)
    loop = asyncio.new_event_loop()
    try:
        times = []
        for turn in range(TURNS):
            model.enqueue([assistant_message(f"Answer {turn}: " + "detail " * 60)])
            question = f"Question {turn}: " + "context " * 60
            t0 = harness.clock_ns()
            loop.run_until_complete(Runner.run(agent, question, session=session,
                                               run_config=config))  # fmt: skip
            times.append(harness.clock_ns() - t0)
        items = loop.run_until_complete(session.get_items())
        assert len(items) == 2 * TURNS
        if forest is not None:
            entries = forest.entries("chat")
            rows = len(entries)
            payload = sum(len(orjson.dumps(e.payload)) for e in entries)
            forest.close()
        else:
            session.close()
            conn = sqlite3.connect(path)
            rows, payload = conn.execute(
                "SELECT count(*), sum(length(message_data)) FROM agent_messages"
            ).fetchone()
            conn.close()
        size = _file_bytes(path)
    finally:
        loop.close()
        harness.remove_db(path)
    return {"turn": harness.median(times), "rows": rows, "payload": payload, "file": size}


def agents_rows(results: dict[str, list[dict[str, float]]]) -> tuple[list[Row], list[str]]:
    def med(side: str, key: str) -> float:
        return harness.median([r[key] for r in results[side]])

    fs, sq = "ForestSession", "SQLiteSession"
    rows = [
        Row(f"`Runner.run` per turn, {TURNS}-turn conversation: `ForestSession` vs "
            "`SQLiteSession`", harness.ms(med(fs, "turn")), harness.ms(med(sq, "turn")),
            harness.ratio(med(fs, "turn") / med(sq, "turn")), "info"),
        Row(f"stored after {TURNS} turns, item JSON bytes: `ForestSession` vs `SQLiteSession`",
            f"{med(fs, 'payload'):,.0f} B in {med(fs, 'rows'):,.0f} entries",
            f"{med(sq, 'payload'):,.0f} B in {med(sq, 'rows'):,.0f} rows",
            harness.ratio(med(fs, "payload") / med(sq, "payload")), "info"),
        Row(f"stored after {TURNS} turns, database file (after a checkpoint)",
            harness.mib(med(fs, "file")), harness.mib(med(sq, "file")),
            harness.ratio(med(fs, "file") / med(sq, "file")), "info"),
    ]  # fmt: skip
    wins = [row.metric for row in rows if _peer_wins(row)]
    return rows, wins


# --- LangGraph ----------------------------------------------------------------------


class _State(TypedDict):
    messages: Annotated[list[str], operator.add]


def _graph(saver: Any) -> Any:
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(_State)
    builder.add_node("reply", lambda s: {"messages": [f"reply {len(s['messages'])}"]})
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=saver)


def langgraph_thread(forest_side: bool, steps: int) -> dict[str, float]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    from sessionforest import Forest
    from sessionforest.integrations.langgraph import ForestSaver

    path = _fresh(f"peers-langgraph-{int(forest_side)}.db")
    forest = Forest.open(path) if forest_side else None
    conn = None if forest else sqlite3.connect(path, check_same_thread=False)
    saver: Any = ForestSaver(forest) if forest else SqliteSaver(conn)  # type: ignore[arg-type]
    graph = _graph(saver)
    config = {"configurable": {"thread_id": "bench"}}
    try:
        puts, gets = [], []
        step = 0
        while True:
            t0 = harness.clock_ns()
            graph.invoke({"messages": [f"user {step} " + "text " * 40]}, config)
            puts.append(harness.clock_ns() - t0)
            t0 = harness.clock_ns()
            state = graph.get_state(config)
            gets.append(harness.clock_ns() - t0)
            step += 1
            if step >= steps:
                break
        assert len(state.values["messages"]) == 2 * steps
        total = sum(1 for _ in saver.list(config))
        list_all = harness.median([harness.time_ns(lambda: list(saver.list(config)))
                                   for _ in range(5)])  # fmt: skip
        list_10 = harness.median([harness.time_ns(lambda: list(saver.list(config, limit=10)))
                                  for _ in range(5)])  # fmt: skip
    finally:
        if forest is not None:
            forest.close()
        if conn is not None:
            conn.close()
        harness.remove_db(path)
    return {"put": harness.median(puts), "get": harness.median(gets), "checkpoints": total,
            "list": list_all, "list10": list_10}  # fmt: skip


def steps_for_checkpoints() -> int:
    """Invocations that leave at least CHECKPOINTS checkpoints (3 per invoke here:
    the input, the step, the end; checked by the run)."""
    return -(-CHECKPOINTS // 3)


def langgraph_rows(results: dict[str, list[dict[str, float]]]) -> tuple[list[Row], list[str]]:
    def med(side: str, key: str) -> float:
        return harness.median([r[key] for r in results[side]])

    fs, sq = "ForestSaver", "SqliteSaver"
    n = int(min(med(fs, "checkpoints"), med(sq, "checkpoints")))
    rows = [
        Row("LangGraph put per step (`graph.invoke`): `ForestSaver` vs `SqliteSaver`",
            harness.ms(med(fs, "put")), harness.ms(med(sq, "put")),
            harness.ratio(med(fs, "put") / med(sq, "put")), "info"),
        Row("LangGraph get per step (`graph.get_state`)", harness.ms(med(fs, "get")),
            harness.ms(med(sq, "get")), harness.ratio(med(fs, "get") / med(sq, "get")), "info"),
        Row(f"LangGraph `list` of a thread at {n:,} checkpoints (all)",
            harness.ms(med(fs, "list")), harness.ms(med(sq, "list")),
            harness.ratio(med(fs, "list") / med(sq, "list")), "info"),
        Row(f"LangGraph `list(limit=10)` at {n:,} checkpoints", harness.ms(med(fs, "list10")),
            harness.ms(med(sq, "list10")), harness.ratio(med(fs, "list10") / med(sq, "list10")),
            "info"),
    ]  # fmt: skip
    wins = [row.metric for row in rows if _peer_wins(row)]
    return rows, wins


def _peer_wins(row: Row) -> bool:
    return row.ratio.endswith("x") and float(row.ratio.rstrip("x")) > 1.0


def available() -> str | None:
    """Why the framework rows cannot run here (a missing benchmark dependency), or None."""
    for module in ("agents", "langgraph.checkpoint.sqlite"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (pip install -r benchmarks/requirements-peers.txt)"
    return None
