"""Active path of a deep branch: `Forest.active_path` against a plain recursive CTE.

Both sides read the same session of the shared 1M-entry store (200k in quick
mode), whose rows are scattered among other sessions' inserts, on their own
connections with the same PRAGMAs, warmed by one untimed call each. The floor
is one `WITH RECURSIVE` from the head via `parent_entry_id` returning the same
columns, `fetchall()` and reversed to root-first: it builds no Python objects
beyond row tuples. The library decodes payloads lazily, so a second pair of
figures has both sides use every message: the library reads `entry.payload`
of each entry, the floor `orjson.loads` each row's payload.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import orjson

import datagen
import harness
from harness import Row, Section
from sessionforest import Forest

NAME = "path"
TARGET = 1.5  # library time <= 1.5x the floor's

COLUMNS = (
    "id, session_id, parent_entry_id, sequence, semantic_schema_version, kind, payload, "
    "context_visibility, created_at, stamp"
)
# From the head to the root, one primary-key lookup per step.
PATH = f"""
WITH RECURSIVE path({COLUMNS}) AS (
    SELECT {COLUMNS} FROM session_entries
    WHERE id = (SELECT active_entry_id FROM session_heads WHERE session_id = ?)
    UNION ALL
    SELECT e.id, e.session_id, e.parent_entry_id, e.sequence, e.semantic_schema_version,
           e.kind, e.payload, e.context_visibility, e.created_at, e.stamp
    FROM session_entries e JOIN path ON e.id = path.parent_entry_id
)
SELECT {COLUMNS} FROM path
"""

DEPTHS = {"path-1k": 1_000, "path-10k": 10_000}


def floor_path(conn: sqlite3.Connection, sid: str) -> list[tuple[Any, ...]]:
    rows = conn.execute(PATH, (sid,)).fetchall()
    rows.reverse()
    return rows


def floor_path_decoded(conn: sqlite3.Connection, sid: str) -> list[Any]:
    loads = orjson.loads
    return [(row, loads(row[6])) for row in floor_path(conn, sid)]


def library_path_used(forest: Forest, sid: str) -> list[Any]:
    return [entry.payload for entry in forest.active_path(sid)]


def _runs(depth: int) -> int:
    return 31 if depth <= 1_000 else 15


def run(quick: bool) -> Section:
    store = datagen.big_store(quick)
    forest = Forest.open(store.path)
    conn = harness.raw_connect(store.path)
    rows: list[Row] = []
    notes: list[str] = []
    try:
        for name, depth in DEPTHS.items():
            sid = store.sessions[name].sid
            # Warm both sides the same way, and check they return the same path.
            lib_ids = [e.id for e in forest.active_path(sid)]
            floor_ids = [r[0] for r in floor_path(conn, sid)]
            floor_path_decoded(conn, sid)
            assert lib_ids == floor_ids and len(lib_ids) == depth, "paths differ"

            calls: dict[str, Callable[[], object]] = {
                "library": lambda sid=sid: forest.active_path(sid),
                "floor": lambda sid=sid: floor_path(conn, sid),
                "used": lambda sid=sid: library_path_used(forest, sid),
                "decoded": lambda sid=sid: floor_path_decoded(conn, sid),
            }
            times = harness.hot_times(_runs(depth), calls)
            lib, floor, used, decoded = (
                harness.median(times[k]) for k in ("library", "floor", "used", "decoded")
            )
            rows.append(
                Row(
                    f"depth {depth:,}",
                    harness.ms(lib),
                    harness.ms(floor),
                    harness.ratio(lib / floor),
                    f"<= {TARGET}x",
                    harness.verdict(lib / floor <= TARGET),
                )
            )
            rows.append(
                Row(
                    f"depth {depth:,}, every payload used on both sides",
                    harness.ms(used),
                    harness.ms(decoded),
                    harness.ratio(used / decoded),
                    f"<= {TARGET}x",
                    harness.verdict(used / decoded <= TARGET),
                )
            )
            notes.append(
                f"depth {depth:,}: {_runs(depth)} timed runs per side "
                f"({harness.spread(times['library'], times['floor'])}); the session has "
                f"{store.sessions[name].count:,} entries (side branches off the path)."
            )
    finally:
        forest.close()
        conn.close()
    return Section(
        name=NAME,
        title="2. Active path of a deep branch",
        summary=(
            f"`forest.active_path(sid)` in a {store.total:,}-entry store (built in "
            f"{store.build_s:.0f} s by raw executemany; the target sessions' rows are "
            "interleaved with other sessions' inserts). Floor: a plain `WITH RECURSIVE` "
            "from the head via `parent_entry_id` returning the same columns, `fetchall()`. "
            "Every timed call directly follows an untimed call of the same side (warm "
            "cache for both; see the note on page cache reclaim above)."
        ),
        rows=rows,
        notes=notes,
    )
