"""The first read of a 2,000-message history in process CPU, beside the peer's, in one process.

What bench_heavy._first_read and the peers row time in wall clock, counted in
process CPU (best and median of RUNS), which a loaded shared machine disturbs far
less: the store built as peers._forest builds it (2,000 appends, then the
catch-up the burst deferred), `active_path` with every payload read, the path
cache dropped before each timed call (a first read) or kept (warm), against the
OpenAI Agents SDK's `SQLiteSession.get_items()` through its event loop and its
bare query and `json.loads` loop. Run it once per tree, trees alternated:

    PYTHONPATH=<tree>/src:benchmarks python benchmarks/first_read_cpu.py

It prints one JSON line of milliseconds.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable
from typing import Any

import orjson

import harness
import peers
from sessionforest import Forest

RUNS = 41


def _cpu(fn: Callable[[], object], before: Callable[[], object] | None = None) -> list[float]:
    times = []
    for _ in range(RUNS):
        fn()
        if before is not None:
            before()
        t0 = time.process_time_ns()
        fn()
        times.append(time.process_time_ns() - t0)
    times.sort()
    return [round(times[0] / 1e6, 3), round(times[RUNS // 2] / 1e6, 3)]


def main() -> None:
    from agents import SQLiteSession

    texts = peers._texts(2000)
    found: dict[str, Any] = {}
    with harness.index_only():
        path = peers._fresh("first-read-cpu.db")
        forest = Forest.open(path)
        try:
            sid = forest.create_session("peers")
            for text in texts:
                forest.append(sid, "user.message", peers._payload(text))
            forest.maintain()  # indexed and packed, as the maintenance thread does
            assert forest.maintenance_idle()

            def read() -> None:
                [e.payload for e in forest.active_path(sid)]

            found["first"] = _cpu(read, lambda: harness.uncached(forest))
            found["warm"] = _cpu(read)
        finally:
            forest.close()
            harness.remove_db(path)
    path = peers._fresh("first-read-cpu-agents.db")
    loop = asyncio.new_event_loop()
    session = SQLiteSession("peers", path)
    try:
        run = loop.run_until_complete
        for text in texts:
            run(session.add_items([{"role": "user", "content": text}]))
        found["get_items"] = _cpu(lambda: run(session.get_items()))
        conn = sqlite3.connect(path)
        query = "SELECT message_data FROM agent_messages WHERE session_id = ? ORDER BY id ASC"
        found["query_loads"] = _cpu(
            lambda: [json.loads(m) for (m,) in conn.execute(query, ("peers",)).fetchall()]
        )
        conn.close()
    finally:
        session.close()
        loop.close()
        harness.remove_db(path)
    print(orjson.dumps(found).decode())


if __name__ == "__main__":
    main()
