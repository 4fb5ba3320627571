"""Durable single append: `Forest.append` against one raw transaction per entry.

Both sides append the same ~200-character user messages to the same session of
identical copies of a pre-filled store (WAL, synchronous=NORMAL), one
`BEGIN IMMEDIATE` ... `COMMIT` per entry. The floor is the least any durable
append must do: insert the row and upsert the head, with the payload JSON,
ids and timestamps precomputed and the sequence and parent tracked in Python.
Everything else the library does (validation, id and clock minting, JSON
encoding, reading the head and next sequence in the transaction) is its cost.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import orjson

import datagen
import harness
from harness import Section
from sessionforest import Forest
from sessionforest.ids import iso, new_id, utc_now

NAME = "append"
TARGET = 0.60  # library throughput >= 60% of the floor's

INSERT_ENTRY = datagen.INSERT_ENTRY
# The head move: same statement shape the library must issue.
UPSERT_HEAD = (
    "INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, ?) "
    "ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id, "
    "updated_at = excluded.updated_at"
)


def _sizes(quick: bool) -> tuple[int, int, int]:
    """(entries already in the store, appends per run, runs)."""
    return (20_000, 1_000, 5) if quick else (100_000, 5_000, 7)


def _library(template: Any, sid: str, payloads: list[dict[str, Any]]) -> dict[str, Any]:
    db = harness.copy_store(template, harness.WORK / "append-library.db")
    forest = Forest.open(db)
    append = forest.append
    latencies = [0] * len(payloads)
    clock = harness.clock_ns
    try:
        start = clock()
        for i, payload in enumerate(payloads):
            t0 = clock()
            append(sid, "user.message", payload)
            latencies[i] = clock() - t0
        total = clock() - start
        count = forest.session(sid).entry_count
    finally:
        forest.close()
        harness.remove_db(db)
    return {"total_ns": total, "latencies": latencies, "entries": count}


def _floor(
    template: Any, sid: str, head: str | None, count: int, bodies: list[str]
) -> dict[str, Any]:
    db = harness.copy_store(template, harness.WORK / "append-floor.db")
    conn = harness.raw_connect(db)
    n = len(bodies)
    ids = [new_id() for _ in range(n)]
    stamp = iso(utc_now())
    execute = conn.execute
    latencies = [0] * n
    clock = harness.clock_ns
    try:
        start = clock()
        for i in range(n):
            t0 = clock()
            execute("BEGIN IMMEDIATE")
            execute(
                INSERT_ENTRY,
                (
                    ids[i],
                    sid,
                    head,
                    count + i + 1,
                    2,
                    "user.message",
                    bodies[i],
                    "context",
                    stamp,
                    None,
                ),
            )
            execute(UPSERT_HEAD, (sid, ids[i], stamp))
            execute("COMMIT")
            latencies[i] = clock() - t0
            head = ids[i]
        total = clock() - start
        entries = execute(
            "SELECT COUNT(*) FROM session_entries WHERE session_id = ?", (sid,)
        ).fetchone()[0]
    finally:
        conn.close()
        harness.remove_db(db)
    return {"total_ns": total, "latencies": latencies, "entries": entries}


def run(quick: bool) -> Section:
    prefill, appends, runs = _sizes(quick)
    template = harness.WORK / "append-template.db"
    refs = datagen.build_store(
        template, prefill, {"target": datagen.Shape(200, 40, 3)}, concurrent=16, seed=3
    )
    target = refs["target"]
    rng = random.Random(5)
    payloads = [datagen.user_payload(rng, 180, 220) for _ in range(appends)]
    bodies = [orjson.dumps(p).decode() for p in payloads]

    sides: dict[str, Callable[[], dict[str, Any]]] = {
        "library": lambda: _library(template, target.sid, payloads),
        "floor": lambda: _floor(template, target.sid, target.head, target.count, bodies),
    }
    results = harness.interleaved(runs, sides)
    harness.remove_db(template)
    for side in results.values():
        for r in side:
            assert r["entries"] == target.count + appends, "an append went missing"

    def summary(side: str) -> tuple[float, float, float]:
        rs = results[side]
        per_s = harness.median([appends / (r["total_ns"] / 1e9) for r in rs])
        p50 = harness.median([harness.percentile(r["latencies"], 50) for r in rs])
        p99 = harness.median([harness.percentile(r["latencies"], 99) for r in rs])
        return per_s, p50, p99

    lib, floor = summary("library"), summary("floor")
    per_run = {side: [appends / (r["total_ns"] / 1e9) for r in rs] for side, rs in results.items()}
    return Section(
        name=NAME,
        title="1. Durable single append",
        summary=(
            f"{appends:,} appends per run of a ~200-character `user.message` into a session "
            f"of {target.count} entries in a store of {prefill:,} entries (a fresh copy per "
            f"run and side), one transaction each; {runs} runs per side. Library: "
            "`Forest.append(sid, 'user.message', payload)`. Floor: `BEGIN IMMEDIATE`; "
            "`INSERT` entry; head `INSERT ... ON CONFLICT DO UPDATE`; `COMMIT`, with "
            "precomputed payload JSON, ids and timestamp. Latency percentiles are per run, "
            "then the median over runs. Ratio = library throughput / floor throughput."
        ),
        rows=[
            *harness.append_rows(lib, floor, TARGET),
        ],
        notes=[
            "Per-run throughput (appends/s), library: "
            + ", ".join(f"{x:,.0f}" for x in per_run["library"])
            + "; floor: "
            + ", ".join(f"{x:,.0f}" for x in per_run["floor"])
            + f" ({harness.spread(per_run['library'], per_run['floor'])}).",
            "Throughput includes the WAL auto-checkpoints (with their fsyncs) that both "
            "sides trigger every ~1,000 pages; they dominate the tail and the mean, "
            "while p50 shows the per-append work.",
        ],
    )
