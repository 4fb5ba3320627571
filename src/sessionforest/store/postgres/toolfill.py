"""Fill the tool field of entries stored before the index had one (0010_search_tool_text).

The migration notes each session holding such entries in `search_tool_pending`;
`fill` works them off in chunks, each in one write transaction: the entries'
text and tool fields as writers compute them today (rows.searchable), and the
document frequencies in search_terms moved by the difference of their words.
The backend's catch-up runs it before a search, as SQLite's catch-up does its
own backfill.
"""

from __future__ import annotations

from typing import Any, Final

import psycopg

from ...tooltext import TOOL_KINDS
from .rows import searchable_json

# Entries filled per transaction.
CHUNK: Final = 2_000

ANY = "SELECT 1 FROM search_tool_pending LIMIT 1"
COUNT = (
    "SELECT coalesce(sum(greatest(below_sequence - from_sequence, 0)), 0) FROM search_tool_pending"
)
# One session at a time; a second writer takes another one (or none).
NEXT = """
SELECT session_id, from_sequence, below_sequence FROM search_tool_pending
ORDER BY session_id LIMIT 1 FOR UPDATE SKIP LOCKED
"""
_KINDS = ", ".join(f"'{kind}'" for kind in TOOL_KINDS)
ROWS = f"""
SELECT sequence, kind, payload FROM session_entries
WHERE session_id = %s AND sequence >= %s AND sequence < %s AND kind IN ({_KINDS})
ORDER BY sequence
"""
# The old words are read in the statement's snapshot, before the update: the
# difference moves each stem's document count (a stem an entry keeps is +1 -1).
FILL = """
WITH v AS (
    SELECT * FROM unnest(%(seq)s::bigint[], %(text)s::text[], %(tool)s::text[], %(sl)s::bool[])
        AS v(sequence, text, tool, spaceless)
), old AS (
    SELECT e.words FROM session_entries e JOIN v ON e.sequence = v.sequence
    WHERE e.session_id = %(sid)s
), changed AS (
    UPDATE session_entries e SET text = v.text, tool = v.tool, spaceless = v.spaceless
    FROM v WHERE e.session_id = %(sid)s AND e.sequence = v.sequence
    RETURNING e.words
), delta AS (
    SELECT t AS term, 1 AS d FROM changed, unnest(tsvector_to_array(changed.words)) AS t
    UNION ALL
    SELECT t, -1 FROM old, unnest(tsvector_to_array(old.words)) AS t
)
INSERT INTO search_terms(term, docs)
SELECT term, sum(d) FROM delta GROUP BY term HAVING sum(d) <> 0 ORDER BY term
ON CONFLICT (term) DO UPDATE SET docs = search_terms.docs + excluded.docs
"""
ADVANCE = "UPDATE search_tool_pending SET from_sequence = %s WHERE session_id = %s"
DONE = "DELETE FROM search_tool_pending WHERE session_id = %s"


def waiting(conn: psycopg.Connection[Any]) -> int:
    """How many entries (an upper bound: every kind counts) wait for their tool field."""
    row = conn.execute(COUNT).fetchone()
    return int(row[0]) if row else 0


def pending(conn: psycopg.Connection[Any]) -> bool:
    return conn.execute(ANY).fetchone() is not None


def fill_some(conn: psycopg.Connection[Any], limit: int = CHUNK) -> bool:
    """Fill about `limit` entries of one noted session inside the caller's write
    transaction; returns whether any session was noted."""
    found = conn.execute(NEXT).fetchone()
    if found is None:
        return False
    session_id, start, below = found
    end = min(below, start + limit)
    seqs: list[int] = []
    words: list[str | None] = []
    tools: list[str | None] = []
    flags: list[bool] = []
    for sequence, kind, payload in conn.execute(ROWS, (session_id, start, end)).fetchall():
        text, tool, spaceless = searchable_json(kind, payload)
        if tool is None:
            continue  # no tool text: the row is already what a writer makes today
        seqs.append(sequence)
        words.append(text)
        tools.append(tool)
        flags.append(spaceless)
    if seqs:
        args = {"seq": seqs, "text": words, "tool": tools, "sl": flags, "sid": session_id}
        conn.execute(FILL, args)
    conn.execute(
        ADVANCE if end < below else DONE, (end, session_id) if end < below else (session_id,)
    )
    return True
