"""Listing and watching at 10,000 and 100,000 sessions, on SQLite and PostgreSQL.

What a sidebar and a live server do with a big store: the first page of the
session list by activity (what `sessions/list` reads: the page and the count),
a page deep in the list by cursor against the same page by offset, and a
watcher's poll after another process committed to one session (the probe's
`changed()`: the rows of that commit) against reading every head (what the
watcher did before session_changes, and still does once at its start).

Each row's floor is measured in the same run on the same store: the raw SQL
of the same page (the head rows sorted newest first, top-N) for the first
page; for the deep page and the poll, the "before" way, side by side. The
stores are written with raw inserts (a few entries per chat: listing reads
sessions and heads, not entries), the PostgreSQL ones in a database of the
run's own, dropped at the end.

    .venv/bin/python benchmarks/run.py --only listing [--quick]
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from typing import Any
from urllib.parse import quote

import orjson
import psycopg
from psycopg import sql

import harness
from bench_postgres import _database  # the scratch database of a run, as bench_postgres makes it
from harness import Row, Section
from sessionforest import Forest

NAME = "listing"
PAGE = 50
# Targets are judged on the largest store (100,000 sessions); smaller ones are info.
JUDGED_FROM = 100_000
TARGET_FIRST = 3.0  # the first page at most this times the raw page
TARGET_DEEP = 0.5  # a deep page by cursor at most this share of the same page by offset
TARGET_POLL = 0.05  # a poll after one commit at most this share of reading every head

# The raw floor of the first page: the head rows, newest first (a top-N sort), and the rows.
RAW_FIRST = """
SELECT s.id, s.title, h.active_entry_id, h.updated_at FROM session_heads h
JOIN sessions s ON s.id = h.session_id WHERE s.visibility = 'top-level'
ORDER BY h.updated_at DESC, h.session_id DESC LIMIT 50
"""
PAYLOAD = orjson.dumps({"content": [{"type": "text", "text": "hello"}]}).decode()
MESSAGE = {"content": [{"type": "text", "text": "one more turn"}]}


def _sizes(quick: bool) -> tuple[int, ...]:
    return (2_000, 10_000) if quick else (10_000, 100_000)


def _rows(count: int) -> Iterator[tuple[list[Any], list[Any], list[Any]]]:
    """Sessions of three entries each, one in ten hidden, in batches of 5,000."""
    base = 1_767_225_600_000  # 2026-01-01
    for start in range(0, count, 5_000):
        sessions, entries, heads = [], [], []
        for i in range(start, min(count, start + 5_000)):
            sid = f"01bench{i:019d}"
            stamp = _iso(base + i * 1_000)
            parent = None
            for k in range(3):
                eid = f"01e{i:018d}{k:05d}"
                kind = "user.message" if k % 2 == 0 else "assistant.message"
                entries.append((eid, sid, parent, k + 1, 2, kind, PAYLOAD, "context", stamp))
                parent = eid
            visibility = "hidden" if i % 10 == 0 else "top-level"
            sessions.append((sid, f"chat {i}", "bench", stamp, visibility))
            # Activity spread over a year, not in creation order.
            heads.append((sid, parent, _iso(base + (i * 7_919 % count) * 31_000)))
        yield sessions, entries, heads


def _iso(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


INSERT_SESSION = (
    "INSERT INTO sessions(id, title, harness, created_at, status, visibility) "
    "VALUES (?, ?, ?, ?, 'active', ?)"
)
INSERT_ENTRY = (
    "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
    "semantic_schema_version, kind, payload, context_visibility, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# An upsert: the session row made its head row (migration session_listing).
UPSERT_HEAD = (
    "INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, ?) "
    "ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id, "
    "updated_at = excluded.updated_at"
)


def _fill_sqlite(path: Any, count: int) -> None:
    harness.fresh_store(path)
    with closing(harness.raw_connect(path)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        # The index's triggers index entries one by one; listing does not search.
        triggers = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'search_%'"
        ).fetchall()
        for name, _ in triggers:
            conn.execute(f"DROP TRIGGER {name}")
        for sessions, entries, heads in _rows(count):
            conn.executemany(INSERT_SESSION, sessions)
            conn.executemany(INSERT_ENTRY, entries)
            conn.executemany(UPSERT_HEAD, heads)
        for _, text in triggers:
            conn.execute(text)
        conn.execute("COMMIT")
        conn.execute("ANALYZE")
        harness.checkpoint(conn)


def _fill_postgres(url: str, count: int) -> None:
    Forest.open(url).close()
    with psycopg.connect(url) as conn:
        # One transaction a batch: the index's per-row triggers update shared rows (the
        # term counts), whose versions pile up within one long transaction.
        for sessions, entries, heads in _rows(count):
            with conn.cursor() as cur:
                cur.executemany(INSERT_SESSION.replace("?", "%s"), sessions)
                cur.executemany(INSERT_ENTRY.replace("?", "%s"), entries)
                cur.executemany(UPSERT_HEAD.replace("?", "%s"), heads)
            conn.commit()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


def _median_ms(fn: Callable[[], object], runs: int = 9) -> float:
    times = []
    fn()  # warm: the first call pays for statement preparation
    for _ in range(runs):
        start = harness.clock_ns()
        fn()
        times.append((harness.clock_ns() - start) / 1e6)
    return harness.median(times)


def _measure(label: str, location: str, raw: Callable[[], object], count: int) -> list[Row]:
    rows: list[Row] = []
    with Forest.open(location) as forest, Forest.open(location) as writer:
        judged = count >= JUDGED_FROM

        def target(limit: str, ok: bool) -> tuple[str, str]:
            return (limit, harness.verdict(ok)) if judged else ("info", "")

        lib = _median_ms(
            lambda: forest.sessions(include_hidden=False, order="updated", limit=PAGE + 1)
        )
        floor = _median_ms(raw)
        rows.append(Row(
            f"{label}, {count:,} sessions: first page of {PAGE} by activity vs the raw page",
            f"{lib:.2f} ms", f"{floor:.2f} ms", harness.ratio(lib / floor),
            *target(f"<= {TARGET_FIRST:.1f}x", lib / floor <= TARGET_FIRST),
        ))  # fmt: skip
        counted = _median_ms(lambda: forest.count_sessions(include_hidden=False))
        rows.append(Row(
            f"{label}, {count:,} sessions: the count `sessions/list` adds to each page",
            f"{counted:.2f} ms", "", "", "info",
        ))  # fmt: skip
        middle = count // 2
        before = forest.sessions(include_hidden=False, order="updated", limit=1, offset=middle)
        cursor = Forest.cursor(before[0])
        keyset = _median_ms(
            lambda: forest.sessions(include_hidden=False, order="updated", limit=PAGE, after=cursor)
        )
        offset = _median_ms(
            lambda: forest.sessions(
                include_hidden=False, order="updated", limit=PAGE, offset=middle + 1
            )
        )
        rows.append(Row(
            f"{label}, {count:,} sessions: a page halfway down by cursor vs by offset",
            f"{keyset:.2f} ms", f"{offset:.2f} ms", f"{keyset / offset:.0%}",
            *target(f"<= {TARGET_DEEP:.0%}", keyset / offset <= TARGET_DEEP),
        ))  # fmt: skip
        probe = forest.commit_probe()
        assert probe is not None
        try:
            sid = writer.sessions(order="updated", limit=1)[0].id
            polls, scans = [], []
            for _ in range(9):
                reading = probe()
                writer.append(sid, "user.message", MESSAGE)
                deadline = time.monotonic() + 10
                while probe() == reading:  # PostgreSQL delivers the notification async
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{label}: the probe never moved")
                    time.sleep(0.001)
                start = harness.clock_ns()
                changed = probe.changed()
                polls.append((harness.clock_ns() - start) / 1e6)
                if changed is None or [r[0] for r in changed] != [sid]:
                    raise RuntimeError(f"{label}: the poll read {changed!r}, not {sid}")
                start = harness.clock_ns()
                forest.heads()
                scans.append((harness.clock_ns() - start) / 1e6)
        finally:
            probe.close()
        poll, scan = harness.median(polls), harness.median(scans)
        rows.append(Row(
            f"{label}, {count:,} sessions: a watcher's poll after one commit vs reading every head",
            f"{poll:.2f} ms", f"{scan:.2f} ms", f"{poll / scan:.1%}",
            *target(f"<= {TARGET_POLL:.0%}", poll / scan <= TARGET_POLL),
        ))  # fmt: skip
    return rows


def run(quick: bool) -> Section:
    rows: list[Row] = []
    notes: list[str] = []
    for count in _sizes(quick):
        path = harness.WORK / f"listing-{count}.db"
        start = time.perf_counter()
        _fill_sqlite(path, count)
        built = time.perf_counter() - start
        with closing(sqlite3.connect(path)) as conn:

            def raw_sqlite(conn: sqlite3.Connection = conn) -> object:
                return conn.execute(RAW_FIRST).fetchall()

            rows += _measure("SQLite", str(path), raw_sqlite, count)
        harness.remove_db(path)
        notes.append(f"SQLite store of {count:,} sessions written in {built:.1f} s")
    with _database() as db:
        for count in _sizes(quick):
            schema = f"listing_{count}"
            with psycopg.connect(db, autocommit=True) as conn:
                conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
            url = f"{db}?options=" + quote(f"-csearch_path={schema},public")
            start = time.perf_counter()
            _fill_postgres(url, count)
            built = time.perf_counter() - start
            with psycopg.connect(url, autocommit=True) as conn:

                def raw_pg(conn: Any = conn) -> object:
                    return conn.execute(RAW_FIRST).fetchall()

                rows += _measure("PostgreSQL", url, raw_pg, count)
            notes.append(f"PostgreSQL store of {count:,} sessions written in {built:.1f} s")
    notes += [
        "One in ten sessions is hidden (a worker's chat): the page and the count are of "
        "the top-level ones, as the sidebar asks.",
        "Before session_listing (commit 39d5c85) each page skipped its offset row by row, "
        "and each listed chat counted its entries; a page by cursor sorts the head rows "
        "once (no index on updated_at: it cost appends about a sixth of their rate); "
        "before session_changes every poll after a commit read every head (the floor "
        "column of the poll rows), on PostgreSQL every 0.25 s whether or not anything "
        "was committed (it had no commit probe).",
    ]
    return Section(
        NAME,
        "Listing and watching at 10,000 and 100,000 sessions",
        "The session list's first page by activity, a page deep in it by cursor and by "
        "offset, and a live server's poll after another process's commit, on both backends.",
        rows,
        notes,
    )
