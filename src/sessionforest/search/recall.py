"""Recall inside one chat: every query is scoped `session_id = ?`, nothing crosses chats.

Each term is matched within the session's rowid range without a ranking
function (bm25 would walk the term's doclist over the whole store, ~12 ms for
"the" at 1M entries); hits are scored by how rare their terms are within this
chat, newest first on ties. Ended chats stay searchable like any other. Text
in spaceless scripts is also looked up in the trigram index (grams.py), where
a term matches as a substring.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from typing import Final

from ..model import LEGACY_KINDS
from . import fts, grams
from .index import SEQUENCE_MASK, SESSION_SHIFT
from .query import STOPWORDS, split_exclusions, split_phrases, split_words
from .results import ELLIPSIS, MARK, EntryHit
from .scripts import excerpt, spaceless
from .terms import MIN_GRAM_CHARS, MIN_PREFIX_LETTERS

MAX_RECALL_TERMS: Final = 8
TERM_ROWS: Final = 5_000  # per term, newest first: enough to rank any real chat

SESSION_NUM = "SELECT num FROM search_sessions WHERE session_id = ?"
SESSION_SIZE = "SELECT MAX(sequence) FROM session_entries WHERE session_id = ?"
# A session's entries are one rowid range, so FTS5 seeks straight to them.
TERM_IN_SESSION = (
    "SELECT rowid FROM session_entry_fts WHERE session_entry_fts MATCH ? "
    "AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?"
)
HIT_ROW = f"""
SELECT snippet(session_entry_fts, 0, '{MARK}', '{MARK}', '{ELLIPSIS}', 16),
       e.id, e.kind, e.created_at, e.sequence
FROM session_entry_fts f
JOIN session_entries e ON e.session_id = :sid AND e.sequence = (f.rowid & {SEQUENCE_MASK})
WHERE session_entry_fts MATCH :expr AND f.rowid = :rowid AND f.session_id = :sid
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


def recall_terms(query: str) -> list[str]:
    """Phrases and words to look for; stopwords only when nothing else was typed."""
    phrases, rest = split_phrases(query)
    _, rest = split_exclusions(rest)
    words = split_words(rest)
    content = [w for w in words if w not in STOPWORDS]
    texts = list(dict.fromkeys([*phrases, *(content or words)]))[: MAX_RECALL_TERMS * 4]
    tokens = fts.tokenizer().tokens(texts)
    return [t for t, toks in zip(texts, tokens, strict=True) if toks][:MAX_RECALL_TERMS]


def _rows(conn: sqlite3.Connection, match: str, low: int) -> list[int]:
    args = (match, low, low + SEQUENCE_MASK, TERM_ROWS)
    return [r[0] for r in conn.execute(TERM_IN_SESSION, args)]


def _matching(conn: sqlite3.Connection, text: str, low: int, has_grams: bool) -> list[int]:
    """The session's entries holding `text` as a word, or as a substring in
    text of a spaceless script."""
    rows = _rows(conn, fts.quote(text), low)
    if has_grams and (len(text) >= MIN_GRAM_CHARS or spaceless(text)):
        seen = set(rows)
        more = grams.in_range(conn, text, low, low + SEQUENCE_MASK, TERM_ROWS)
        rows += [r for r in more if r not in seen]
    return rows


def recall(conn: sqlite3.Connection, session_id: str, query: str, limit: int) -> list[EntryHit]:
    """The session's entries matching `query`, best first (the caller checked the session)."""
    texts = recall_terms(query)
    num = conn.execute(SESSION_NUM, (session_id,)).fetchone()
    if not texts or limit <= 0 or num is None:
        return []
    low = num[0] << SESSION_SHIFT
    has_grams = conn.execute(SESSION_HAS_GRAMS, (low, low + SEQUENCE_MASK)).fetchone() is not None
    found: dict[int, set[int]] = {}
    counts: list[int] = []
    used: list[str] = []
    for i, text in enumerate(texts):
        match = fts.quote(text)
        rows = _matching(conn, text, low, has_grams)
        if not rows and len(text) >= MIN_PREFIX_LETTERS and " " not in text:
            match = fts.prefix(text)
            rows = _rows(conn, match, low)
        if rows:
            used.append(match)  # a term that matched nothing must not cost the snippets
        counts.append(len(rows))
        for rowid in rows:
            found.setdefault(rowid, set()).add(i)
    for text in dict.fromkeys(split_exclusions(split_phrases(query)[1])[0]):
        # `-word`: entries holding it are left out, whatever else they match.
        for rowid in _matching(conn, text, low, has_grams):
            found.pop(rowid, None)
    if not found:
        return []
    size = conn.execute(SESSION_SIZE, (session_id,)).fetchone()[0] or 1
    # idf within this chat: a word the chat rarely uses says more than a common one.
    idf = [math.log(1 + (size - n + 0.5) / (n + 0.5)) for n in counts]
    every = [r for r, hit in found.items() if len(hit) == len(texts)]
    pool = every or list(found)
    best = sorted(pool, key=lambda r: (sum(idf[i] for i in found[r]), r), reverse=True)[:limit]
    scores = {r: sum(idf[i] for i in found[r]) for r in best}
    needles = texts if has_grams else None
    return _hits(conn, session_id, best, scores, fts.any_of(used), needles=needles)


def _hits(
    conn: sqlite3.Connection,
    session_id: str,
    rowids: Sequence[int],
    scores: dict[int, float],
    expr: str,
    needles: Sequence[str] | None = None,
) -> list[EntryHit]:
    rows = []
    for rowid in rowids:
        if needles is not None:
            # Trigram rows are excerpted by characters (scripts.excerpt).
            gram = conn.execute(GRAM_HIT_ROW, {"sid": session_id, "rowid": rowid}).fetchone()
            if gram is not None:
                rows.append((rowid, (excerpt(gram[0], needles), *gram[1:])))
                continue
        row = conn.execute(HIT_ROW, {"sid": session_id, "expr": expr, "rowid": rowid}).fetchone()
        if row is not None:
            rows.append((rowid, row))
    if not rows:
        return []
    oldest = min(row[4] for _, row in rows)
    active = {r[0] for r in conn.execute(ACTIVE_SEQUENCES, {"sid": session_id, "oldest": oldest})}
    return [
        EntryHit(
            entry_id=entry_id,
            session_id=session_id,
            sequence=sequence,
            kind=LEGACY_KINDS.get(kind, kind),
            snippet=snippet,
            created_at=created_at,
            on_active_branch=sequence in active,
            score=scores[rowid],
        )
        for rowid, (snippet, entry_id, kind, created_at, sequence) in rows
    ]
