"""Active path of a deep branch: `Forest.active_path` against a plain ordered select.

Both sides read the same session of the shared 1M-entry store (200k in quick
mode), whose rows are scattered among other sessions' inserts, on their own
connections with the same PRAGMAs, warmed by one untimed call each. The store
is written by raw SQL, so its active paths are first materialised by one
`move_head` to the head (what any append or move does). The floor is what
loading a list costs without any tree: one `SELECT` of the same columns by the
(session_id, sequence) index, `ORDER BY sequence LIMIT depth`, `fetchall()`:
as many rows, no walk, no Python objects beyond row tuples. The library
decodes payloads lazily, so a second pair of figures has both sides use every
message: the library reads `entry.payload`
of each entry, the floor `orjson.loads` each row's payload.

The SQLite store keeps the rows of each session's last whole path read in
memory (store/sqlite/paths.py, `PathCache`), so a warm call is served from it;
the "first read" rows drop that cache before every timed call: the
materialised path read from the file, as a newly opened store reads it.
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
# As many rows as the path has, in order, by the (session_id, sequence) index.
ORDERED = f"SELECT {COLUMNS} FROM session_entries WHERE session_id = ? ORDER BY sequence LIMIT ?"

DEPTHS = {"path-1k": 1_000, "path-10k": 10_000}


def floor_path(conn: sqlite3.Connection, sid: str, depth: int) -> list[tuple[Any, ...]]:
    return conn.execute(ORDERED, (sid, depth)).fetchall()


def floor_path_decoded(conn: sqlite3.Connection, sid: str, depth: int) -> list[Any]:
    loads = orjson.loads
    return [(row, loads(row[6])) for row in floor_path(conn, sid, depth)]


def library_path_used(forest: Forest, sid: str) -> list[Any]:
    return [entry.payload for entry in forest.active_path(sid)]


def library_first(forest: Forest, sid: str) -> list[Any]:
    harness.uncached(forest)
    return forest.active_path(sid)


def library_first_used(forest: Forest, sid: str) -> list[Any]:
    harness.uncached(forest)
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
            forest.move_head(sid, forest.head(sid))  # materialise the path
            # Warm both sides the same way; the same number of rows.
            lib_ids = [e.id for e in forest.active_path(sid)]
            floor_ids = [r[0] for r in floor_path(conn, sid, depth)]
            floor_path_decoded(conn, sid, depth)
            assert len(lib_ids) == len(floor_ids) == depth, "paths differ in length"

            calls: dict[str, Callable[[], object]] = {
                "library": lambda sid=sid: forest.active_path(sid),
                "floor": lambda sid=sid, depth=depth: floor_path(conn, sid, depth),
                "used": lambda sid=sid: library_path_used(forest, sid),
                "decoded": lambda sid=sid, depth=depth: floor_path_decoded(conn, sid, depth),
                "first": lambda sid=sid: library_first(forest, sid),
                "first_used": lambda sid=sid: library_first_used(forest, sid),
            }
            times = harness.hot_times(_runs(depth), calls)
            med = {k: harness.median(v) for k, v in times.items()}
            for label, lib, floor in (
                (f"depth {depth:,}", med["library"], med["floor"]),
                (f"depth {depth:,}, every payload used on both sides", med["used"], med["decoded"]),
                (f"depth {depth:,}, first read (path cache dropped)", med["first"], med["floor"]),
                (
                    f"depth {depth:,}, first read, every payload used",
                    med["first_used"],
                    med["decoded"],
                ),
            ):
                rows.append(
                    Row(
                        label,
                        harness.ms(lib),
                        harness.ms(floor),
                        harness.ratio(lib / floor),
                        f"<= {TARGET}x",
                        harness.verdict(lib / floor <= TARGET),
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
            "interleaved with other sessions' inserts), its path materialised. Floor: a plain "
            "ordered `SELECT` of as many rows of the session by the (session_id, sequence) "
            "index, same columns, `fetchall()`: no tree walk. "
            "Every timed call directly follows an untimed call of the same side (warm "
            "cache for both; see the note on page cache reclaim above). The plain rows are "
            "served from the store's in-memory path cache; the first-read rows drop it "
            "before each timed call and read the materialised path from the file."
        ),
        rows=rows,
        notes=notes,
    )
