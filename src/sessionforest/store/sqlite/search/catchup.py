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
  (derived.py) indexes in chunks of `derived.CHUNK` entries once its appends
  pause for `derived.QUIET` seconds, and a writer indexes as it closes; a
  burst with no pause is bounded, an append indexing what is pending in its
  own transaction once its process has left `derived.BOUND` entries
  unindexed. A search right after such a burst indexes up to BOUND - 1
  entries first (benchmarks/bench_index_append.py measures it).

Entries are fed through the `search_feed` view, whose INSTEAD OF triggers are
the released index triggers unchanged, in sequence order per session; a
payload over 1 MiB is indexed from Python at its place in that order
(large.py), exactly as the append used to. Then Python fills the index's tool
field (tooltext.py) for the entries of the range that may have one, and moves
a user message's wrapper text out of its words; the entries a store held when
it gained the field (0026_search_tool_text.sql) wait in `search_tool_pending`
and are worked off by the same calls, after the new ones.
"""

from __future__ import annotations

import functools
import sqlite3
from typing import Final

import orjson

from .schema import INDEXED_KINDS, SESSION_SHIFT

# A search asks `pending` before every read and almost always hears "no": the rules the
# work itself needs (tooltext, wrappers and large.py, with their patterns) are imported
# by the work, so a search over an index that is up to date never loads them.

PENDING = "SELECT session_id, from_sequence FROM search_pending"
ANY_PENDING = "SELECT 1 FROM search_pending UNION ALL SELECT 1 FROM search_tool_pending LIMIT 1"
FEED = """
INSERT INTO search_feed(session_id, sequence, kind, payload, created_at)
SELECT session_id, sequence, kind, payload, created_at FROM session_entries
WHERE session_id = ? AND sequence >= ? AND sequence < ? ORDER BY sequence
"""
_KINDS = ", ".join(f"'{kind}'" for kind in INDEXED_KINDS)


@functools.cache
def _large_rows() -> str:
    """Payloads the feed triggers skip (their size test), which large.py indexes."""
    from .large import LARGE_PAYLOAD

    return f"""
SELECT sequence, kind FROM session_entries
WHERE session_id = ? AND sequence >= ? AND kind IN ({_KINDS})
  AND sequence < ? AND length(CAST(payload AS BLOB)) > {LARGE_PAYLOAD}
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


@functools.cache
def _tool_rows() -> str:
    """The entries of a range that may have a tool field: calls and results, a harness's
    printed output, and user messages that may hold a harness wrapper (a tag's "<",
    JSON-escaped or not, or one of wrappers.PLAIN_PREFIXES); tooltext.texts decides."""
    from .... import wrappers

    plain = " OR ".join(f"instr(payload, '{p[:24]}') > 0" for p in wrappers.PLAIN_PREFIXES)
    return f"""
SELECT sequence, kind, payload FROM session_entries
WHERE session_id = ? AND sequence >= ? AND sequence < ?
  AND (kind IN ('tool.completed', 'tool.started')
       OR (kind = 'assistant.message' AND instr(payload, '"tool_call"') > 0)
       OR (kind = 'provider.notification' AND instr(payload, '"output"') > 0)
       OR (kind IN ('user.message', 'user.prompt')
           AND (instr(payload, '<') > 0 OR instr(payload, '\\u003c') > 0 OR {plain})))
ORDER BY sequence
"""


SESSION_NUM = "SELECT num FROM search_sessions WHERE session_id = ?"
# An entry's row with both fields (FTS5 replaces a row of the same rowid).
TOOL_ROW = (
    "INSERT OR REPLACE INTO session_entry_fts(rowid, text, tool, session_id) VALUES (?, ?, ?, ?)"
)
TOOL_PENDING = "SELECT session_id, from_sequence, below_sequence FROM search_tool_pending"
TOOL_ADVANCE = "UPDATE search_tool_pending SET from_sequence = ? WHERE session_id = ?"
TOOL_DONE = "DELETE FROM search_tool_pending WHERE session_id = ?"
TOOL_COUNT = (
    "SELECT coalesce(sum(max(below_sequence - from_sequence, 0)), 0) FROM search_tool_pending"
)
_END: Final = 1 << 62  # past any sequence


def pending(conn: sqlite3.Connection) -> bool:
    """Whether any entry waits to be indexed (one row read)."""
    return conn.execute(ANY_PENDING).fetchone() is not None


def count_pending(conn: sqlite3.Connection) -> int:
    """How many entries wait to be indexed (one read per noted session)."""
    return int(conn.execute(COUNT).fetchone()[0]) + int(conn.execute(TOOL_COUNT).fetchone()[0])


def catch_up(conn: sqlite3.Connection, limit: int | None = None) -> bool:
    """Index pending entries inside the caller's write transaction, in sequence order
    per session: every one, or (`limit`) about that many, the rest left noted for
    the next call. Returns whether any entry was left pending (new entries first,
    then those the store held before it had a tool field)."""
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
    return _backfill(conn, limit)


def _backfill(conn: sqlite3.Connection, limit: int | None) -> bool:
    """Fill the tool field of entries indexed before the store had one (all, or
    about `limit`); returns whether any are left."""
    for session_id, start, below in conn.execute(TOOL_PENDING).fetchall():
        end = below if limit is None else min(below, start + max(limit, 1))
        _tool_fields(conn, session_id, start, end)
        if end < below:
            conn.execute(TOOL_ADVANCE, (end, session_id))
            return True
        conn.execute(TOOL_DONE, (session_id,))
        if limit is not None:
            limit -= end - start
            if limit <= 0:
                return pending(conn)
    return False


def _tool_fields(conn: sqlite3.Connection, session_id: str, start: int, end: int) -> None:
    """Write both fields of the session's entries in [start, end) that have tool
    text (tooltext.texts): the row the feed made, if any, is replaced."""
    from .... import tooltext

    num = conn.execute(SESSION_NUM, (session_id,)).fetchone()
    if num is None:
        return  # not a searched session (the feed triggers skip it too)
    low = num[0] << SESSION_SHIFT
    rows = []
    for sequence, kind, payload in conn.execute(_tool_rows(), (session_id, start, end)):
        try:
            found = tooltext.texts(kind, orjson.loads(payload))
        except orjson.JSONDecodeError:
            continue  # as the triggers' json_valid test skips it
        # Without tool text the feed's row is already right (no wrapper to move).
        # A conversational entry's words are never NULL here, so NULL text with a
        # tool field marks a tool-only row (vectors.py leaves those out).
        if found.tool is not None:
            words = found.words if kind not in INDEXED_KINDS else found.words or ""
            rows.append((low + sequence, words, found.tool, session_id))
    conn.executemany(TOOL_ROW, rows)


def _feed(conn: sqlite3.Connection, session_id: str, start: int, end: int) -> None:
    """Index the session's entries with sequences in [start, end)."""
    from . import large

    first = start
    for sequence, kind in conn.execute(_large_rows(), (session_id, start, end)).fetchall():
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
    _tool_fields(conn, session_id, first, end)
