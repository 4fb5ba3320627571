"""The harness importers: throughput per format against the native JSONL import floor, and a
heavy user's HOME (heavy_user.py) imported whole, then `find` on it.

Per format: one chat of the recordings' shapes (heavy_user.chat) imported with
`Forest.import_chats`; the floor is `Forest.import_jsonl` of the very entries
that import stored (exported as native JSONL), in the same run, interleaved;
ratio = format entries/s over native entries/s. The heavy user: `forest
import` of every format's files (a fresh subprocess, its peak RSS), then the
p95 of `Forest.search_chats` (what `forest find` runs) over queries drawn from the vocabulary.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import harness
import heavy_user
from harness import Row, Section
from sessionforest import Forest

NAME = "harnesses"
TARGET = 0.50
# opencode and cline have rows here only: heavy_user.MIX (the heavy user) leaves them out.
FORMATS = ("claude-code", "codex", "gemini", "copilot", "aider", "opencode", "cline")
CASS = (685_607, 1162.94)  # messages, seconds: one user's full index (cass issue #439)


def _one(fmt: str, records: int) -> Path:
    home = harness.WORK / f"harnesses-{fmt}"
    shutil.rmtree(home, ignore_errors=True)
    return heavy_user.chat(fmt, home, 1, records, random.Random(24))


def _format_import(fmt: str, source: Path, db: Path) -> tuple[int, int]:
    harness.fresh_store(db)
    with Forest.open(db) as forest:
        start = harness.clock_ns()
        report = forest.import_chats(fmt, source)
        return harness.clock_ns() - start, report.entries


def _native_import(native: Path, db: Path) -> tuple[int, int]:
    harness.fresh_store(db)
    with Forest.open(db) as forest:
        start = harness.clock_ns()
        sid = forest.import_jsonl(native)
        elapsed = harness.clock_ns() - start
        return elapsed, len(forest.entries(sid))


def _throughput(fmt: str, records: int, runs: int) -> tuple[Row, str]:
    source = _one(fmt, records)
    db = harness.WORK / f"harnesses-{fmt}.db"
    native = harness.WORK / f"harnesses-{fmt}.native.jsonl"
    _format_import(fmt, source, db)
    with Forest.open(db) as forest:
        (session,) = forest.sessions(include_hidden=True)
        with native.open("w", encoding="utf-8") as out:
            forest.export_jsonl(session.id, out)
    results = harness.interleaved(
        runs,
        {
            "format": lambda: _format_import(fmt, source, db),
            "native": lambda: _native_import(native, db),
        },
    )
    harness.remove_db(db)
    native.unlink()
    shutil.rmtree(harness.WORK / f"harnesses-{fmt}", ignore_errors=True)
    rate = {side: [n / (ns / 1e9) for ns, n in values] for side, values in results.items()}
    lib, floor = harness.median(rate["format"]), harness.median(rate["native"])
    count = results["format"][0][1]
    row = Row(
        f"{fmt}: one chat of {count:,} entries", harness.rate(lib, "entries"),
        harness.rate(floor, "entries"), f"{lib / floor:.0%}", f">= {TARGET:.0%}",
        harness.verdict(lib / floor >= TARGET),
    )  # fmt: skip
    return row, f"{fmt}: {harness.spread(rate['format'], rate['native'])}."


def _heavy_child(home: Path, db: Path) -> None:
    """In a fresh interpreter: import every format of `home`; print time, entries, peak RSS."""
    from bench_import import _peak_rss

    start = time.perf_counter()
    entries = chats = 0
    with Forest.open(db, background_index=False) as forest:
        reports = forest.import_everything()
        reports.append(forest.import_chats("aider", home / "repos"))
        for report in reports:
            entries += report.entries
            chats += len(report.chats)
            assert report.ok, [str(f) for f in report.failed][:3]
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "entries": entries, "chats": chats, "peak": _peak_rss()}))


def _heavy(entries: int, chats: int, queries: int) -> tuple[list[Row], list[str]]:
    home = harness.WORK / "harnesses-heavy"
    db = harness.WORK / "harnesses-heavy.db"
    shutil.rmtree(home, ignore_errors=True)
    harness.remove_db(db)
    made = time.perf_counter()
    written = heavy_user.generate(home, entries, chats)
    made = time.perf_counter() - made
    env = {"HOME": str(home), "FOREST_SEMANTIC": "off", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, __file__, "--heavy-child", str(home), str(db)],
        check=True, capture_output=True, text=True, env=env,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    rng = random.Random(7)
    with Forest.open(db, readonly=True) as forest:
        forest.search_chats("warm up the index")
        times = []
        for _ in range(queries):
            query = " ".join(rng.choices(heavy_user.WORDS, k=rng.randint(1, 3)))
            start = harness.clock_ns()
            forest.search_chats(query)
            times.append((harness.clock_ns() - start) / 1e6)
    shutil.rmtree(home, ignore_errors=True)
    harness.remove_db(db)
    times.sort()
    p95 = times[int(0.95 * (len(times) - 1))]
    rate = result["entries"] / result["seconds"]
    cass = CASS[0] / CASS[1]
    rows = [
        Row(f"heavy user: {result['entries']:,} entries in {result['chats']:,} chats, import",
            f"{result['seconds']:,.0f} s ({harness.rate(rate, 'entries')})",
            f"cass: {CASS[0]:,} messages in {CASS[1]:,.0f} s ({cass:,.0f}/s)",
            f"{rate / cass:.1f}x", "info"),
        Row("heavy user: peak RSS of the import", harness.mib(result["peak"]), "—", "", "info"),
        Row(f"heavy user: `find` p95 over {queries} queries", f"{p95:.1f} ms", "—", "", "info"),
    ]  # fmt: skip
    notes = [
        f"Heavy user's HOME generated in {made:.0f} s: "
        + ", ".join(f"{n:,} {fmt}" for fmt, n in written.items())
        + " chats (benchmarks/heavy_user.py; the shapes of the recordings, fresh ids and words).",
        f"find latencies (ms): median {harness.median(times):.1f}, max {times[-1]:.1f}.",
        "cass's figure is one user's full index on their own machine (its issue #439), "
        "given for context only: not the same data, machine or work.",
    ]
    return rows, notes


def run(quick: bool) -> Section:
    records, runs = (2_000, 3) if quick else (20_000, 3)
    entries, chats, queries = (20_000, 100, 40) if quick else (1_000_000, 5_000, 200)
    rows, notes = [], []
    for fmt in FORMATS:
        row, note = _throughput(fmt, records, runs)
        rows.append(row)
        notes.append(note)
    heavy_rows, heavy_notes = _heavy(entries, chats, queries)
    return Section(
        name=NAME,
        title="11. Harness importers and a heavy user's history",
        summary=(
            "Per format: `Forest.import_chats` of one chat written in that harness's shapes "
            "(benchmarks/heavy_user.py: the recordings' records repeated with fresh ids and "
            "words) into a fresh store, against `Forest.import_jsonl` of the very entries it "
            f"stored (the native JSONL import), interleaved, {runs} runs per side. Heavy user: "
            f"{entries:,} entries over {chats:,} chats across the formats, imported with "
            "`import_everything` (+ aider) in a fresh subprocess (its peak RSS), then "
            "`Forest.search_chats` (what `forest find` runs) over queries of 1-3 words "
            "from the generator's vocabulary."
        ),
        rows=rows + heavy_rows,
        notes=notes + heavy_notes,
    )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--heavy-child":
        _heavy_child(Path(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--format" and sys.argv[2] in FORMATS:
        print(*_throughput(sys.argv[2], 20_000, 3), sep="\n")  # one format's row, alone
    else:
        usage = f"usage: {sys.argv[0]} --heavy-child HOME SCRATCH.db | --format FMT"
        sys.exit(f"{usage}\n  FMT: {' | '.join(FORMATS)} (one format's row, 20,000 records)")
