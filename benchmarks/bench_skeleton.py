"""Tree skeleton of a 13,000-entry branched session: `Forest.skeleton` against one SELECT.

Both sides read the same session of the shared 1M-entry store (200k in quick
mode), its rows scattered among other sessions' inserts, on their own
connections with the same PRAGMAs, each warmed by one untimed call. The floor
is the very query the skeleton needs (ids, parents, sequence, kind,
visibility, schema version; no payloads) in sequence order with `fetchall()`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import datagen
import harness
from harness import Row, Section
from sessionforest import Forest, Node

NAME = "skeleton"
TARGET = 1.5  # library time <= 1.5x the floor's
RUNS = 31

SKELETON = (
    "SELECT id, parent_entry_id, sequence, kind, context_visibility, semantic_schema_version "
    "FROM session_entries WHERE session_id = ? ORDER BY sequence"
)


def floor_skeleton(conn: sqlite3.Connection, sid: str) -> list[tuple[Any, ...]]:
    return conn.execute(SKELETON, (sid,)).fetchall()


def run(quick: bool) -> Section:
    store = datagen.big_store(quick)
    ref = store.sessions["skeleton-13k"]
    forest = Forest.open(store.path)
    conn = harness.raw_connect(store.path)
    try:
        nodes = forest.skeleton(ref.sid)
        raw = floor_skeleton(conn, ref.sid)
        assert [n.id for n in nodes] == [r[0] for r in raw] and len(raw) == ref.count
        parents = [n.parent_id for n in nodes if n.parent_id is not None]
        forks = len(parents) - len(set(parents))
        calls: dict[str, Callable[[], object]] = {
            "library": lambda: forest.skeleton(ref.sid),
            "floor": lambda: floor_skeleton(conn, ref.sid),
            "nodes": lambda: list(map(Node._make, raw)),
        }
        times = harness.hot_times(RUNS, calls)
    finally:
        forest.close()
        conn.close()
    lib, floor, build = (harness.median(times[k]) for k in ("library", "floor", "nodes"))
    return Section(
        name=NAME,
        title="3. Tree skeleton",
        summary=(
            f"`forest.skeleton(sid)` of a {ref.count:,}-entry session ({forks} forks) in "
            f"the {store.total:,}-entry store. Floor: `{SKELETON}` with `fetchall()`. "
            f"{RUNS} timed runs per side, each right after an untimed call of the same side."
        ),
        rows=[
            Row(
                f"{ref.count:,} nodes",
                harness.ms(lib),
                harness.ms(floor),
                harness.ratio(lib / floor),
                f"<= {TARGET}x",
                harness.verdict(lib / floor <= TARGET),
            )
        ],
        notes=[
            f"{harness.spread(times['library'], times['floor'])}.",
            f"Library minus floor = {harness.ms(lib - floor)}; building the {ref.count:,} "
            f"`Node` objects alone, measured separately on the same rows, costs "
            f"{harness.ms(build)}.",
        ],
    )
