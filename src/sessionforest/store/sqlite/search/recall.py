"""`SQLiteSessionIndex`: recall's primitives, every query scoped to one session.

A session's entries are one rowid range of the index (schema.SESSION_SHIFT),
so each MATCH seeks straight to it, without a ranking function (bm25 would
walk the term's doclist over the whole store, ~12 ms for "the" at 1M entries).
Text in spaceless scripts is also looked up in the trigram index, where a
term matches as a substring.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from .... import snippets
from ....scripts import spaceless
from ...base import EntryRow, Term
from . import fts, grams
from .grams import MIN_GRAM_CHARS, excerpt
from .schema import SEQUENCE_MASK, SESSION_SHIFT

SESSION_NUM = "SELECT num FROM search_sessions WHERE session_id = ?"
SESSION_SIZE = "SELECT MAX(sequence) FROM session_entries WHERE session_id = ?"
TERM_IN_SESSION = (
    "SELECT rowid FROM session_entry_fts WHERE session_entry_fts MATCH ? "
    "AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?"
)
# The snippet is made in Python from the stored text (snippets.py).
HIT_ROW = f"""
SELECT f.text, f.tool, e.id, e.kind, e.created_at, e.sequence
FROM session_entry_fts f
JOIN session_entries e ON e.session_id = :sid AND e.sequence = (f.rowid & {SEQUENCE_MASK})
WHERE f.rowid = :rowid
"""
SESSION_HAS_GRAMS = "SELECT 1 FROM session_entry_grams WHERE rowid BETWEEN ? AND ? LIMIT 1"
GRAM_HIT_ROW = f"""
SELECT g.text, e.id, e.kind, e.created_at, e.sequence
FROM session_entry_grams g
JOIN session_entries e ON e.session_id = :sid AND e.sequence = (g.rowid & {SEQUENCE_MASK})
WHERE g.rowid = :rowid
"""
# From the head towards the root, stopping below the oldest hit. A parent is
# always appended before its child, so sequences fall strictly along the way,
# which also ends the walk on a damaged cycle.
ACTIVE_SEQUENCES = """
WITH RECURSIVE path(id, parent, sequence) AS (
    SELECT id, parent_entry_id, sequence FROM session_entries
    WHERE id = (SELECT active_entry_id FROM session_heads WHERE session_id = :sid)
      AND session_id = :sid
    UNION ALL
    SELECT e.id, e.parent_entry_id, e.sequence
    FROM session_entries e JOIN path ON e.id = path.parent
    WHERE path.sequence > :oldest AND e.sequence < path.sequence AND e.session_id = :sid
)
SELECT sequence FROM path
"""


class SQLiteSessionIndex:
    """Recall's SessionIndex for one session of one SQLite store."""

    def __init__(self, conn: sqlite3.Connection, session_id: str, num: int) -> None:
        self._conn = conn
        self._sid = session_id
        self._low = num << SESSION_SHIFT
        self._high = self._low + SEQUENCE_MASK
        found = conn.execute(SESSION_HAS_GRAMS, (self._low, self._high)).fetchone()
        self._has_grams = found is not None

    def _rows(self, match: str, limit: int) -> list[int]:
        args = (match, self._low, self._high, limit)
        return [r[0] for r in self._conn.execute(TERM_IN_SESSION, args)]

    def matches(self, text: str, *, prefix: bool, limit: int) -> list[int]:
        if prefix:
            rows = self._rows(fts.prefix(text), limit)
        else:
            rows = self._rows(fts.quote(text), limit)
            if self._has_grams and (len(text) >= MIN_GRAM_CHARS or spaceless(text)):
                seen = set(rows)
                more = grams.in_range(self._conn, text, self._low, self._high, limit)
                rows += [r for r in more if r not in seen]
        return [row & SEQUENCE_MASK for row in rows]

    def size(self) -> int:
        return int(self._conn.execute(SESSION_SIZE, (self._sid,)).fetchone()[0] or 1)

    def hits(
        self, sequences: Sequence[int], matched: Sequence[Term], needles: Sequence[str]
    ) -> list[EntryRow]:
        conn = self._conn
        wanted = [snippets.Wanted(t.tokens, t.text, t.prefix) for t in matched if t.tokens]
        stem = fts.tokenizer().tokens
        width = snippets.RECALL_TOKENS
        out = []
        for sequence in sequences:
            rowid = self._low + sequence
            if self._has_grams:
                # Trigram rows are excerpted by characters (grams.excerpt).
                gram = conn.execute(GRAM_HIT_ROW, {"sid": self._sid, "rowid": rowid}).fetchone()
                if gram is not None:
                    text, entry_id, kind, created_at, seq = gram
                    out.append(EntryRow(seq, entry_id, kind, created_at, excerpt(text, needles)))
                    continue
            row = conn.execute(HIT_ROW, {"sid": self._sid, "rowid": rowid}).fetchone()
            if row is not None:
                text, tool, entry_id, kind, created_at, seq = row
                fields = [str(text or ""), str(tool or "")]  # what was said first
                made = snippets.snippet(fields, wanted, stem, width)
                shown = made if made is not None else snippets.head(fields[0] or fields[1], width)
                out.append(EntryRow(seq, entry_id, kind, created_at, shown))
        return out

    def active(self, oldest: int) -> set[int]:
        args = {"sid": self._sid, "oldest": oldest}
        return {r[0] for r in self._conn.execute(ACTIVE_SEQUENCES, args)}
