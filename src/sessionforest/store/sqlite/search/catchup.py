"""Index the entries stored since the last search: the index's half of an append.

An append only notes that its session has entries not yet indexed (the
`search_entry_pending` trigger keeps each session's lowest such sequence in
`search_pending`); the full-text work (word and trigram rows, the chat digest,
the activity span) runs here, for every pending entry in ONE write
transaction, before a search opens its read snapshot. So:

- a failed append leaves no index row (it left no pending row either: both
  roll back with it);
- a search issued after an append was acknowledged finds it: `catch_up` runs
  first and sees every committed entry (writers queue on BEGIN IMMEDIATE, in
  this process and in others);
- a crash or kill -9 mid-catch-up rolls the whole batch back, pending rows
  included, and the next search does it again;
- what a search may have to index first is bounded: each writer indexes what
  is pending every EVERY appends, in that append's transaction, and as it closes.

Entries are fed through the `search_feed` view, whose INSTEAD OF triggers are
the released index triggers unchanged, in sequence order per session; a
payload over 1 MiB is indexed from Python at its place in that order
(large.py), exactly as the append used to.
"""

from __future__ import annotations

import sqlite3
from typing import Final

import orjson

from . import large
from .schema import INDEXED_KINDS

# A writer indexes what is pending every EVERY entries it appends, inside that
# append's transaction (store.py): a search then never has more than EVERY - 1
# entries per writing process to index before it reads, and an append pays for
# the index in one batch now and then instead of a little every time. Larger
# batches are cheaper per entry (fewer FTS5 segments to write and merge): 2,000
# appends of ~500 bytes, indexed, cost 6% fewer instructions per append in all
# with batches of 512 than of 256, 13% fewer with 1,024, and no fewer with 2,048
# than with 1,024 (callgrind, issue 15). The bound is the T1 target (a search
# within 50 ms): the worst case, EVERY - 1 entries left to index, is measured by
# benchmarks/bench_index_append.py; with 1,024 it measured 101 ms on a loaded
# machine (~45 ms scaled to a quiet one: too close), so 512.
EVERY: Final = 512

PENDING = "SELECT session_id, from_sequence FROM search_pending"
ANY_PENDING = "SELECT 1 FROM search_pending LIMIT 1"
FEED = """
INSERT INTO search_feed(session_id, sequence, kind, payload, created_at)
SELECT session_id, sequence, kind, payload, created_at FROM session_entries
WHERE session_id = ? AND sequence >= ? AND sequence < ? ORDER BY sequence
"""
_KINDS = ", ".join(f"'{kind}'" for kind in INDEXED_KINDS)
# Payloads the feed triggers skip (their size test), which large.py indexes.
LARGE = f"""
SELECT sequence, kind FROM session_entries
WHERE session_id = ? AND sequence >= ? AND kind IN ({_KINDS})
  AND length(CAST(payload AS BLOB)) > {large.LARGE_PAYLOAD}
ORDER BY sequence
"""
PAYLOAD = "SELECT payload FROM session_entries WHERE session_id = ? AND sequence = ?"
_END: Final = 1 << 62  # past any sequence


def pending(conn: sqlite3.Connection) -> bool:
    """Whether any entry waits to be indexed (one row read)."""
    return conn.execute(ANY_PENDING).fetchone() is not None


def catch_up(conn: sqlite3.Connection) -> int:
    """Index every pending entry inside the caller's write transaction; returns how
    many sessions had entries waiting."""
    sessions = conn.execute(PENDING).fetchall()
    for session_id, start in sessions:
        for sequence, kind in conn.execute(LARGE, (session_id, start)).fetchall():
            # Up to and with the large entry (the activity trigger has no size test).
            conn.execute(FEED, (session_id, start, sequence + 1))
            start = sequence + 1
            payload = conn.execute(PAYLOAD, (session_id, sequence)).fetchone()[0]
            try:
                text = large.entry_text(kind, orjson.loads(payload))
            except orjson.JSONDecodeError:
                continue  # as the triggers' json_valid test skips it
            large.index_large(conn, session_id, sequence, kind, text)
        conn.execute(FEED, (session_id, start, _END))
    if sessions:
        conn.execute("DELETE FROM search_pending")
    return len(sessions)
