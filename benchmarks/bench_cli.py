"""CLI wall time: `forest find`, `forest sessions` and `forest log` as a user runs them.

Each command is a fresh interpreter (what a shell runs), timed from spawn to
exit; the floor is `python -c pass` in the same interpreter, interleaved run
by run, medians. Two stores: a small one of real recordings (../shared/data,
imported by `forest import claude-code`) and one of 100,000 entries in 500
Claude Code chats (benchmarks/heavy_user.py's shapes). `forest find --deep`
asks a local stand-in (tests/standin.py) that answers every model turn after
20 ms; its row is the wall time minus the model's own time (`model_ms`).

    .venv/bin/python benchmarks/bench_cli.py [--before DIR] [--runs N] [--quick]

`--before` also measures another checkout's package (its `src/`, put first on
PYTHONPATH, with this interpreter), every side interleaved with this tree's in
the same run, so a loaded machine weighs on both alike; `run.py --only cli`
does the same with FOREST_BENCH_BEFORE=DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import harness
import heavy_user
from harness import Row, Section

sys.path.insert(0, str(harness.REPO / "tests"))
from standin import ProviderStandIn, Reply

NAME = "cli"
TARGET_MS = 120.0  # find, sessions, log: each at most this wall time (median)
DEEP_TARGET_MS = 300.0  # find --deep, outside the model's own time
MODEL_DELAY = 0.020  # seconds the stand-in takes per model turn
DATA = harness.REPO.parent / "shared" / "data" / "claude-code"
SMALL_SOURCES = (DATA / "ai-sessions", DATA / "real_projects")
HEAVY = (100_000, 500)  # entries, chats
QUICK_HEAVY = (10_000, 50)
# The CLI's entry point, as the console script runs it.
FOREST = "import sys; from sessionforest.cli.main import main; sys.argv[0] = 'forest'; main()"
# A find query of the heavy store's vocabulary, and one of the small store's chats.
FIND = {"small": "pomodoro timer", "heavy": "sqlite migration"}
# A query the gate is not sure of (a word every heavy chat shares): the model is asked.
DEEP = "the retry thing from last week"
# This tree's package, put first on PYTHONPATH: the child's environment is built from
# nothing, and the interpreter's own install may be another checkout's (an editable one).
SRC = harness.REPO / "src"


def _env(src: Path | None, db: Path, home: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "FOREST_DB": str(db),
        "FOREST_SEMANTIC": "off",
        "LANG": "C.UTF-8",
    }
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def forest(env: dict[str, str], *args: str, check: bool = True) -> str:
    out = subprocess.run(
        [sys.executable, "-c", FOREST, *args], env=env, capture_output=True, text=True
    )
    if check and out.returncode != 0:
        raise RuntimeError(f"forest {' '.join(args)} exited {out.returncode}: {out.stderr}")
    return out.stdout


def _wall_ms(argv: Sequence[str], env: dict[str, str]) -> float:
    start = time.perf_counter_ns()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter_ns() - start) / 1e6


def build_small(env: dict[str, str]) -> None:
    for source in SMALL_SOURCES:
        # A worker chat whose parent is not among them is reported, not fatal.
        forest(env, "import", "claude-code", str(source), check=False)


def write_heavy(home: Path, entries: int, chats: int) -> Path:
    """Claude Code chats under `home` (only that format: every version imports it)."""
    rng = random.Random(24)
    for index in range(chats):
        heavy_user.chat("claude-code", home, index, entries // chats, rng)
    return home / ".claude" / "projects"


def _largest(env: dict[str, str]) -> str:
    rows = json.loads(forest(env, "sessions", "--json"))
    sessions = rows["sessions"] if isinstance(rows, dict) else rows
    return str(max(sessions, key=lambda s: s["entry_count"])["id"])


def _stores(src: Path | None, work: Path, home: Path, projects: Path) -> dict[str, Path]:
    """The small and the heavy store, built by the version under `src`."""
    work.mkdir(parents=True, exist_ok=True)
    stores = {"small": work / "small.db", "heavy": work / "heavy.db"}
    build_small(_env(src, stores["small"], home))
    forest(_env(src, stores["heavy"], home), "import", "claude-code", str(projects))
    return stores


def measure(
    versions: dict[str, Path | None], work: Path, runs: int, quick: bool
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """{side: wall times in ms}, sides named "VERSION STORE COMMAND" (the floor:
    "python -c pass"), every side interleaved with every other run by run, then
    "VERSION deep"; and each store's entry count. `versions`: {name: its src/
    (None: this tree)}, this tree's first."""
    home = work / "home"
    shutil.rmtree(work, ignore_errors=True)
    home.mkdir(parents=True)
    projects = write_heavy(work / "heavy-src", *(QUICK_HEAVY if quick else HEAVY))
    floor = [sys.executable, "-c", "pass"]
    sides: dict[str, Callable[[], float]] = {
        "python -c pass": lambda: _wall_ms(floor, _env(None, work / "none.db", home))
    }
    sizes: dict[str, int] = {}
    heavy: dict[str, tuple[Path | None, Path]] = {}
    for version, src in versions.items():
        stores = _stores(src, work / version, home, projects)
        heavy[version] = (src, stores["heavy"])
        for name, db in stores.items():
            env = _env(src, db, home)
            listed = json.loads(forest(env, "sessions", "--json"))
            sessions = listed["sessions"] if isinstance(listed, dict) else listed
            sizes[name] = sum(s["entry_count"] for s in sessions)
            commands = {
                "forest find": ["find", FIND[name]],
                "forest sessions": ["sessions"],
                "forest log": ["log", _largest(env)],
            }
            for command, args in commands.items():
                argv = [sys.executable, "-c", FOREST, *args]
                _wall_ms(argv, env)  # warm the page cache and the bytecode
                sides[f"{version} {name} {command}"] = lambda a=argv, e=env: _wall_ms(a, e)
    times: dict[str, list[float]] = harness.interleaved(runs, sides)
    for version, (src, db) in heavy.items():
        times[f"{version} deep"] = _deep(src, db, home, runs)
    return times, sizes


def _deep(src: Path | None, db: Path, home: Path, runs: int) -> list[float]:
    """Wall time of `forest find --deep` minus the model's own time, per run."""
    standin = ProviderStandIn().start()
    standin.responder = lambda body: Reply(text='{"answer": null}', delay=MODEL_DELAY)
    env = _env(src, db, home) | standin.environ()
    argv = [sys.executable, "-c", FOREST, "find", "--deep", "--provider", "anthropic",
            "--model", "standin-model", "--json", DEEP]  # fmt: skip
    outside = []
    try:
        for i in range(runs + 1):
            asked = len(standin.requests)
            start = time.perf_counter_ns()
            out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
            wall = (time.perf_counter_ns() - start) / 1e6
            found: dict[str, Any] = json.loads(out.stdout)
            if len(standin.requests) == asked:
                raise RuntimeError(f"the model was not asked: {found.get('tier')}")
            if i:  # the first run warms the page cache
                outside.append(wall - float(found["model_ms"]))
    finally:
        standin.stop()
    return outside


def _rows(
    times: dict[str, list[float]], sizes: dict[str, int], versions: Sequence[str]
) -> list[Row]:
    """One row per store and command: this tree's median wall time, the floor, and
    the before version's median (when measured) in the ratio column."""
    now, before = versions[0], versions[1:]

    def was(side: str) -> str:
        return "; ".join(f"{v}: {statistics.median(times[f'{v} {side}']):.0f} ms" for v in before)

    floor = statistics.median(times["python -c pass"])
    rows = []
    for store in ("small", "heavy"):
        for command in ("forest find", "forest sessions", "forest log"):
            wall = statistics.median(times[f"{now} {store} {command}"])
            rows.append(Row(
                f"{command}, {store} store ({sizes[store]:,} entries)", f"{wall:.0f} ms",
                f"{floor:.0f} ms", was(f"{store} {command}"), f"<= {TARGET_MS:.0f} ms",
                harness.verdict(wall <= TARGET_MS),
            ))  # fmt: skip
    wall = statistics.median(times[f"{now} deep"])
    rows.append(Row(
        f"forest find --deep, heavy store, outside the model (stand-in: {MODEL_DELAY * 1000:.0f} "
        "ms a turn)", f"{wall:.0f} ms", "", was("deep"), f"< {DEEP_TARGET_MS:.0f} ms",
        harness.verdict(wall < DEEP_TARGET_MS),
    ))  # fmt: skip
    return rows


def run(quick: bool) -> Section:
    runs = 5 if quick else 11
    versions: dict[str, Path | None] = {"after": SRC}
    before = os.environ.get("FOREST_BENCH_BEFORE")  # another checkout's src/, measured alike
    if before:
        versions["before"] = Path(before)
    times, sizes = measure(versions, harness.WORK / "cli", runs, quick)
    shutil.rmtree(harness.WORK / "cli", ignore_errors=True)
    return Section(
        name=NAME,
        title="12. CLI wall time",
        summary=(
            "Each command in a fresh interpreter, spawn to exit (what a shell waits for), "
            "against `python -c pass`, every side interleaved with every other run by run; "
            f"{runs} runs per side, medians, FOREST_SEMANTIC=off. Small store: "
            "`forest import claude-code` of the real recordings in ../shared/data; heavy: "
            f"{sizes['heavy']:,} entries in Claude Code chats (heavy_user.py's shapes). "
            "`log` draws the largest chat."
        ),
        rows=_rows(times, sizes, list(versions)),
        notes=[
            "With FOREST_BENCH_BEFORE=DIR (another checkout's src/) that version builds its "
            "own stores and is measured in the same run, its medians in the ratio column "
            "(`benchmarks/bench_cli.py --before DIR` prints the same rows).",
            f"Load average when the section ended: {os.getloadavg()[0]:.1f} on "
            f"{os.cpu_count()} cores (the floor shows what it did to a bare interpreter).",
        ],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout's src/, measured alike")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--work", type=Path, default=harness.WORK / "cli")
    args = parser.parse_args()
    versions: dict[str, Path | None] = {"after": SRC}
    if args.before:
        versions["before"] = args.before
    times, sizes = measure(versions, args.work, args.runs, args.quick)
    for row in _rows(times, sizes, list(versions)):
        print(f"{row.metric}: {row.library} (floor {row.floor}; {row.ratio}) {row.result}")
    print(f"load average {os.getloadavg()[0]:.1f}")
    shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
