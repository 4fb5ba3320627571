"""Shared benchmark plumbing: timing, medians, store setup and the Markdown report.

Every workload compares the library with a hand-written sqlite3 floor run in
the same process, on a schema created by `Forest.open` (so both sides see the
same tables, indexes and triggers) and with the same PRAGMAs.
"""

from __future__ import annotations

import os
import platform
import shutil
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from sessionforest import Forest

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
WORK = BENCH_DIR / ".work"
REPORT = REPO / "docs" / "benchmarks.md"

# Exactly what `Forest.open(durability="normal")` sets on its connection.
PRAGMAS = (
    "PRAGMA busy_timeout = 30000",
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
)

clock_ns = time.perf_counter_ns


# --- stores ------------------------------------------------------------------------


def remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def fresh_store(path: Path) -> Path:
    """An empty store whose schema, indexes and triggers come from `Forest.open`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_db(path)
    Forest.open(path).close()
    return path


def raw_connect(path: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection with the library's PRAGMAs and explicit transactions."""
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in PRAGMAS:
        conn.execute(pragma)
    return conn


def checkpoint(conn: sqlite3.Connection) -> None:
    """Fold the WAL into the main file so every timed side starts from the same state."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def copy_store(template: Path, target: Path) -> Path:
    """Copy a checkpointed store and flush the copy to disk, so the first fsync of a
    timed run does not pay for writing back the whole copied file."""
    remove_db(target)
    shutil.copyfile(template, target)
    with target.open("rb+") as fh:
        os.fsync(fh.fileno())
    return target


# --- timing ------------------------------------------------------------------------


def time_ns(fn: Callable[[], object]) -> int:
    start = clock_ns()
    fn()
    return clock_ns() - start


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of `values`."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return float(ordered[rank - 1])


def interleaved(runs: int, sides: dict[str, Callable[[], Any]]) -> dict[str, list[Any]]:
    """Run every side `runs` times, rotating which goes first so drift hits all alike."""
    names = list(sides)
    results: dict[str, list[Any]] = {name: [] for name in names}
    for i in range(runs):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            results[name].append(sides[name]())
    return results


def uncached(forest: Any) -> None:
    """Drop a SQLite store's in-memory path cache (store/sqlite/paths.py): its next
    load reads the materialised path from the file, as a newly opened store does."""
    forest._store.derived.paths.clear()


def hot_times(runs: int, calls: dict[str, Callable[[], object]]) -> dict[str, list[int]]:
    """Interleaved wall times of read calls, each timed call right after an untimed one
    of the same call: hot-cache figures even where the OS reclaims cold page cache."""

    def side(fn: Callable[[], object]) -> Callable[[], int]:
        def timed() -> int:
            fn()
            return time_ns(fn)

        return timed

    return interleaved(runs, {name: side(fn) for name, fn in calls.items()})


# --- formatting --------------------------------------------------------------------


def ms(ns: float) -> str:
    return f"{ns / 1e6:,.2f} ms"


def us(ns: float) -> str:
    return f"{ns / 1e3:,.1f} µs"


def rate(per_second: float, unit: str) -> str:
    return f"{per_second:,.0f} {unit}/s"


def mib(size: float) -> str:
    return f"{size / 2**20:,.1f} MiB"


def ratio(value: float) -> str:
    return f"{value:.2f}x"


def spread(library: Sequence[float], floor: Sequence[float]) -> str:
    """The range of run-by-run ratios (runs are paired because sides are interleaved)."""
    ratios = [a / b for a, b in zip(library, floor, strict=True)]
    return f"run-by-run ratios {min(ratios):.2f}-{max(ratios):.2f}"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


# --- report ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    metric: str
    library: str
    floor: str
    ratio: str = ""
    target: str = ""
    result: str = ""


@dataclass(slots=True)
class Section:
    name: str
    title: str
    summary: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)  # Markdown lines after the notes

    @property
    def failed(self) -> bool:
        return any(row.result == "FAIL" for row in self.rows)


def append_rows(lib: Sequence[float], floor: Sequence[float], target: float) -> list[Row]:
    """Throughput (ratio against `target`), p50 and p99 rows for an append workload;
    each side is (appends/s, p50 ns, p99 ns)."""
    share = lib[0] / floor[0]
    return [
        Row(
            "throughput",
            rate(lib[0], "appends"),
            rate(floor[0], "appends"),
            f"{share:.0%}",
            f">= {target:.0%}",
            verdict(share >= target),
        ),
        Row("p50 latency", us(lib[1]), us(floor[1]), ratio(lib[1] / floor[1])),
        Row("p99 latency", us(lib[2]), us(floor[2]), ratio(lib[2] / floor[2])),
    ]


def _page_reclaim() -> str:
    """Whether DAMON proactively pages out cold memory (page cache included)."""
    try:
        kdamonds = int(Path("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds").read_text())
    except (OSError, ValueError):
        kdamonds = 0
    if kdamonds:
        return (
            f"DAMON proactive reclaim is active ({kdamonds} kdamond): cold page cache is "
            "paged out, so every timed read directly follows an untimed one of the same side"
        )
    return "no proactive reclaim detected"


def machine_facts() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f"{pages / 2**30:.1f} GiB"
    except (ValueError, OSError):
        memory = "unknown"
    return {
        "nproc": str(len(os.sched_getaffinity(0))),
        "cpu": cpu,
        "memory": memory,
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "orjson": orjson.__version__,
        "reclaim": _page_reclaim(),
        "load": "/".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def _table(rows: list[Row]) -> list[str]:
    out = [
        "| metric | library (median) | floor (median) | ratio | target | result |",
        "|---|---:|---:|---:|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r.metric} | {r.library} | {r.floor} | {r.ratio} | {r.target} | {r.result} |"
        )
    return out


_ANCHOR = '<a id="'


def _existing_sections(text: str) -> dict[str, str]:
    """The sections of an earlier report, keyed by anchor id, each as its Markdown."""
    found: dict[str, str] = {}
    parts = text.split("\n" + _ANCHOR)
    for part in parts[1:]:
        name = part.split('"', 1)[0]
        found[name] = _ANCHOR + part.rstrip("\n")
    return found


def _section_text(s: Section, stamp: str) -> str:
    lines = [f'<a id="{s.name}"></a>', "", f"## {s.title}", "", s.summary]
    if s.rows:  # a section may draw its own table instead (in `extra`)
        lines += ["", *_table(s.rows)]
    if s.notes:
        lines.append("")
        lines += [f"- {note}" for note in s.notes]
    lines += s.extra
    lines += ["", f"- measured: {stamp}"]
    return "\n".join(lines)


def write_report(
    sections: list[Section],
    *,
    command: str,
    started: datetime,
    elapsed_s: float,
    quick: bool,
    load_before: str,
    order: Sequence[str] = (),
) -> Path:
    """Rewrite the report: the sections of this run replace their earlier versions;
    sections not run this time are kept as they were (each says when it was measured)."""
    facts = machine_facts()
    stamp = (
        f"{started.astimezone(UTC):%Y-%m-%d %H:%M} UTC by `{command}`"
        + (" (quick mode: smaller sizes)" if quick else "")
        + f", load average before/after {load_before} / {facts['load']}"
    )
    kept = _existing_sections(REPORT.read_text(encoding="utf-8")) if REPORT.exists() else {}
    fresh = {s.name: _section_text(s, stamp) for s in sections}
    verdicts = {s.name: (s.title, "FAIL" if s.failed else "PASS") for s in sections}
    for name, text in kept.items():
        if name not in fresh:
            title = text.split("\n## ", 1)[1].split("\n", 1)[0] if "\n## " in text else name
            verdicts[name] = (title, "FAIL" if "| FAIL |" in text else "PASS")
    names = [n for n in order if n in fresh or n in kept]
    names += [n for n in (*fresh, *kept) if n not in names]
    lines = [
        "# Benchmarks",
        "",
        "Generated by `benchmarks/run.py`; do not edit by hand. A run rewrites the sections",
        "it ran and keeps the others; each section ends with when and how it was measured.",
        "Each workload times the library against a hand-written floor measured in the same",
        "run, on a schema created by `Forest.open` and with the same PRAGMAs. Figures are",
        "medians; sides are interleaved run by run.",
        "",
        "- reproduce everything: `.venv/bin/python benchmarks/run.py`; one workload:",
        "  `.venv/bin/python benchmarks/run.py --only NAME`",
        f"- machine: {facts['nproc']} cores ({facts['cpu']}), {facts['memory']} RAM, {facts['os']}",
        f"- python {facts['python']}, SQLite {facts['sqlite']}, orjson {facts['orjson']}",
        f"- page cache: {facts['reclaim']}",
        "",
        "## Summary",
        "",
        "| workload | result |",
        "|---|---|",
    ]
    for name in names:
        title, result = verdicts[name]
        lines.append(f"| [{title}](#{name}) | {result} |")
    for name in names:
        lines += ["", fresh.get(name) or kept[name]]
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return REPORT


@contextmanager
def index_only() -> Iterator[None]:
    """Stores opened inside search by the index alone (FOREST_SEMANTIC=off, read as a
    Forest opens). With the [semantic] extra installed a store otherwise embeds its
    entries on a background thread while the queries run, so which chats the leg
    knows, and the figures, would depend on the machine's load (bench_semantic.py
    measures the leg with every vector made)."""
    before = os.environ.get("FOREST_SEMANTIC")
    os.environ["FOREST_SEMANTIC"] = "off"
    try:
        yield
    finally:
        if before is None:
            del os.environ["FOREST_SEMANTIC"]
        else:
            os.environ["FOREST_SEMANTIC"] = before
