"""Whether the word index should stem: the coding-agent set and Bridge, porter vs none.

    PYTHONPATH=src .venv/bin/python benchmarks/stemming.py porter|plain [locomo]

`plain` builds every store of the run with FTS5's unicode61 tokenizer alone (the
released migrations' tokenize string replaced in memory, the query side's
tokenizer with it), so "tokenizer" finds only "tokenizer"; `porter` is the
index as shipped ("tokenizer" also finds "token", "tokens", "tokenize").
Prints find's figures on benchmarks/data/coding_queries.json
(bench_coding_search.measure), Bridge recall@4 per class and, with `locomo`,
LoCoMo recall@1/@5/MRR. The figures and the decision are in docs/benchmarks.md
(section "Tool text in the index").
"""

from __future__ import annotations

import dataclasses
import sys

from sessionforest.store.sqlite import migrations
from sessionforest.store.sqlite.search import fts

PORTER = "porter unicode61 remove_diacritics 2"
PLAIN = "unicode61 remove_diacritics 2"


def main(mode: str, locomo: bool) -> None:
    if mode == "plain":
        migrations.MIGRATIONS = tuple(
            dataclasses.replace(m, sql=m.sql.replace(PORTER, PLAIN)) for m in migrations.MIGRATIONS
        )
        fts._shared[PORTER] = fts.Tokenizer(PLAIN)
    import bench_coding_search
    import bench_search
    import harness
    import search_data
    from sessionforest import Forest

    harness.WORK.mkdir(parents=True, exist_ok=True)
    outcomes, _ = bench_coding_search.measure(harness.WORK / f"stemming-{mode}.db")
    print(mode, "coding", bench_coding_search.figures(outcomes))
    corpus = search_data.load_bridge()
    db = harness.WORK / f"stemming-bridge-{mode}.db"
    harness.remove_db(db)
    forest = Forest.open(db, clock=lambda: corpus.now)
    try:
        search_data.store_bridge(forest, corpus)
        found = bench_search.bridge_quality(forest, corpus)
    finally:
        forest.close()
        harness.remove_db(db)
    per_class = {k: sum(o.at(4) for o in found if o.klass == k) for k in ("exact", "vague", "time")}
    print(mode, "bridge recall@4", per_class, "wrong", sum(o.confident_wrong for o in found))
    if locomo:
        lo = bench_search.locomo_quality(None)
        print(mode, "locomo r@1/r@5/MRR", lo.t1[0].figures(), "wrong", lo.confident_wrong)


if __name__ == "__main__":
    main(sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "locomo")
