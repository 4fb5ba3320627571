"""Appends with indexing stay fast: `Forest.append` against raw SQL into the same index.

Both sides append the same alternating user/assistant messages (~200
characters drawn from a 20,000-word Zipf vocabulary, so every append adds real
postings) to the same chat of identical copies of an indexed store: the Bridge
corpus scaled to 100k entries (see `search_data.build_scaled_bridge`), one
`BEGIN IMMEDIATE` ... `COMMIT` per entry. The floor is the least a durable
indexed append must do: insert the row and upsert the head, with payload JSON,
ids and timestamps precomputed and the sequence and parent tracked in Python.
Since issue 15 the index is built behind the appends (store/sqlite/search/
catchup.py): an insert only notes its session as pending, and the word and
trigram rows, digest and activity span are written in batches: by the
store's maintenance thread once appends pause (store/sqlite/derived.py),
before any search, as a writer closes, and inside an append once its process has left
`derived.BOUND` (10,000) entries unindexed. So both sides run on the same
schema and end their run with what a search does first, one catch-up
transaction, timed into their total: the index work is identical and
everything else the library does (validation, id and clock minting, JSON
encoding, reading the head and next sequence, the materialised path) is its
cost. A third side, the floor on a copy whose pending trigger is dropped and
that never catches up, shows what the index costs (information only).

Search right after a burst: the first `search_session_entries` right after
`derived.BOUND` - 1 appends by the library without a pause (the most it
leaves for a search to index: the worst case, 1,999 in quick mode), and after
the same burst followed by a pause the background thread uses (`derived.QUIET`,
then until nothing is pending: what a search finds when the writer has paused
for a moment), each on a fresh copy.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

import harness
import search_data
from harness import Row, Section
from sessionforest import Forest
from sessionforest.ids import iso, new_id, utc_now
from sessionforest.store.sqlite import derived
from sessionforest.store.sqlite.search import catchup

PAUSE_DEADLINE = 120.0  # seconds a burst's background indexing may take before the run fails

NAME = "index_append"
TARGET = 0.60  # library throughput >= 60% of the floor's
SESSION = "target-00"  # a labelled Bridge chat of 100 entries, digest already filled

UPSERT_HEAD = (
    "INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, ?) "
    "ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id, "
    "updated_at = excluded.updated_at"
)


def _sizes(quick: bool) -> tuple[int, int, int]:
    """(copies of the 20k-entry corpus in the store, appends per run, runs)."""
    return (1, 600, 3) if quick else (5, 3_000, 7)


def _library(template: Path, items: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    db = harness.copy_store(template, harness.WORK / "index-append-library.db")
    forest = Forest.open(db)
    append = forest.append
    latencies = [0] * len(items)
    clock = harness.clock_ns
    try:
        start = clock()
        for i, (kind, payload) in enumerate(items):
            t0 = clock()
            append(SESSION, kind, payload)
            latencies[i] = clock() - t0
        forest._backend.catch_up()  # what a search does first
        total = clock() - start
        count = forest.session(SESSION).entry_count
        indexed = _indexed(forest.path)
    finally:
        forest.close()
        harness.remove_db(db)
    return {"total_ns": total, "latencies": latencies, "entries": count, "indexed": indexed}


def _burst(template: Path, items: list[tuple[str, dict[str, Any]]], pause: bool) -> float:
    """ns of the first search after len(items) appends by the library, right after
    them or once the background thread has indexed them (`pause`)."""
    db = harness.copy_store(template, harness.WORK / "index-append-burst.db")
    try:
        forest = Forest.open(db)
        try:
            for kind, payload in items:
                forest.append(SESSION, kind, payload)
            if pause:
                deadline = harness.clock_ns() + PAUSE_DEADLINE * 1e9
                while _pending(db):
                    assert harness.clock_ns() < deadline, "the background thread never caught up"
                    time.sleep(0.01)
            else:
                assert _pending(db), "the burst left nothing to index: not the worst case"
            t0 = harness.clock_ns()
            hits = forest.search_session_entries(SESSION, "the")
            elapsed = harness.clock_ns() - t0
            assert hits, "the search found nothing"
        finally:
            forest.close()
    finally:
        harness.remove_db(db)
    return elapsed


def _pending(path: Path) -> bool:
    conn = harness.raw_connect(path)
    try:
        return conn.execute("SELECT 1 FROM search_pending LIMIT 1").fetchone() is not None
    finally:
        conn.close()


def _floor(
    template: Path, name: str, kinds: list[str], bodies: list[str], *, drop_index: bool = False
) -> dict[str, Any]:
    db = harness.copy_store(template, harness.WORK / f"index-append-{name}.db")
    conn = harness.raw_connect(db)
    if drop_index:
        conn.execute("DROP TRIGGER search_entry_pending")
        harness.checkpoint(conn)
    head, count = conn.execute(
        "SELECT h.active_entry_id, (SELECT MAX(sequence) FROM session_entries "
        "WHERE session_id = h.session_id) FROM session_heads h WHERE h.session_id = ?",
        (SESSION,),
    ).fetchone()
    n = len(bodies)
    ids = [new_id() for _ in range(n)]
    stamp = iso(utc_now())
    execute = conn.execute
    latencies = [0] * n
    clock = harness.clock_ns
    try:
        start = clock()
        for i in range(n):
            t0 = clock()
            execute("BEGIN IMMEDIATE")
            execute(
                search_data.INSERT_ENTRY,
                (ids[i], SESSION, head, count + i + 1, kinds[i], bodies[i], stamp),
            )
            execute(UPSERT_HEAD, (SESSION, ids[i], stamp))
            execute("COMMIT")
            latencies[i] = clock() - t0
            head = ids[i]
        if not drop_index:
            execute("BEGIN IMMEDIATE")  # what a search does first: one catch-up
            catchup.catch_up(conn)
            execute("COMMIT")
        total = clock() - start
        entries = execute(
            "SELECT COUNT(*) FROM session_entries WHERE session_id = ?", (SESSION,)
        ).fetchone()[0]
    finally:
        conn.close()
    indexed = _indexed(db)
    harness.remove_db(db)
    return {"total_ns": total, "latencies": latencies, "entries": entries, "indexed": indexed}


def _indexed(path: Path) -> int:
    conn = harness.raw_connect(path)
    try:
        return int(
            conn.execute(
                "SELECT COUNT(*) FROM session_entry_fts WHERE session_id = ?", (SESSION,)
            ).fetchone()[0]
        )
    finally:
        conn.close()


def run(quick: bool) -> Section:
    copies, appends, runs = _sizes(quick)
    corpus = search_data.load_bridge()
    template = harness.WORK / "index-append-template.db"
    built = search_data.build_scaled_bridge(template, corpus, copies)
    rng = random.Random(7)
    lexicon = search_data.Lexicon(rng)
    kinds = [search_data.USER if i % 2 == 0 else search_data.ASSISTANT for i in range(appends)]
    texts = [lexicon.sentence(rng, 28, 40)[:220] for _ in range(appends)]
    items = [(kind, search_data.message(text)) for kind, text in zip(kinds, texts, strict=True)]
    bodies = [orjson.dumps(payload).decode() for _, payload in items]

    sides: dict[str, Callable[[], dict[str, Any]]] = {
        "library": lambda: _library(template, items),
        "floor": lambda: _floor(template, "floor", kinds, bodies),
        "unindexed": lambda: _floor(template, "unindexed", kinds, bodies, drop_index=True),
    }
    # The most a burst leaves for a search to index: BOUND - 1 (2,000 - 1 in quick mode).
    burst = (2_000 if quick else derived.BOUND) - 1
    burst_items = [items[i % len(items)] for i in range(burst)]
    try:
        results = harness.interleaved(runs, sides)
        bursts = harness.interleaved(
            3,
            {
                "right after": lambda: _burst(template, burst_items, False),
                "after a pause": lambda: _burst(template, burst_items, True),
            },
        )
    finally:
        harness.remove_db(template)
    after_burst = harness.median(bursts["right after"])
    after_pause = harness.median(bursts["after a pause"])
    before = corpus.entries_per_chat
    for side, rs in results.items():
        for r in rs:
            assert r["entries"] == before + appends, f"{side}: an append went missing"
            want = before + (0 if side == "unindexed" else appends)
            assert r["indexed"] == want, f"{side}: {r['indexed']} indexed, expected {want}"

    def summary(side: str) -> tuple[float, float, float]:
        rs = results[side]
        per_s = harness.median([appends / (r["total_ns"] / 1e9) for r in rs])
        p50 = harness.median([harness.percentile(r["latencies"], 50) for r in rs])
        p99 = harness.median([harness.percentile(r["latencies"], 99) for r in rs])
        return per_s, p50, p99

    lib, floor, bare = summary("library"), summary("floor"), summary("unindexed")
    per_run = {side: [appends / (r["total_ns"] / 1e9) for r in rs] for side, rs in results.items()}
    return Section(
        name=NAME,
        title="7. Appends with the search index",
        summary=(
            f"{appends:,} appends per run, alternating `user.message` and `assistant.message` "
            f"of ~200 characters, into a chat of {before} entries in an indexed store of "
            f"{built.entries:,} entries ({built.chats:,} chats; a fresh copy per run and side), "
            f"one transaction each; {runs} runs per side. Library: `Forest.append(sid, kind, "
            "payload)`, then one catch-up (what a search does first). Floor: `BEGIN IMMEDIATE`; "
            "`INSERT` entry; head `INSERT ... ON CONFLICT DO UPDATE`; `COMMIT`, with precomputed "
            "payload JSON, ids and timestamp, on the same schema, then one catch-up "
            "transaction: the same index work. Ratio = library throughput / floor throughput. "
            "Search rows: median of 3 fresh copies each."
        ),
        rows=[
            *harness.append_rows(lib, floor, TARGET),
            Row(
                "index cost: floor with vs without the index",
                harness.rate(floor[0], "appends"),
                harness.rate(bare[0], "appends"),
                f"{floor[0] / bare[0]:.0%}",
                "info",
            ),
            Row(
                f"first search right after a burst of {burst:,} appends "
                f"(all {burst:,} left to index: the bound, measured)",
                harness.ms(after_burst),
                "",
                "",
                "info",
            ),
            Row(
                f"first search after the same burst and a pause of {derived.QUIET * 1000:.0f} ms "
                "and its indexing (background thread)",
                harness.ms(after_pause),
                "",
                "",
                "p95 <= 50 ms",
                harness.verdict(after_pause <= 50e6),
            ),
        ],
        notes=[
            "Per-run throughput (appends/s), library: "
            + ", ".join(f"{x:,.0f}" for x in per_run["library"])
            + "; floor: "
            + ", ".join(f"{x:,.0f}" for x in per_run["floor"])
            + "; floor without the index: "
            + ", ".join(f"{x:,.0f}" for x in per_run["unindexed"])
            + f" ({harness.spread(per_run['library'], per_run['floor'])}, library/floor).",
            "Every run checks that each side stored every append and that the indexed sides "
            "indexed every one (and the unindexed side none).",
        ],
    )
