"""What a first read's range fetch could cost in other forms, against the peer's read.

The same 2,000 entries (first_read_ir.py's stores; build them first) fetched as
the store fetches them (eight columns through the sqlite3 module) and in forms
that build the range in SQLite's C instead (one JSON array, or concatenated
text), each timed in process CPU, best and median of 41 in one process, beside
`SQLiteSession.get_items()`'s query and `json.loads` loop (first_read_ir.peer_reads):

    PYTHONPATH=src:benchmarks python benchmarks/first_read_ir.py build
    PYTHONPATH=src:benchmarks python benchmarks/first_read_forms.py

docs/benchmarks.md, section 13, has the figures and what they rule out.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from typing import Any

import msgspec
import orjson

from first_read_ir import FOREST_DB, PEER_DB
from sessionforest.store.sqlite import paths

RUNS = 41
WHERE = "FROM session_entries WHERE session_id = ?1 AND sequence >= ?2 AND sequence <= ?3"
ORDERED = f"(SELECT * {WHERE} ORDER BY sequence)"
# Every column of ENTRY_COLUMNS as one JSON array of arrays, the payload as a JSON
# string (its stored text, so it decodes to exactly what the store holds).
AS_JSON = (
    "SELECT CAST(json_group_array(json_array(id, session_id, parent_entry_id, sequence, "
    "semantic_schema_version, kind, payload, context_visibility, created_at, stamp)) "
    f"AS BLOB) FROM {ORDERED}"
)
PAYLOADS_JOINED = f"SELECT '[' || group_concat(payload, ',') || ']' FROM {ORDERED}"
META_JOINED = (
    "SELECT id || char(31) || ifnull(parent_entry_id, '') || char(31) || kind || char(31) "
    "|| context_visibility || char(31) || created_at || char(31) || ifnull(stamp, '') "
    f"FROM {ORDERED}"
)
PAYLOADS = f"SELECT payload {WHERE} ORDER BY sequence"
METADATA = (
    "SELECT id, parent_entry_id, semantic_schema_version, kind, context_visibility, "
    f"created_at, stamp {WHERE} ORDER BY sequence"
)


def _cpu(fn: Callable[[], Any]) -> tuple[float, float]:
    times = []
    for _ in range(RUNS):
        t0 = time.process_time_ns()
        fn()
        times.append(time.process_time_ns() - t0)
    times.sort()
    return times[0] / 1e6, times[RUNS // 2] / 1e6


def main() -> None:
    conn = sqlite3.connect(FOREST_DB)
    sid, head, length = conn.execute(
        "SELECT session_id, active_entry_id, path_length FROM session_heads"
    ).fetchone()
    span = (sid, 1, length)
    as_rows = msgspec.json.Decoder(list[tuple[Any, ...]])
    # The JSON form is a fair rival: it decodes to exactly the rows a load keeps.
    expected = paths.rows(conn, sid, [(1, length)], head, length)
    assert as_rows.decode(conn.execute(AS_JSON, span).fetchone()[0]) == expected
    peer = sqlite3.connect(PEER_DB)

    def get_items() -> list[Any]:
        query = "SELECT message_data FROM agent_messages WHERE session_id = ? ORDER BY id ASC"
        return [json.loads(m) for (m,) in peer.execute(query, ("peers",)).fetchall()]

    def fetch() -> list[Any]:
        return conn.execute(paths.RANGE, span).fetchall()

    stored = [r[4] for r in fetch()]
    forms: dict[str, Callable[[], Any]] = {
        "peer: get_items() query + json.loads": get_items,
        "the store's range fetch (8 columns)": fetch,
        "  its payload column alone": lambda: conn.execute(PAYLOADS, span).fetchall(),
        "  its other 7 columns alone": lambda: conn.execute(METADATA, span).fetchall(),
        "orjson over the 2,000 payloads": lambda: list(map(orjson.loads, stored)),
        "json_group_array(json_array(...)): SQL only": lambda: conn.execute(
            AS_JSON, span
        ).fetchone(),
        "json_group_array(json_array(...)) + msgspec decode": lambda: as_rows.decode(
            conn.execute(AS_JSON, span).fetchone()[0]
        ),
        "'[' || group_concat(payload) || ']': SQL only": lambda: conn.execute(
            PAYLOADS_JOINED, span
        ).fetchone(),
        "the 6 text columns joined by || per row: SQL only": lambda: conn.execute(
            META_JOINED, span
        ).fetchall(),
    }
    for name, fn in forms.items():
        best, median = _cpu(fn)
        print(f"{name:55s} best {best:5.2f} ms  median {median:5.2f} ms")


if __name__ == "__main__":
    main()
