"""Run the storage benchmarks and rewrite docs/benchmarks.md.

    .venv/bin/python benchmarks/run.py [--quick] [--only NAME[,NAME...]]

Each workload compares the library with a raw sqlite3 floor measured in the
same run (see harness.py); `--quick` uses smaller sizes to check the harness.
Scratch stores live in benchmarks/.work/ and are deleted at the end. Exits 1
when any workload misses its target, so CI can tell.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime

import bench_append
import bench_cli
import bench_coding_search
import bench_deep
import bench_harnesses
import bench_heavy
import bench_hostile
import bench_import
import bench_importers
import bench_index_append
import bench_listing
import bench_mirror
import bench_path
import bench_postgres
import bench_redact
import bench_search
import bench_semantic
import bench_server
import bench_skeleton
import bench_stamp
import bench_tooltext
import bench_ui
import datagen
import gate_calibration
import harness
import peers
from harness import Section

WORKLOADS: dict[str, Callable[[bool], Section]] = {
    bench_append.NAME: bench_append.run,
    bench_path.NAME: bench_path.run,
    bench_skeleton.NAME: bench_skeleton.run,
    bench_import.NAME: bench_import.run,
    bench_stamp.NAME: bench_stamp.run,
    bench_search.NAME: bench_search.run,
    bench_coding_search.NAME: bench_coding_search.run,
    bench_tooltext.NAME: bench_tooltext.run,
    bench_semantic.NAME: bench_semantic.run,
    gate_calibration.NAME: gate_calibration.run,
    bench_redact.NAME: bench_redact.run,
    bench_deep.NAME: bench_deep.run,
    bench_index_append.NAME: bench_index_append.run,
    bench_importers.NAME: bench_importers.run,
    bench_harnesses.NAME: bench_harnesses.run,
    bench_server.NAME: bench_server.run,
    bench_mirror.NAME: bench_mirror.run,
    bench_heavy.NAME: bench_heavy.run,
    bench_hostile.NAME: bench_hostile.run,
    peers.NAME: peers.run,
    bench_postgres.NAME: bench_postgres.run,
    bench_ui.NAME: bench_ui.run,
    bench_ui.DAILY: bench_ui.run_daily,
    bench_cli.NAME: bench_cli.run,
    bench_listing.NAME: bench_listing.run,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (under a minute)")
    parser.add_argument(
        "--only", metavar="NAME", help=f"comma-separated subset of: {', '.join(WORKLOADS)}"
    )
    args = parser.parse_args(argv)
    names = list(WORKLOADS)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in WORKLOADS]
        if unknown:
            parser.error(
                f"unknown workload {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}"
            )

    started = datetime.now(UTC)
    load_before = harness.machine_facts()["load"]
    t0 = time.perf_counter()
    harness.WORK.mkdir(parents=True, exist_ok=True)
    sections: list[Section] = []
    try:
        for name in names:
            t = time.perf_counter()
            print(f"[{name}] running...", flush=True)
            if name == "semantic":  # measures the leg on and off itself
                section = WORKLOADS[name](args.quick)
            else:
                # Every other workload measures sessionforest as installed without the
                # [semantic] extra, whether or not this environment has it.
                with harness.index_only():
                    section = WORKLOADS[name](args.quick)
            sections.append(section)
            for row in section.rows:
                print(
                    f"  {row.metric}: library {row.library}, floor {row.floor}, "
                    f"ratio {row.ratio} {row.target} {row.result}".rstrip(),
                    flush=True,
                )
            print(f"[{name}] done in {time.perf_counter() - t:.1f} s", flush=True)
    finally:
        datagen.drop_big_stores()
        shutil.rmtree(harness.WORK, ignore_errors=True)
    elapsed = time.perf_counter() - t0
    given = sys.argv[1:] if argv is None else argv
    command = " ".join([".venv/bin/python", "benchmarks/run.py", *given])
    report = harness.write_report(
        sections,
        command=command,
        started=started,
        elapsed_s=elapsed,
        quick=args.quick,
        load_before=load_before,
        order=list(WORKLOADS),
    )
    print(f"wrote {report.relative_to(harness.REPO)} ({elapsed:.0f} s)")
    return 1 if any(s.failed for s in sections) else 0


if __name__ == "__main__":
    sys.exit(main())
