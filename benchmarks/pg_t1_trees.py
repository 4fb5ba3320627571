"""PostgreSQL T1 paired tree against tree: the same store searched by two source trees.

Each round runs one child process per tree (`PYTHONPATH=<tree>/src`), the two
alternating which goes first; a child searches every labelled and common-word
query of the scaled Bridge corpus (index only, as run.py measures), each timed
right after an untimed run of itself, and reports the times, the statements each
search sent (the store's statement tracer: load-independent) and what each
search shows. The parent pools the rounds: T1 p95 per tree, per-query median
ratios, statements per search, and whether both trees show the same hits,
snippets, landings and gate decisions for every query; and the CPU time a timed
search took in the client and in the store's server processes (read from /proc,
so with the server on this machine: less load-dependent than the wall clock).
Only the public API is used in the child, so any tree old enough to have
`Database.trace` will do.

    .venv/bin/python benchmarks/pg_t1_trees.py --before /path/to/old/tree postgresql://…/somedb
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def child(url: str) -> None:
    import psycopg

    import bench_search
    import harness
    import search_data
    from sessionforest import Forest

    corpus = search_data.load_bridge()
    queries = list(
        dict.fromkeys([q.query for q in corpus.queries] + list(bench_search.COMMON_QUERIES))
    )
    out: dict[str, Any] = {"times": {}, "statements": {}, "shown": {}, "cpu": [0.0, 0.0]}
    sent: list[str] = []
    with (
        harness.index_only(),
        Forest.open(url, readonly=True) as forest,
        psycopg.connect(url, autocommit=True) as monitor,
    ):
        db = forest._backend.db  # type: ignore[attr-defined]
        for q in queries:
            forest.search_chats(q, now=corpus.now)  # untimed, as the timed run's warm-up
            server = _server_cpu(monitor)  # read outside the timed span
            client = time.process_time()
            began = time.perf_counter()
            result = forest.search_chats(q, now=corpus.now)
            out["times"][q] = time.perf_counter() - began
            out["cpu"][0] += time.process_time() - client
            out["cpu"][1] += _server_cpu(monitor) - server
            sent.clear()
            db.trace(sent.append)
            try:
                forest.search_chats(q, now=corpus.now)
            finally:
                db.trace(None)
            out["statements"][q] = len(sent)
            hits = [
                (h.session_id, h.snippet, h.entry_id, h.sequence, h.active, round(h.score, 12))
                for h in result.hits
            ]
            out["shown"][q] = repr(
                (result.mode, result.confident, result.reason, result.detail, result.terms, hits)
            )
    json.dump(out, sys.stdout)


def _server_cpu(monitor: Any) -> float:
    """CPU seconds the server processes of the store's database have used but the
    `monitor` connection's own (read from /proc: the server on this machine; 0
    where it cannot be read)."""
    pids = [
        row[0]
        for row in monitor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
    ]
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def _run(tree: Path, url: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    done = subprocess.run(
        [sys.executable, __file__, "--child", url],
        env=env,
        cwd=HERE,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="a PostgreSQL store (benchmarks/pg_t1_pairs.py --build)")
    parser.add_argument("--before", type=Path, help="the tree to compare against (its src/)")
    parser.add_argument("--after", type=Path, default=HERE.parent, help="default: this tree")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.url)
        return
    if args.before is None:
        parser.error("--before is required")
    import harness

    trees = {"after": args.after, "before": args.before}
    times: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for r in range(args.rounds):
        for name in trees if r % 2 == 0 else list(trees)[::-1]:
            got = _run(trees[name], args.url)
            runs[name].append(got)
            for q, t in got["times"].items():
                times[name].setdefault(q, []).append(t)
    for name in trees:
        c = sorted(runs[name][0]["statements"].values())
        print(f"statements per search, {name}: median {statistics.median(c):.0f}, "
              f"max {c[-1]}, min {c[0]}, total {sum(c)} over {len(c)} queries")  # fmt: skip
    for name in trees:
        searches = sum(len(run["times"]) for run in runs[name])
        client = sum(run["cpu"][0] for run in runs[name]) / searches * 1000
        server = sum(run["cpu"][1] for run in runs[name]) / searches * 1000
        print(f"CPU per timed search, {name}: client {client:.2f} ms, server {server:.2f} ms")
    shown = {name: [run["shown"] for run in runs[name]] for name in trees}
    first = shown["before"][0]
    differ = sorted({q for s in (*shown["after"], *shown["before"]) for q in s if s[q] != first[q]})
    if differ:
        print(f"DIFFERENT results for {len(differ)} queries: {differ}")
    else:
        print(f"the same hits, snippets, landings and gate decisions, every run: {len(first)}")

    def p95(name: str) -> float:
        return harness.percentile([t for ts in times[name].values() for t in ts], 95) * 1000

    queries = list(times["after"])
    med = {n: {q: statistics.median(ts) for q, ts in times[n].items()} for n in trees}
    ratios = sorted(med["after"][q] / med["before"][q] for q in queries)
    a, b = p95("after"), p95("before")
    print(f"T1 p95 over {len(queries)} queries x {args.rounds} rounds: after {a:.1f} ms, "
          f"before {b:.1f} ms, ratio {a / b:.2f}x")  # fmt: skip
    print(f"per-query median ratio after/before: median {statistics.median(ratios):.2f}, "
          f"min {ratios[0]:.2f}, max {ratios[-1]:.2f}")  # fmt: skip
    print("slowest after:")
    for q in sorted(queries, key=lambda q: -med["after"][q])[:5]:
        print(f"  {med['after'][q] * 1000:6.1f} ms vs {med['before'][q] * 1000:6.1f} ms  {q}")


if __name__ == "__main__":
    main()
