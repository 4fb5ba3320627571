"""A packed stored form for the first read (issue 30): the go/no-go figures.

The same 2,000 entries as first_read_ir.py's store (build it first), packed as
sealed chunks of N consecutive path entries, one row each, every column an
entry exposes in one blob, then read back into the objects `active_path`
returns (`Entry`, every payload read, as an agent reads it), each form timed in
process CPU, best and median of 41 in one process, beside the peer's
`SQLiteSession.get_items()` query and `json.loads` loop and today's read
(`paths.rows` + `reading.entries_of`, and `active_path` with its cache dropped):

    PYTHONPATH=src:benchmarks python benchmarks/first_read_ir.py build
    PYTHONPATH=src:benchmarks python benchmarks/first_read_packed.py

Forms: msgpack (msgspec) of the rows with each payload's stored JSON text, decoded
to the same row tuples a load keeps today (entries stay lazy: each payload is
decoded by orjson on first read); msgpack with each payload inline as a map,
decoded straight to the payload dicts (the entries built with them); one orjson
array with the payloads inline. docs/benchmarks.md, section 13, has the figures.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from collections import deque
from collections.abc import Callable
from itertools import repeat
from typing import Any

import msgspec
import orjson

from first_read_ir import FOREST_DB, PEER_DB
from sessionforest import Forest
from sessionforest.model import entries as model
from sessionforest.rules import reading
from sessionforest.store.sqlite import paths

RUNS = 41
CHUNK = int(sys.argv[1]) if len(sys.argv) > 1 else 256

Row = tuple[str, str, str | None, int, int, str, str, str, str, str | None]
ROWS = msgspec.msgpack.Decoder(list[Row])
ANY = msgspec.msgpack.Decoder()
ENCODE = msgspec.msgpack.Encoder()


def _cpu(fn: Callable[[], Any]) -> tuple[float, float]:
    times = []
    for _ in range(RUNS):
        t0 = time.process_time_ns()
        fn()
        times.append(time.process_time_ns() - t0)
    times.sort()
    return times[0] / 1e6, times[RUNS // 2] / 1e6


def _linked(rows: list[Any], head: str) -> bool:
    ids = [r[0] for r in rows]
    parents = [r[2] for r in rows]
    return bool(rows) and ids[-1] == head and parents[0] is None and parents[1:] == ids[:-1]


def main() -> None:
    conn = sqlite3.connect(FOREST_DB)
    sid, head, length = conn.execute(
        "SELECT session_id, active_entry_id, path_length FROM session_heads"
    ).fetchone()
    ranges = paths.spans(conn, sid, length, 0)
    assert ranges is not None
    expected = paths.rows(conn, sid, ranges, head, length)
    assert expected is not None
    sealed = length // CHUNK * CHUNK
    tail_range = [(1 + sealed, length)] if sealed < length else []

    # Three packed tables in an in-memory copy of the store (the blobs as a chunk
    # table would hold them: one row per chunk, keyed by its last entry's sequence).
    packed = sqlite3.connect(":memory:")
    conn.backup(packed)
    for name in ("chunks_text", "chunks_map", "chunks_json", "chunks_cols"):
        packed.execute(
            f"CREATE TABLE {name} (session_id TEXT NOT NULL, last_sequence INTEGER NOT NULL, "
            "depth INTEGER NOT NULL, rows BLOB NOT NULL, "
            "PRIMARY KEY (session_id, last_sequence)) WITHOUT ROWID"
        )
    for depth in range(0, sealed, CHUNK):
        part = expected[depth : depth + CHUNK]
        last = part[-1][3]
        text = ENCODE.encode(part)
        inline = [(*r[:6], orjson.loads(r[6]), *r[7:9], r[9] and orjson.loads(r[9])) for r in part]
        as_map = ENCODE.encode(inline)
        as_json = orjson.dumps(inline)
        cols = ENCODE.encode(_columns(part))
        for name, blob in (
            ("chunks_text", text),
            ("chunks_map", as_map),
            ("chunks_json", as_json),
            ("chunks_cols", cols),
        ):
            packed.execute(
                f"INSERT INTO {name} VALUES (?, ?, ?, ?)", (sid, last, depth, blob)
            )  # fmt: skip
    wanted = [expected[d + CHUNK - 1][3] for d in range(0, sealed, CHUNK)]
    marks = ",".join("?" * len(wanted))

    def blobs(name: str) -> list[bytes]:
        got = packed.execute(
            f"SELECT rows FROM {name} WHERE session_id = ? AND last_sequence IN ({marks}) "
            "ORDER BY last_sequence",
            (sid, *wanted),
        ).fetchall()
        return [b for (b,) in got]

    def tail() -> list[tuple[Any, ...]]:
        if not tail_range:
            return []
        got = paths.rows(packed, sid, tail_range, head, length - sealed, anchored=False)
        assert got is not None
        return got

    def text_rows() -> list[Any]:
        found: list[Any] = []
        for blob in blobs("chunks_text"):
            found += ROWS.decode(blob)
        found += tail()
        assert _linked(found, head)
        return found

    def map_entries() -> list[model.Entry]:
        found: list[Any] = []
        for blob in blobs("chunks_map"):
            found += ANY.decode(blob)
        rows = tail()
        assert _linked(found + rows, head)
        entries = _preset(found) + reading.entries_of(rows)
        return entries

    def json_entries() -> list[model.Entry]:
        found: list[Any] = []
        for blob in blobs("chunks_json"):
            found += orjson.loads(blob)
        rows = tail()
        assert _linked(found + rows, head)
        return _preset(found) + reading.entries_of(rows)

    def cols_entries() -> list[model.Entry]:
        entries: list[model.Entry] = []
        ids: list[str] = []
        parents: list[str | None] = []
        for blob in blobs("chunks_cols"):
            got = _from_columns(sid, COLS.decode(blob))
            ids += got[1]
            parents += got[2]
            entries += got[0]
        rows = tail()
        ids += [r[0] for r in rows]
        parents += [r[2] for r in rows]
        if not (ids[-1] == head and parents[0] is None and parents[1:] == ids[:-1]):
            raise AssertionError("not linked")
        return entries + reading.entries_of(rows)

    # Every form gives entries equal to today's (to_json: every column, payload, stamp).
    today = [e.to_json() for e in reading.entries_of(list(expected))]
    assert [e.to_json() for e in reading.entries_of(text_rows())] == today
    assert [e.to_json() for e in map_entries()] == today
    assert [e.to_json() for e in json_entries()] == today
    assert [e.to_json() for e in cols_entries()] == today

    peer = sqlite3.connect(PEER_DB)

    def get_items() -> list[Any]:
        query = "SELECT message_data FROM agent_messages WHERE session_id = ? ORDER BY id ASC"
        return [json.loads(m) for (m,) in peer.execute(query, ("peers",)).fetchall()]

    def today_read() -> list[Any]:
        found = paths.rows(conn, sid, ranges, head, length)
        assert found is not None
        return [e.payload for e in reading.entries_of(found)]

    forest = Forest.open(FOREST_DB)
    cache = forest._store.derived.paths  # type: ignore[attr-defined]

    def api_read() -> list[Any]:
        return [e.payload for e in forest.active_path(sid)]

    def _api_cold() -> tuple[float, float]:
        times = []
        for _ in range(RUNS):
            cache.clear()
            t0 = time.process_time_ns()
            api_read()
            times.append(time.process_time_ns() - t0)
        times.sort()
        return times[0] / 1e6, times[RUNS // 2] / 1e6

    forms: dict[str, Callable[[], Any]] = {
        "peer: get_items() query + json.loads": get_items,
        "today: paths.rows + entries_of + payloads": today_read,
        f"packed text, msgpack, chunks of {CHUNK} + tail rows: blobs + decode": lambda: [
            ROWS.decode(b) for b in blobs("chunks_text")
        ],
        "  + link check, entries_of, payloads": lambda: [
            e.payload for e in reading.entries_of(text_rows())
        ],
        "packed map, msgpack: blobs + decode": lambda: [ANY.decode(b) for b in blobs("chunks_map")],
        "  + link check, entries (payload preset), payloads ": lambda: [
            e.payload for e in map_entries()
        ],
        "packed orjson: blobs + decode": lambda: [orjson.loads(b) for b in blobs("chunks_json")],
        "  + link check, entries (payload preset), payloads": lambda: [
            e.payload for e in json_entries()
        ],
        "packed columns, msgpack: blobs + decode": lambda: [
            COLS.decode(b) for b in blobs("chunks_cols")
        ],
        "  + link check, entries (C loops, payload preset), payloads": lambda: [
            e.payload for e in cols_entries()
        ],
        "the tail alone (paths.rows)": tail,
    }
    print(f"{length} entries, chunks of {CHUNK} ({sealed} sealed, {length - sealed} in the tail)")
    results = {}
    for name, fn in forms.items():
        best, median = _cpu(fn)
        results[name] = best
        print(f"{name:66s} best {best:5.2f} ms  median {median:5.2f} ms")
    best, median = _api_cold()
    print(f"{'today: active_path, cache dropped + payloads':66s} best {best:5.2f} ms  "
          f"median {median:5.2f} ms")  # fmt: skip
    forest.close()


# A chunk by columns: (first sequence, ids, parents, versions, kinds, payloads (maps),
# visibilities, created_at, stamps (maps or nil)).
Columns = tuple[int, list[str], list[str | None], list[int], list[str], list[Any], list[str],
                list[str], list[Any]]  # fmt: skip
COLS = msgspec.msgpack.Decoder(Columns)


def _columns(part: list[tuple[Any, ...]]) -> Columns:
    ids, _, parents, seqs, versions, kinds, payloads, vis, created, stamps = zip(*part, strict=True)
    return (seqs[0], list(ids), list(parents), list(versions), list(kinds),
            [orjson.loads(p) for p in payloads], list(vis), list(created),
            [s and orjson.loads(s) for s in stamps])  # fmt: skip


def _from_columns(sid: str, cols: Columns) -> tuple[list[model.Entry], list[str], list[str | None]]:
    first, ids, parents, versions, kinds, payloads, vis, created, stamps = cols
    n = len(ids)
    if not reading.SUPPORTED_SCHEMA_VERSIONS.issuperset(versions):
        raise AssertionError("a version this reader cannot read")
    rows = list(zip(ids, repeat(sid, n), parents, range(first, first + n), versions, kinds,
                    repeat(None, n), vis, created, repeat(None, n), strict=True))  # fmt: skip
    entries = list(map(model._new, repeat(model.Entry, n)))
    deque(map(model._set_row, entries, rows), 0)
    deque(map(model._set_payload, entries, payloads), 0)
    deque(map(model._set_stamp, entries, stamps), 0)
    return entries, ids, parents


def _preset(rows: list[Any]) -> list[model.Entry]:
    """Entries from rows whose payload and stamp are decoded (the row keeps no text)."""
    if not reading.SUPPORTED_SCHEMA_VERSIONS.issuperset(r[4] for r in rows):
        raise AssertionError("a version this reader cannot read")
    entries = list(map(model._new, repeat(model.Entry, len(rows))))
    payloads = [r[6] for r in rows]
    stamps = [r[9] for r in rows]
    bare = [(*r[:6], None, r[7], r[8], None) for r in rows]
    for entry, row, payload, stamp in zip(entries, bare, payloads, stamps, strict=True):
        model._set_row(entry, row)
        model._set_payload(entry, payload)
        model._set_stamp(entry, stamp)
    return entries


if __name__ == "__main__":
    main()
