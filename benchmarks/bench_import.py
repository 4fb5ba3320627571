"""Native JSONL import: `Forest.import_jsonl` against a raw bulk insert of the same file.

The file is a branched session exported by `forest.export_jsonl`. Both sides
load it into a fresh store (schema from `Forest.open`, same PRAGMAs) in one
transaction, with the file already in the OS cache. The floor reads it line by
line, `orjson.loads` each line, re-serialises the payload (the column stores
JSON text) and executemany-inserts the rows plus the session and head rows,
validating nothing. Memory: a fresh subprocess per file size reports how far
the library import raises peak RSS above what the process held just before.
"""

from __future__ import annotations

import json
import resource
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

import datagen
import harness
from harness import Row, Section
from sessionforest import Forest

NAME = "import"
TARGET = 0.50  # library entries/s >= 50% of the floor's
FLAT = 1.5  # peak RSS growth for a 4x larger file <= 1.5x the smaller file's

INSERT_SESSION = (
    "INSERT INTO sessions(id, title, harness, cwd, created_at, status, visibility) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
# An upsert: a session row already made its head row (migration session_listing).
INSERT_HEAD = (
    "INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, ?) "
    "ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id, "
    "updated_at = excluded.updated_at"
)


def _sizes(quick: bool) -> tuple[int, tuple[int, int], int]:
    """(entries in the timed file, (small, large) files for the memory check, runs)."""
    return (20_000, (20_000, 80_000), 3) if quick else (100_000, (100_000, 400_000), 5)


def _shape(entries: int) -> datagen.Shape:
    """A spine forking 3 abandoned entries every 10 entries, `entries` in total."""
    spine = entries * 10 // 13
    while datagen.Shape(spine, 10, 3).total < entries:
        spine += 1
    return datagen.Shape(spine, 10, 3)


def make_export(entries: int, out: Path) -> int:
    """Build one branched session and export it with the library; returns its size."""
    db = harness.WORK / f"export-{entries}.db"
    shape = _shape(entries)
    refs = datagen.build_store(db, shape.total, {"export": shape}, concurrent=1, seed=17)
    with Forest.open(db) as forest, out.open("w", encoding="utf-8") as fh:
        written = forest.export_jsonl(refs["export"].sid, fh)
    harness.remove_db(db)
    return written


def _row(obj: dict[str, Any], sid: str) -> tuple[Any, ...]:
    stamp = obj["stamp"]
    return (
        obj["id"],
        sid,
        obj["parent_id"],
        obj["sequence"],
        obj["semantic_schema_version"],
        obj["kind"],
        orjson.dumps(obj["payload"]).decode(),
        obj["context_visibility"],
        obj["created_at"],
        orjson.dumps(stamp).decode() if stamp is not None else None,
    )


def floor_import(conn: sqlite3.Connection, path: Path) -> str:
    loads = orjson.loads
    with path.open("rb") as fh:
        header = loads(fh.readline())
        sid = header["id"]
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            INSERT_SESSION,
            (
                sid,
                header["title"],
                header["harness"],
                header["cwd"],
                header["created_at"],
                header["status"],
                header["visibility"],
            ),
        )
        rows = (_row(loads(line), sid) for line in fh if line.strip())
        conn.executemany(datagen.INSERT_ENTRY, rows)
        conn.execute(INSERT_HEAD, (sid, header["head"], header["created_at"]))
        conn.execute("COMMIT")
    return str(sid)


def _count(db: Path) -> int:
    conn = harness.raw_connect(db)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM session_entries").fetchone()[0])
    finally:
        conn.close()


def _library_run(source: Path) -> tuple[int, int]:
    db = harness.fresh_store(harness.WORK / "import-library.db")
    forest = Forest.open(db)
    try:
        elapsed = harness.time_ns(lambda: forest.import_jsonl(source))
    finally:
        forest.close()
    count = _count(db)
    harness.remove_db(db)
    return elapsed, count


def _floor_run(source: Path) -> tuple[int, int]:
    db = harness.fresh_store(harness.WORK / "import-floor.db")
    conn = harness.raw_connect(db)
    try:
        elapsed = harness.time_ns(lambda: floor_import(conn, source))
    finally:
        conn.close()
    count = _count(db)
    harness.remove_db(db)
    return elapsed, count


# --- memory: one fresh interpreter per file ------------------------------------------


def _peak_rss() -> int:
    """Peak RSS in bytes since the last reset (VmHWM), else the lifetime ru_maxrss."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _reset_peak() -> bool:
    """Linux: writing 5 to clear_refs resets VmHWM to the current RSS."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _rss_child(source: Path, db: Path) -> None:
    import psutil

    harness.fresh_store(db)
    forest = Forest.open(db)
    before = psutil.Process().memory_info().rss
    reset = _reset_peak()
    forest.import_jsonl(source)
    peak = _peak_rss()
    forest.close()
    harness.remove_db(db)
    print(json.dumps({"before": before, "peak": peak, "reset": reset}))


def measure_rss(source: Path) -> dict[str, Any]:
    db = harness.WORK / "import-rss.db"
    out = subprocess.run(
        [sys.executable, __file__, "--rss-child", str(source), str(db)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    result["growth"] = max(0, result["peak"] - result["before"])
    return result


# --- the workload --------------------------------------------------------------------


def run(quick: bool) -> Section:
    entries, (small, large), runs = _sizes(quick)
    source = harness.WORK / f"import-{entries}.jsonl"
    written = make_export(entries, source)
    source.read_bytes()  # into the OS cache before either side reads it

    sides: dict[str, Callable[[], tuple[int, int]]] = {
        "library": lambda: _library_run(source),
        "floor": lambda: _floor_run(source),
    }
    results = harness.interleaved(runs, sides)
    for side in results.values():
        assert all(count == written for _, count in side), "an import lost rows"
    per_run = {side: [written / (ns / 1e9) for ns, _ in rs] for side, rs in results.items()}
    lib, floor = harness.median(per_run["library"]), harness.median(per_run["floor"])
    share = lib / floor

    memory: dict[int, dict[str, Any]] = {}
    for size in (small, large):
        path = source if size == written else harness.WORK / f"import-{size}.jsonl"
        if path != source:
            make_export(size, path)
        memory[size] = measure_rss(path)
        if path != source:
            path.unlink()
    file_bytes = source.stat().st_size
    source.unlink()
    growth_ratio = memory[large]["growth"] / max(memory[small]["growth"], 1)

    return Section(
        name=NAME,
        title="4. Native JSONL import",
        summary=(
            f"`Forest.import_jsonl(path)` of a {written:,}-entry branched session "
            f"({harness.mib(file_bytes)} of native JSONL written by `forest.export_jsonl`) into "
            "a fresh store, all in one transaction. Floor: read the same file line by line, "
            "`orjson.loads`, re-serialise the payload, one `executemany` INSERT of the same "
            f"rows plus the session and head rows, one transaction. {runs} runs per side. "
            "Memory: peak RSS growth of the library import in a fresh subprocess per size."
        ),
        rows=[
            Row(
                "throughput",
                harness.rate(lib, "entries"),
                harness.rate(floor, "entries"),
                f"{share:.0%}",
                f">= {TARGET:.0%}",
                harness.verdict(share >= TARGET),
            ),
            Row(
                f"peak RSS growth, {small:,} -> {large:,} entries (library only)",
                f"{harness.mib(memory[small]['growth'])} -> {harness.mib(memory[large]['growth'])}",
                "—",
                harness.ratio(growth_ratio),
                f"<= {FLAT}x (flat)",
                harness.verdict(growth_ratio <= FLAT),
            ),
        ],
        notes=[
            f"Throughput: {harness.spread(per_run['library'], per_run['floor'])}.",
            *(
                f"{size:,} entries: RSS before import {harness.mib(m['before'])}, peak during "
                f"import {harness.mib(m['peak'])}"
                + ("" if m["reset"] else " (peak is the process lifetime maximum)")
                for size, m in memory.items()
            ),
        ],
    )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--rss-child":
        _rss_child(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        sys.exit(f"usage: {sys.argv[0]} --rss-child FILE.jsonl SCRATCH.db")
