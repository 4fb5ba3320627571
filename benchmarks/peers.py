"""The stores agent builders use today, side by side with sessionforest in one run.

Each store appends the same 2,000 messages of ~500 bytes one at a time (one
call, one transaction each), then loads the whole history; medians of RUNS
runs, a fresh file per run, the stores interleaved. Stores:

- sessionforest at both durabilities (`Forest.append`; its index work waits
  for the appends to pause, store/sqlite/derived.py: right after the
  burst it is done at once, as a search would, and timed apart, the "with the
  index work it deferred" row; load: `active_path` with every payload
  decoded, as an agent reads it, served from the store's in-memory path cache
  when warm, and timed once more with that cache dropped before each call:
  the first read of a newly opened store);
- OpenAI Agents `SQLiteSession` and `AdvancedSQLiteSession` (package
  `openai-agents`; `add_items([item])`, `get_items()`; WAL, synchronous FULL,
  SQLite's default), driven from one event loop as an agent would;
- raw sqlite3 floors: the same entry row and head upsert per transaction,
  precomputed, without and with one FTS5 row per append, at NORMAL and FULL.

Branch: sessionforest appends below an entry of the active path of a
100,000-entry session (20 branch points from the head down to the root);
`AdvancedSQLiteSession.create_branch_from_turn` copies the 2,000-message
history up to the middle turn. Tail: the last 20 messages at 2,000 and at
100,000 entries (`active_path(limit=20)`, `get_items(limit=20)`).

Through each framework's own runner (peers_frameworks.py): a 20-turn
`Runner.run` conversation with `ForestSession` against `SQLiteSession` (time
per turn, what is stored), and LangGraph's `ForestSaver` against
`SqliteSaver` (put and get per step, `list` at 1,000 checkpoints). llm's log
database is not measured: llm logs a prompt/response pair through a model's
`Response` object (no message append to time without a model). The peers are
benchmark-only dependencies (benchmarks/requirements-peers.txt):

    .venv/bin/pip install -r benchmarks/requirements-peers.txt
    .venv/bin/python benchmarks/run.py --only peers
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

import harness
import peers_frameworks as frameworks
from harness import Row, Section
from sessionforest import Forest
from sessionforest.ids import iso, new_id, utc_now

NAME = "peers"
RUNS = 5
LOAD_CALLS = 9  # timed loads per store and run (the load figures are short: more samples)
TAIL = 20
BRANCH_POINTS = 20

# Targets (issue 15), each against a figure of the same run.
DEFAULT_VS_FLOOR = 0.60  # default durability >= 60% of the raw floor without FTS (NORMAL)
FULL_VS_SESSION = 1.5  # full durability >= 1.5x SQLiteSession appends/s
LOAD_VS_SESSION = 0.7  # load 2,000 <= 0.7x SQLiteSession.get_items()
BRANCH_MS = 1.0  # branch creation < 1 ms at 100,000 entries

FLOOR_SCHEMA = (
    "CREATE TABLE entries (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, parent TEXT, "
    "sequence INTEGER NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL, "
    "created_at TEXT NOT NULL)",
    "CREATE INDEX entries_sequence ON entries(session_id, sequence)",
    "CREATE TABLE heads (session_id TEXT PRIMARY KEY, head TEXT, updated_at TEXT)",
    "CREATE VIRTUAL TABLE entries_fts USING fts5(text, tokenize = 'porter unicode61')",
)
FLOOR_INSERT = "INSERT INTO entries VALUES (?, ?, ?, ?, 'user.message', ?, ?)"
FLOOR_HEAD = (
    "INSERT INTO heads VALUES (?, ?, ?) ON CONFLICT(session_id) DO UPDATE "
    "SET head = excluded.head, updated_at = excluded.updated_at"
)
FLOOR_FTS = "INSERT INTO entries_fts(rowid, text) VALUES (?, ?)"


def _texts(n: int, seed: int = 15) -> list[str]:
    rng = random.Random(seed)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(3000)]
    out = []
    for _ in range(n):
        text = ""
        while len(text) < 470:
            text += rng.choice(words) + " "
        out.append(text.strip())
    return out


def _payload(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def _fresh(name: str) -> Path:
    path = harness.WORK / name
    harness.remove_db(path)
    return path


def _warm(
    fn: Callable[[], object], runs: int = LOAD_CALLS, before: Callable[[], object] | None = None
) -> float:
    """Median ns of `runs` calls, each after an untimed one (warm caches on every side)
    and, if given, an untimed `before`."""
    times = []
    for _ in range(runs):
        fn()
        if before is not None:
            before()
        times.append(harness.time_ns(fn))
    return harness.median(times)


def _rate_p50(latencies: list[int]) -> tuple[float, float]:
    return len(latencies) / (sum(latencies) / 1e9), harness.percentile(latencies, 50)


# --- sessionforest ------------------------------------------------------------------


def _forest(texts: list[str], durability: str) -> dict[str, float]:
    path = _fresh(f"peers-forest-{durability}.db")
    forest = Forest.open(path, durability=durability)
    try:
        sid = forest.create_session("peers")
        clock = harness.clock_ns
        lat = []
        for text in texts:
            t0 = clock()
            forest.append(sid, "user.message", _payload(text))
            lat.append(clock() - t0)
        # The index work the burst left for later (store/sqlite/derived.py), done at
        # once: what a search right after it, or the maintenance thread once appends
        # pause, does.
        t0 = clock()
        forest._backend.catch_up()
        deferred = clock() - t0
        # Untimed: the path packed into chunks, as the maintenance thread does once the
        # appends pause (or the writer's close), so a first read finds what a history an
        # earlier process wrote has.
        forest.maintain()
        assert forest.maintenance_idle()
        load = _warm(lambda: [e.payload for e in forest.active_path(sid)])
        assert len(forest.active_path(sid)) == len(texts)

        # The cache is dropped before the clock starts: freeing the rows the last
        # read left (0.2-0.4 ms of CPU) is no part of a new process's first read.
        first = _warm(
            lambda: [e.payload for e in forest.active_path(sid)],
            before=lambda: harness.uncached(forest),
        )
        tail = _warm(lambda: [e.payload for e in forest.active_path(sid, limit=TAIL)])
    finally:
        forest.close()
        harness.remove_db(path)
    per_s, p50 = _rate_p50(lat)
    indexed = len(lat) / ((sum(lat) + deferred) / 1e9)
    return {
        "per_s": per_s,
        "p50": p50,
        "load": load,
        "first": first,
        "tail": tail,
        "indexed_per_s": indexed,
    }


def _forest_deep(size: int) -> dict[str, float]:
    """Branch creation and a tail load in a session of `size` entries."""
    path = _fresh("peers-forest-deep.db")
    forest = Forest.open(path)
    try:
        sid = forest.create_session("deep")
        chunk = [("user.message", _payload("history " * 60), None)] * 1000
        ids: list[str] = []
        for _ in range(size // 1000):
            ids += [e.id for e in forest.append_many(sid, chunk)]
        tail = _warm(lambda: [e.payload for e in forest.active_path(sid, limit=TAIL)])
        # From the head down to the root: each point is on the active path.
        points = [ids[int((len(ids) - 2) * (1 - i / BRANCH_POINTS))] for i in range(BRANCH_POINTS)]
        times = []
        for point in points:
            t0 = harness.clock_ns()
            forest.append(sid, "user.message", _payload("a branch"), parent=point)
            times.append(harness.clock_ns() - t0)
        assert [e.id for e in forest.active_path(sid)][:-1][-1] == points[-1]
    finally:
        forest.close()
        harness.remove_db(path)
    return {"branch": harness.median(times), "branch_max": max(times), "tail": tail}


# --- OpenAI Agents ------------------------------------------------------------------


def _agents(texts: list[str], advanced: bool) -> dict[str, float]:
    from agents import SQLiteSession
    from agents.extensions.memory.advanced_sqlite_session import AdvancedSQLiteSession

    path = _fresh(f"peers-agents-{int(advanced)}.db")
    loop = asyncio.new_event_loop()
    session: Any = (
        AdvancedSQLiteSession(session_id="peers", db_path=path, create_tables=True)
        if advanced
        else SQLiteSession("peers", path)
    )
    try:
        run = loop.run_until_complete
        clock = harness.clock_ns
        lat = []
        for text in texts:
            item = {"role": "user", "content": text}
            t0 = clock()
            run(session.add_items([item]))
            lat.append(clock() - t0)
        load = _warm(lambda: run(session.get_items()))
        assert len(run(session.get_items())) == len(texts)
        tail = _warm(lambda: run(session.get_items(limit=TAIL)))
        branch = float("nan")
        if advanced:
            t0 = clock()
            run(session.create_branch_from_turn(len(texts) // 2))
            branch = clock() - t0
    finally:
        session.close()
        loop.close()
        harness.remove_db(path)
    per_s, p50 = _rate_p50(lat)
    return {"per_s": per_s, "p50": p50, "load": load, "tail": tail, "branch": branch}


# --- raw floors ---------------------------------------------------------------------


def _floor(texts: list[str], synchronous: str, fts: bool) -> dict[str, float]:
    path = _fresh(f"peers-floor-{synchronous}-{int(fts)}.db")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    for sql in FLOOR_SCHEMA:
        conn.execute(sql)
    bodies = [orjson.dumps(_payload(t)).decode() for t in texts]
    ids = [new_id() for _ in texts]
    stamp = iso(utc_now())
    execute = conn.execute
    clock = harness.clock_ns
    lat = []
    head = None
    try:
        for i, body in enumerate(bodies):
            t0 = clock()
            execute("BEGIN IMMEDIATE")
            execute(FLOOR_INSERT, (ids[i], "s", head, i + 1, body, stamp))
            if fts:
                execute(FLOOR_FTS, (i + 1, texts[i]))
            execute(FLOOR_HEAD, ("s", ids[i], stamp))
            execute("COMMIT")
            lat.append(clock() - t0)
            head = ids[i]
    finally:
        conn.close()
        harness.remove_db(path)
    per_s, p50 = _rate_p50(lat)
    return {"per_s": per_s, "p50": p50}


# --- the run --------------------------------------------------------------------------


def run(quick: bool) -> Section:
    count = 500 if quick else 2_000
    deep = 20_000 if quick else 100_000
    texts = _texts(count)
    stores: dict[str, Callable[[], dict[str, float]]] = {
        "sessionforest, default (WAL, synchronous=NORMAL)": lambda: _forest(texts, "normal"),
        'sessionforest, `durability="full"`': lambda: _forest(texts, "full"),
        "OpenAI Agents `SQLiteSession`": lambda: _agents(texts, False),
        "OpenAI Agents `AdvancedSQLiteSession`": lambda: _agents(texts, True),
        "raw sqlite3 floor, no full-text index, NORMAL": lambda: _floor(texts, "NORMAL", False),
        "raw sqlite3 floor, no full-text index, FULL": lambda: _floor(texts, "FULL", False),
        "raw sqlite3 floor, one FTS5 row per append, NORMAL": lambda: _floor(texts, "NORMAL", True),
        "raw sqlite3 floor, one FTS5 row per append, FULL": lambda: _floor(texts, "FULL", True),
    }
    results = harness.interleaved(RUNS, stores)
    deep_runs = [_forest_deep(deep) for _ in range(RUNS)]

    def med(store: str, key: str) -> float:
        return harness.median([r[key] for r in results[store] if key in r])

    names = list(stores)
    sf, sf_full, sess, adv, floor_n, _floor_f, fts_n, _fts_f = names
    table = [
        "",
        f"| store | append/s | p50 | load {count:,} | tail {TAIL} | branch |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        load = harness.ms(med(name, "load")) if "load" in results[name][0] else ""
        tail = harness.ms(med(name, "tail")) if "tail" in results[name][0] else ""
        branch = ""
        if name == adv:
            branch = f"{harness.ms(med(name, 'branch'))} (copy at {count:,})"
        elif name in (sf, sf_full):
            branch = f"{harness.ms(harness.median([r['branch'] for r in deep_runs]))} at {deep:,}"
        table.append(
            f"| {name} | {med(name, 'per_s'):,.0f} | {harness.us(med(name, 'p50'))} | {load} "
            f"| {tail} | {branch} |"
        )
    branch = harness.median([r["branch"] for r in deep_runs])
    deep_tail = harness.median([r["tail"] for r in deep_runs])
    share = med(sf, "per_s") / med(floor_n, "per_s")
    speedup = med(sf_full, "per_s") / med(sess, "per_s")
    rows = [
        Row(
            "appends/s, default vs raw floor without FTS (NORMAL)",
            harness.rate(med(sf, "per_s"), "appends"),
            harness.rate(med(floor_n, "per_s"), "appends"),
            f"{share:.0%}",
            f">= {DEFAULT_VS_FLOOR:.0%}",
            harness.verdict(share >= DEFAULT_VS_FLOOR),
        ),
        Row(
            "appends/s, default, with the index work it deferred vs raw floor with one FTS5 "
            "row per append (NORMAL)",
            harness.rate(med(sf, "indexed_per_s"), "appends"),
            harness.rate(med(fts_n, "per_s"), "appends"),
            harness.ratio(med(sf, "indexed_per_s") / med(fts_n, "per_s")),
            "info",
        ),
        Row(
            "appends/s, full durability vs `SQLiteSession`",
            harness.rate(med(sf_full, "per_s"), "appends"),
            harness.rate(med(sess, "per_s"), "appends"),
            f"{speedup:.2f}x",
            f">= {FULL_VS_SESSION}x",
            harness.verdict(speedup >= FULL_VS_SESSION),
        ),
        *(
            Row(
                f"load {count:,}{how} vs `SQLiteSession.get_items()`",
                harness.ms(med(sf, key)),
                harness.ms(med(sess, "load")),
                harness.ratio(med(sf, key) / med(sess, "load")),
                f"<= {LOAD_VS_SESSION}x",
                harness.verdict(med(sf, key) / med(sess, "load") <= LOAD_VS_SESSION),
            )
            for how, key in (("", "load"), (", first read (path cache dropped)", "first"))
        ),
        Row(
            f"branch creation at {deep:,} entries (floor: `AdvancedSQLiteSession` copy)",
            harness.ms(branch),
            harness.ms(med(adv, "branch")),
            harness.ratio(branch / med(adv, "branch")),
            f"< {BRANCH_MS:g} ms",
            harness.verdict(branch < BRANCH_MS * 1e6),
        ),
        Row(
            f"tail of {TAIL}: at {deep:,} entries vs at {count:,}",
            harness.ms(deep_tail),
            harness.ms(med(sf, "tail")),
            harness.ratio(deep_tail / med(sf, "tail")),
            "proportional to N",
        ),
    ]
    framework_rows, framework_wins, framework_note = _frameworks(quick)
    rows += framework_rows
    wins = [
        f"{name} ({med(name, 'per_s'):,.0f}/s)"
        for name in (sess, adv)
        if med(name, "per_s") > med(sf_full, "per_s")
    ]
    if med(sess, "load") < med(sf, "load"):
        wins.append(f"`SQLiteSession` loads faster ({harness.ms(med(sess, 'load'))})")
    if med(sess, "load") < med(sf, "first"):
        wins.append(
            f"`SQLiteSession.get_items()` ({harness.ms(med(sess, 'load'))}) beats "
            f"sessionforest's first read of a newly opened store ({harness.ms(med(sf, 'first'))})"
        )
    return Section(
        name=NAME,
        title="Peers: the stores agent builders use today",
        summary=(
            f"{count:,} messages of ~500 bytes appended one at a time to a fresh file, then "
            f"the whole history loaded (median of {LOAD_CALLS} calls, each after an untimed one); "
            f"medians of {RUNS} runs per store, run interleaved. "
            "See benchmarks/peers.py for each store's calls; the peers are installed from "
            "benchmarks/requirements-peers.txt, never as sessionforest dependencies."
        ),
        rows=rows,
        notes=[
            "Rows where a peer wins: "
            + ("; ".join(wins + framework_wins) or "none this run")
            + ".",
            f"Branch: median of {BRANCH_POINTS} appends below entries of the active path "
            f"from the head down to the root (slowest "
            f"{harness.ms(max(r['branch_max'] for r in deep_runs))}).",
            "Not measured: llm's log database (see the module docstring: it appends no "
            "message without a model).",
            framework_note,
        ],
        extra=table,
    )


def _frameworks(quick: bool) -> tuple[list[Row], list[str], str]:
    """The rows measured through each framework's runner (peers_frameworks.py)."""
    why = frameworks.available()
    if why is not None:
        return [], [], f"Framework rows not measured: {why}."
    steps = 60 if quick else frameworks.steps_for_checkpoints()
    agents = harness.interleaved(RUNS, {
        "ForestSession": lambda: frameworks.agents_conversation(True),
        "SQLiteSession": lambda: frameworks.agents_conversation(False),
    })  # fmt: skip
    graphs = harness.interleaved(RUNS, {
        "ForestSaver": lambda: frameworks.langgraph_thread(True, steps),
        "SqliteSaver": lambda: frameworks.langgraph_thread(False, steps),
    })  # fmt: skip
    agent_rows, agent_wins = frameworks.agents_rows(agents)
    graph_rows, graph_wins = frameworks.langgraph_rows(graphs)
    note = (
        f"Framework rows: the OpenAI Agents runner with `agents.testing.ScriptedModel` "
        f"({frameworks.TURNS} turns of ~500-character questions and answers, the runner's own "
        f"work included on both sides) and a one-node LangGraph `StateGraph` invoked {steps:,} "
        "times on one thread (put: `graph.invoke`, get: `graph.get_state`); medians of the "
        f"steps, then of {RUNS} runs, interleaved. A ratio above 1.00x is a row the peer wins."
    )
    return agent_rows + graph_rows, agent_wins + graph_wins, note
