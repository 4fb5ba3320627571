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
- nobody pays for the index per append: a writer's background thread
  (idle.py) indexes in chunks of CHUNK entries once its appends pause for
  idle.QUIET seconds, and a writer indexes as it closes; a burst with no pause
  is bounded, an append indexing what is pending in its own transaction once
  its process has left BOUND entries unindexed. A search right after such a
  burst indexes up to BOUND - 1 entries first (benchmarks/bench_index_append.py
  measures it).

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

# The most entries a writing process leaves unindexed while it keeps appending
# without a pause (store.py): its next append indexes them in its own
# transaction. The bound is what a search right after a burst may have to index
# first: ~27 us an entry of ~200 characters (benchmarks/bench_index_append.py:
# 281 ms for 10,239), so a burst up to this size costs its appends nothing and
# a search right after it a few hundred ms; every other search is T1's. A lower
# bound would only move that work into the burst's appends (the cost per entry
# is the same, a little lower in larger batches: 13% fewer instructions in
# batches of 1,024 than of 256, callgrind, issue 15).
BOUND: Final = 10_000
# Entries the background thread indexes per write transaction: a writer that
# resumes waits for at most one chunk (~15 ms).
CHUNK: Final = 512

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
  AND sequence < ? AND length(CAST(payload AS BLOB)) > {large.LARGE_PAYLOAD}
ORDER BY sequence
"""
PAYLOAD = "SELECT payload FROM session_entries WHERE session_id = ? AND sequence = ?"
LAST = "SELECT MAX(sequence) FROM session_entries WHERE session_id = ?"
# Entries pending, counted from the notes (sequences of a session are consecutive).
COUNT = """
SELECT coalesce(sum((SELECT MAX(sequence) FROM session_entries e
                     WHERE e.session_id = p.session_id) - p.from_sequence + 1), 0)
FROM search_pending p
"""
ADVANCE = "UPDATE search_pending SET from_sequence = ? WHERE session_id = ?"
DONE = "DELETE FROM search_pending WHERE session_id = ?"
_END: Final = 1 << 62  # past any sequence


def pending(conn: sqlite3.Connection) -> bool:
    """Whether any entry waits to be indexed (one row read)."""
    return conn.execute(ANY_PENDING).fetchone() is not None


def count_pending(conn: sqlite3.Connection) -> int:
    """How many entries wait to be indexed (one read per noted session)."""
    return int(conn.execute(COUNT).fetchone()[0])


def catch_up(conn: sqlite3.Connection, limit: int | None = None) -> bool:
    """Index pending entries inside the caller's write transaction, in sequence order
    per session: every one, or (`limit`) about that many, the rest left noted for
    the next call. Returns whether any entry was left pending."""
    for session_id, start in conn.execute(PENDING).fetchall():
        end = _END if limit is None else start + limit
        _feed(conn, session_id, start, end)
        if limit is not None:
            last = conn.execute(LAST, (session_id,)).fetchone()[0]
            if last is not None and last >= end:
                conn.execute(ADVANCE, (end, session_id))
                return True
            limit -= end - start if last is None else last - start + 1
        conn.execute(DONE, (session_id,))
        if limit is not None and limit <= 0:
            return pending(conn)
    return False


def _feed(conn: sqlite3.Connection, session_id: str, start: int, end: int) -> None:
    """Index the session's entries with sequences in [start, end)."""
    for sequence, kind in conn.execute(LARGE, (session_id, start, end)).fetchall():
        # Up to and with the large entry (the activity trigger has no size test).
        conn.execute(FEED, (session_id, start, sequence + 1))
        start = sequence + 1
        payload = conn.execute(PAYLOAD, (session_id, sequence)).fetchone()[0]
        try:
            text = large.entry_text(kind, orjson.loads(payload))
        except orjson.JSONDecodeError:
            continue  # as the triggers' json_valid test skips it
        large.index_large(conn, session_id, sequence, kind, text)
    conn.execute(FEED, (session_id, start, end))
