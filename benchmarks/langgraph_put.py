"""LangGraph's put per step as a thread grows: the peers row's graph (peers_frameworks.py,
a one-node `StateGraph` invoked once per step on one thread, `ForestSaver` on a fresh
file), timed per `graph.invoke` at several thread lengths, A/B across source trees.

    python benchmarks/langgraph_put.py --tree /work/before/src --tree src --rounds 5

Each round runs one process per tree (PYTHONPATH=<tree>, the order alternating) and
one with `SqliteSaver`; each process invokes the graph up to the largest step and
reports, per window of 20 steps around each length in --at: the median wall time of
a put (`graph.invoke`), the median CPU time of the process over it (every thread:
LangGraph's background executor does the puts), and the entries the SQLite store's
path machinery walked per put (`store/sqlite/paths._depth_of` calls: one per entry
`paths.reach` looks at; load-independent). Also the peers row itself: the median put
of the first `steps_for_checkpoints()` steps. Prints medians over the rounds.
`--flat`: the same graph with a state that does not grow (the row's state is a
list of messages two longer each step, which every checkpoint stores whole).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, TypedDict

HERE = Path(__file__).resolve().parent
WINDOW = 20


class _Flat(TypedDict):
    messages: list[str]  # no reducer: each step's replaces the last


def _flat_graph(saver: Any) -> Any:
    """The row's graph with a state that does not grow (--flat): what a put costs
    apart from storing a longer message list each step."""
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(_Flat)
    builder.add_node("reply", lambda s: {"messages": [f"reply to {s['messages'][0][:9]}"]})
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=saver)


def child(side: str, at: list[int], flat: bool) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    import sqlite3

    import harness
    import peers_frameworks as frameworks

    counted = {"walked": 0}
    if side == "forest":
        from sessionforest import Forest
        from sessionforest.integrations.langgraph import ForestSaver
        from sessionforest.store.sqlite import paths

        depth_of = paths._depth_of

        def counting(*args: Any) -> Any:
            counted["walked"] += 1
            return depth_of(*args)

        paths._depth_of = counting  # type: ignore[assignment]
    else:
        from langgraph.checkpoint.sqlite import SqliteSaver
    harness.WORK.mkdir(exist_ok=True)
    path = harness.WORK / f"langgraph-put-{side}-{os.getpid()}.db"
    harness.remove_db(path)
    forest = Forest.open(path) if side == "forest" else None
    conn = None if forest else sqlite3.connect(path, check_same_thread=False)
    saver: Any = ForestSaver(forest) if forest else SqliteSaver(conn)  # type: ignore[arg-type]
    graph = _flat_graph(saver) if flat else frameworks._graph(saver)
    config = {"configurable": {"thread_id": "bench"}}
    steps = max(at) + WINDOW // 2
    wall, cpu, walked = [], [], []
    try:
        for step in range(steps):
            before = counted["walked"]
            c0, t0 = time.process_time_ns(), time.perf_counter_ns()
            graph.invoke({"messages": [f"user {step} " + "text " * 40]}, config)
            wall.append(time.perf_counter_ns() - t0)
            cpu.append(time.process_time_ns() - c0)
            walked.append(counted["walked"] - before)
    finally:
        if forest is not None:
            forest.close()
        if conn is not None:
            conn.close()
        harness.remove_db(path)
    row = frameworks.steps_for_checkpoints()
    found: dict[str, Any] = {"row": statistics.median(wall[:row])}
    for n in at:
        lo, hi = max(0, n - WINDOW // 2), n + WINDOW // 2
        found[str(n)] = {
            "wall": statistics.median(wall[lo:hi]),
            "cpu": statistics.median(cpu[lo:hi]),
            "walked": statistics.median(walked[lo:hi]),
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", default=[], help="a src directory (A/B)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--at", default="50,130,500", help="thread lengths, in steps")
    parser.add_argument("--flat", action="store_true", help="a state that does not grow")
    parser.add_argument("--child", choices=("forest", "sqlite"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    at = [int(n) for n in args.at.split(",")]
    if args.child:
        print(json.dumps(child(args.child, at, args.flat)))
        return
    trees = args.tree or ["src"]
    runs: dict[str, list[dict[str, Any]]] = {t: [] for t in [*trees, "SqliteSaver"]}
    for r in range(args.rounds):
        order = [*trees, "SqliteSaver"]
        if r % 2:
            order.reverse()
        for name in order:
            side = "sqlite" if name == "SqliteSaver" else "forest"
            tree = trees[0] if name == "SqliteSaver" else name
            extra = os.environ.get("PYTHONPATH")  # e.g. where the peers are installed
            where = os.pathsep.join([str(Path(tree).resolve()), *([extra] if extra else [])])
            env = {**os.environ, "PYTHONPATH": where}
            cmd = [sys.executable, __file__, "--child", side, "--at", args.at]
            cmd += ["--flat"] if args.flat else []
            out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
            runs[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"round {r + 1} {name}: row {runs[name][-1]['row'] / 1e6:.2f} ms", flush=True)
    floor = statistics.median(r["row"] for r in runs["SqliteSaver"])
    print(f"load average: {os.getloadavg()}")
    for name, got in runs.items():
        row = statistics.median(r["row"] for r in got)
        print(f"{name}: row (put per step, median of {args.rounds} runs) {row / 1e6:.2f} ms "
              f"= {row / floor:.2f}x SqliteSaver")  # fmt: skip
        for n in at:
            cell = [r[str(n)] for r in got]
            wall, cpu, walked = (
                statistics.median(c[k] for c in cell) for k in ("wall", "cpu", "walked")
            )
            print(f"  at {n:>4} steps: wall {wall / 1e6:6.2f} ms, cpu {cpu / 1e6:6.2f} ms, "
                  f"walked {walked:6.0f} entries/step")  # fmt: skip


if __name__ == "__main__":
    main()
