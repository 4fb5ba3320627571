"""PostgreSQL T1 with and without the newest-chats walk, paired query by query.

On a PostgreSQL store of the scaled Bridge corpus (bench_postgres.py builds them;
`--build COPIES` builds one here: 5 copies = 100k entries, 50 = 1M), every
labelled and common-word query is run with the walk (search.PostgresSearch._newest,
as shipped) and without it (every newest-match list read through the GIN index,
as before), alternating which goes first, each timed right after an untimed run
of itself. The two sides share the process, the store and the load, so the
ratio holds on a loaded machine where absolute times do not.

    .venv/bin/python benchmarks/pg_t1_pairs.py --build 50 postgresql://…/somedb
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import bench_search
import harness
import search_data
from bench_postgres import _copy
from sessionforest import Forest
from sessionforest.store.postgres import search as pg_search


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="a PostgreSQL store (a schema or database) to search")
    parser.add_argument("--build", type=int, help="build the scaled Bridge corpus there first")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    corpus = search_data.load_bridge()
    if args.build:
        path = harness.WORK / "pg-pairs.db"
        harness.WORK.mkdir(parents=True, exist_ok=True)
        harness.remove_db(path)
        search_data.build_scaled_bridge(path, corpus, args.build)
        _copy(path, args.url)
        harness.remove_db(path)
    queries = list(
        dict.fromkeys([q.query for q in corpus.queries] + list(bench_search.COMMON_QUERIES))
    )
    walk = pg_search.PostgresSearch._walk_pays

    def never(self: Any, matches: int, limit: int) -> bool:
        return False

    times: dict[str, dict[str, list[float]]] = {"walk": {}, "index": {}}
    with Forest.open(args.url, readonly=True) as forest:
        for r in range(args.rounds):
            for q in queries:
                for side in ("walk", "index") if r % 2 == 0 else ("index", "walk"):
                    pg_search.PostgresSearch._walk_pays = walk if side == "walk" else never  # type: ignore[method-assign]
                    forest.search_chats(q, now=corpus.now)
                    began = time.perf_counter()
                    forest.search_chats(q, now=corpus.now)
                    times[side].setdefault(q, []).append(time.perf_counter() - began)
    pg_search.PostgresSearch._walk_pays = walk  # type: ignore[method-assign]

    def p95(side: str) -> float:
        return harness.percentile([t for ts in times[side].values() for t in ts], 95) * 1000

    med = {s: {q: statistics.median(ts) for q, ts in times[s].items()} for s in times}
    ratios = sorted(med["walk"][q] / med["index"][q] for q in queries)
    print(f"T1 p95 over {len(queries)} queries x {args.rounds} rounds: walk {p95('walk'):.1f} ms, "
          f"index only {p95('index'):.1f} ms, ratio {p95('walk') / p95('index'):.2f}x")  # fmt: skip
    print(f"per-query median ratio walk/index: median {statistics.median(ratios):.2f}, "
          f"min {ratios[0]:.2f}, max {ratios[-1]:.2f}")  # fmt: skip
    for q in sorted(queries, key=lambda q: -med["walk"][q])[:5]:
        print(f"  {med['walk'][q] * 1000:6.1f} ms vs {med['index'][q] * 1000:6.1f} ms  {q}")


if __name__ == "__main__":
    main()
