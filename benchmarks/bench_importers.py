"""Importers: Claude Code and pi files scaled up from the real samples, against raw inserts.

The floor parses the same file and executemany-inserts exactly the rows the
library stored; memory is the peak RSS growth of a Claude Code import of a
small and a ~500 MB generated file in a fresh subprocess (see `run`).
"""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

import harness
from bench_import import _peak_rss, _reset_peak
from harness import Row, Section
from sessionforest import Forest

NAME = "importers"
TARGET = 0.50  # library entries/s >= 50% of the floor's
FLAT = 1.5  # peak RSS growth for the big file <= 1.5x the small file's
LINE_BOUND = 10  # peak RSS growth for one huge message <= 10x its line (see tests/io)

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "data"
CLAUDE_SOURCES = [
    "claude-code/real_projects/-Users-dain-workspace-coderabbit-review-helper/"
    "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl",
    "claude-code/real_projects/-src-deep-manifest/a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl",
    "claude-code/real_projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    "claude-code/real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl",
]
PI_SOURCE = "pi/before-compaction.jsonl"

INSERT_ENTRY = (
    "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
    "semantic_schema_version, kind, payload, context_visibility, created_at, stamp) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _sizes(quick: bool) -> tuple[int, tuple[int, int], int, int]:
    """(lines per timed file, (small, big) MiB for the memory check, runs per side,
    MiB of the one huge message)."""
    return (10_000, (16, 64), 3, 16) if quick else (60_000, (50, 500), 3, 60)


# --- sources ---------------------------------------------------------------------------


def _claude_lines(limit_lines: int | None, limit_bytes: int | None, out: Path) -> int:
    """Write a Claude Code file of the samples' main-thread records, copied with fresh
    uuids; each copy's roots hang below the previous copy's last record."""
    pool = [
        json.loads(line)
        for source in CLAUDE_SOURCES
        for line in (SAMPLES / source).read_text(encoding="utf-8").splitlines()
        if line.strip() and not json.loads(line).get("isSidechain")
    ]
    written = size = copy = 0
    last: str | None = None
    with out.open("wb") as fh:
        while True:
            for rec in pool:
                if (limit_lines and written >= limit_lines) or (
                    limit_bytes and size >= limit_bytes
                ):
                    return written
                rec = dict(rec)
                for key in ("uuid", "parentUuid", "logicalParentUuid"):
                    if rec.get(key):
                        rec[key] = f"{rec[key]}-{copy}"
                if "uuid" in rec and rec.get("parentUuid") is None and last is not None:
                    rec["parentUuid"] = last
                if "uuid" in rec:
                    last = rec["uuid"]
                line = orjson.dumps(rec) + b"\n"
                fh.write(line)
                written += 1
                size += len(line)
            copy += 1


def _huge_message(mib: int, out: Path) -> int:
    """Write a Claude Code sample whose first message is `mib` MiB of varied words (a
    pasted log); returns that line's size in bytes."""
    rng = random.Random(60)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 10)))
             for _ in range(50_000)]  # fmt: skip
    rows, size = [], 0
    while size < mib << 20:
        rows.append(" ".join(rng.choices(words, k=12)))
        size += len(rows[-1]) + 1
    lines = (SAMPLES / CLAUDE_SOURCES[0]).read_text(encoding="utf-8").splitlines()
    prompt = next(r for r in map(json.loads, lines) if r.get("type") == "user")
    pasted = {"role": "user", "content": [{"type": "text", "text": "\n".join(rows)}]}
    line = orjson.dumps({**prompt, "uuid": "pasted", "parentUuid": None, "message": pasted})
    out.write_bytes(b"\n".join([line, *(x.encode() for x in lines)]) + b"\n")
    return len(line)


def _pi_lines(limit_lines: int, out: Path) -> int:
    """Write a pi v1 file: the sample's header, then its entries repeated."""
    lines = (SAMPLES / PI_SOURCE).read_bytes().splitlines()
    header, entries = lines[0], [line for line in lines[1:] if line.strip()]
    with out.open("wb") as fh:
        fh.write(header + b"\n")
        for n in range(limit_lines):
            fh.write(entries[n % len(entries)] + b"\n")
    return limit_lines


# --- the two sides ---------------------------------------------------------------------


def _library(fmt: str, source: Path, db: Path) -> tuple[int, int]:
    harness.fresh_store(db)
    forest = Forest.open(db)
    try:
        start = harness.clock_ns()
        report = forest.import_chats(fmt, source)
        elapsed = harness.clock_ns() - start
    finally:
        forest.close()
    return elapsed, report.entries


def _stored(db: Path) -> tuple[tuple[Any, ...], tuple[Any, ...], list[tuple[Any, ...]]]:
    """The session row, head row and entry rows an import wrote, as the floor inserts them."""
    conn = harness.raw_connect(db)
    try:
        session = conn.execute(
            "SELECT id, title, harness, cwd, created_at, status, visibility FROM sessions"
        ).fetchone()
        head = conn.execute("SELECT session_id, active_entry_id, updated_at FROM session_heads")
        rows = conn.execute(
            "SELECT id, session_id, parent_entry_id, sequence, semantic_schema_version, kind, "
            "payload, context_visibility, created_at, stamp FROM session_entries ORDER BY sequence"
        ).fetchall()
        return session, head.fetchone(), rows
    finally:
        conn.close()


def _floor(source: Path, stored: Any, db: Path, parse: bool) -> tuple[int, int]:
    session, head, rows = stored
    harness.fresh_store(db)
    conn = harness.raw_connect(db)
    loads = orjson.loads

    def lockstep() -> Iterator[tuple[Any, ...]]:
        # One parsed source line per row, as a streaming importer would.
        it = iter(rows)
        with source.open("rb") as fh:
            for line in fh:
                if line.strip():
                    loads(line)
                    row = next(it, None)
                    if row is not None:
                        yield row
        yield from it

    try:
        start = harness.clock_ns()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO sessions(id, title, harness, cwd, created_at, status, visibility) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            session,
        )
        conn.executemany(INSERT_ENTRY, lockstep() if parse else rows)
        conn.execute(
            "INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id, "
            "updated_at = excluded.updated_at",
            head,
        )
        conn.execute("COMMIT")
        elapsed = harness.clock_ns() - start
    finally:
        conn.close()
    return elapsed, len(rows)


def _source(fmt: str, lines: int) -> Path:
    """The generated file, made again if it is missing: benchmark runs of other
    workloads clear benchmarks/.work when they finish, even while this one runs."""
    source = harness.WORK / f"importers-{fmt}.jsonl"
    if not source.exists():
        source.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "pi":
            _pi_lines(lines, source)
        else:
            _claude_lines(lines, None, source)
        source.read_bytes()  # into the OS cache before either side reads it
    return source


def _throughput(fmt: str, lines: int, runs: int) -> tuple[list[Row], list[str]]:
    db = harness.WORK / f"importers-{fmt}.db"
    _library(fmt, _source(fmt, lines), db)
    stored = _stored(db)
    count = len(stored[2])
    sides = {
        "library": lambda: _library(fmt, _source(fmt, lines), db),
        "floor": lambda: _floor(_source(fmt, lines), stored, db, parse=True),
        "insert only": lambda: _floor(_source(fmt, lines), stored, db, parse=False),
    }
    results = harness.interleaved(runs, sides)
    harness.remove_db(db)
    for name, side in results.items():
        assert all(n == count for _, n in side), f"{name} wrote another number of rows"
    rate = {name: [count / (ns / 1e9) for ns, _ in side] for name, side in results.items()}
    lib, floor, insert = (harness.median(rate[k]) for k in ("library", "floor", "insert only"))
    label = f"{fmt}: {count:,} entries ({harness.mib(_source(fmt, lines).stat().st_size)})"
    rows = [
        Row(f"{label}, throughput", harness.rate(lib, "entries"), harness.rate(floor, "entries"),
            f"{lib / floor:.0%}", f">= {TARGET:.0%}", harness.verdict(lib / floor >= TARGET)),
        Row(f"{fmt}: against inserting the rows only (no parsing)", harness.rate(lib, "entries"),
            harness.rate(insert, "entries"), f"{lib / insert:.0%}"),
    ]  # fmt: skip
    notes = [f"{fmt}: {harness.spread(rate['library'], rate['floor'])}."]
    return rows, notes


# --- memory: one fresh interpreter per file ---------------------------------------------


def _rss_child(source: Path, db: Path) -> None:
    import psutil

    harness.fresh_store(db)
    forest = Forest.open(db)
    before = psutil.Process().memory_info().rss
    reset = _reset_peak()
    start = time.perf_counter()
    report = forest.import_chats("claude-code", source)
    seconds = time.perf_counter() - start
    peak = _peak_rss()
    forest.close()
    harness.remove_db(db)
    out = {"before": before, "peak": peak, "reset": reset, "entries": report.entries}
    print(json.dumps({**out, "seconds": seconds}))


def _measure_rss(source: Path) -> dict[str, Any]:
    db = harness.WORK / "importers-rss.db"
    out = subprocess.run(
        [sys.executable, __file__, "--rss-child", str(source), str(db)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    result["growth"] = max(0, result["peak"] - result["before"])
    return result


# --- the workload ----------------------------------------------------------------------


def run(quick: bool) -> Section:
    lines, (small_mib, big_mib), runs, huge_mib = _sizes(quick)
    rows: list[Row] = []
    notes: list[str] = []
    for fmt in ("claude-code", "pi"):
        fmt_rows, fmt_notes = _throughput(fmt, lines, runs)
        rows += fmt_rows
        notes += fmt_notes
        _source(fmt, lines).unlink()

    memory: dict[int, dict[str, Any]] = {}
    for mib in (small_mib, big_mib):
        source = harness.WORK / f"importers-rss-{mib}.jsonl"
        source.parent.mkdir(parents=True, exist_ok=True)
        _claude_lines(None, mib << 20, source)
        memory[mib] = _measure_rss(source)
        memory[mib]["bytes"] = source.stat().st_size
        source.unlink()
    ratio = memory[big_mib]["growth"] / max(memory[small_mib]["growth"], 1)
    small, big = memory[small_mib], memory[big_mib]
    rows.append(
        Row(f"claude-code peak RSS growth, {harness.mib(small['bytes'])} -> "
            f"{harness.mib(big['bytes'])} file (library only)",
            f"{harness.mib(small['growth'])} -> {harness.mib(big['growth'])}", "—",
            harness.ratio(ratio), f"<= {FLAT}x (flat)", harness.verdict(ratio <= FLAT))
    )  # fmt: skip
    huge = harness.WORK / "importers-huge-message.jsonl"
    line = _huge_message(huge_mib, huge)
    one = _measure_rss(huge)
    huge.unlink()
    times = one["growth"] / line
    rows.append(
        Row(f"claude-code: one {harness.mib(line)} message, peak RSS growth (library only)",
            f"{harness.mib(one['growth'])}", "—", f"{times:.1f}x the line",
            f"<= {LINE_BOUND}x the line", harness.verdict(times <= LINE_BOUND))
    )  # fmt: skip
    notes.append(
        f"One {harness.mib(line)} message (the first of its chat, so it also opens the "
        f"search digest) imported in {one['seconds']:.1f} s: RSS before "
        f"{harness.mib(one['before'])}, peak {harness.mib(one['peak'])}. Before it was "
        "indexed outside SQL's JSON functions (issue 8), such a message took about 30x its line."
    )
    for m in memory.values():
        notes.append(
            f"{harness.mib(m['bytes'])} Claude Code file, {m['entries']:,} entries imported in "
            f"{m['seconds']:.1f} s ({m['entries'] / m['seconds']:,.0f} entries/s): RSS before "
            f"{harness.mib(m['before'])}, peak {harness.mib(m['peak'])}"
            + ("" if m["reset"] else " (peak is the process lifetime maximum)")
        )
    return Section(
        name=NAME,
        title="8. Importers (Claude Code, pi)",
        summary=(
            "`Forest.import_chats` of one long chat built from the real samples (Claude Code "
            "session files and pi's `before-compaction.jsonl`, repeated with fresh ids) into a "
            "fresh store, search-index triggers included, one transaction per chat. Floor: read "
            "the same file line by line, `orjson.loads` each line, one `executemany` INSERT of "
            "the very rows the library stored (plus session and head rows), one transaction, "
            "no mapping or validation; a second floor inserts the rows without reading the "
            f"file. {runs} runs per side, interleaved. Memory: peak RSS growth of a Claude Code "
            "import in a fresh subprocess, for a small and a large generated file, and for "
            "a file whose first message is one huge line of words."
        ),
        rows=rows,
        notes=notes,
    )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--rss-child":
        _rss_child(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        sys.exit(f"usage: {sys.argv[0]} --rss-child FILE.jsonl SCRATCH.db")
