"""Lookups in the trigram index (gram_index.py), for text in spaceless scripts.

T1 and recall read the word index as before and add what these return: rows
where a term occurs as a substring. A term's form here is `terms.Grams`: a
MATCH over trigrams, or, for a short word that starts too many trigrams to
list, text found by instr() row by row. Rows are excerpted here too, by
characters (scripts.excerpt), since FTS5 snippets of trigrams cut mid-word.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from . import fts
from .scripts import excerpt
from .terms import MIN_GRAM_CHARS, Grams, Term

# The same reads as retrieve.py and recall.py make of the word index. Scan
# texts come as a JSON array: every one must occur under AND, any one under OR.
_EVERY_SCAN = "NOT EXISTS (SELECT 1 FROM json_each(?) WHERE instr(lower({text}), value) = 0)"
_ANY_SCAN = "EXISTS (SELECT 1 FROM json_each(?) WHERE instr(lower({text}), value) > 0)"
_ENTRY_TEXT = "text"
_DIGEST_TEXT = "title || first_message || first_reply || summary"
GRAM_ENTRY_RANKED = (
    "SELECT rowid FROM session_entry_grams WHERE session_entry_grams MATCH ? AND "
    + _EVERY_SCAN.format(text=_ENTRY_TEXT)
    + " ORDER BY rank LIMIT ?"
)
GRAM_ENTRY_NEWEST = (
    "SELECT rowid FROM session_entry_grams WHERE session_entry_grams MATCH ? AND "
    + _EVERY_SCAN.format(text=_ENTRY_TEXT)
    + " ORDER BY rowid DESC LIMIT ?"
)
GRAM_ENTRY_SCAN_EVERY = (
    "SELECT rowid FROM session_entry_grams WHERE "
    + _EVERY_SCAN.format(text=_ENTRY_TEXT)
    + " ORDER BY rowid DESC LIMIT ?"
)
GRAM_ENTRY_SCAN_ANY = (
    "SELECT rowid FROM session_entry_grams WHERE "
    + _ANY_SCAN.format(text=_ENTRY_TEXT)
    + " ORDER BY rowid DESC LIMIT ?"
)
GRAM_DIGEST_RANKED = (
    "SELECT rowid FROM chat_digest_grams WHERE chat_digest_grams MATCH ? "
    "AND rank MATCH 'bm25(4.0, 1.0, 0.5, 1.0)' AND "
    + _EVERY_SCAN.format(text=_DIGEST_TEXT)
    + " ORDER BY rank LIMIT ?"
)
GRAM_DIGEST_SCAN_EVERY = (
    "SELECT rowid FROM chat_digest_grams WHERE "
    + _EVERY_SCAN.format(text=_DIGEST_TEXT)
    + " ORDER BY rowid DESC LIMIT ?"
)
GRAM_DIGEST_SCAN_ANY = (
    "SELECT rowid FROM chat_digest_grams WHERE "
    + _ANY_SCAN.format(text=_DIGEST_TEXT)
    + " ORDER BY rowid DESC LIMIT ?"
)
GRAM_ENTRY_PROBE = (
    "SELECT 1 FROM session_entry_grams WHERE session_entry_grams MATCH ? "
    "AND rowid BETWEEN ? AND ? LIMIT 1"
)
GRAM_ENTRY_SCAN_PROBE = (
    "SELECT 1 FROM session_entry_grams WHERE rowid BETWEEN ? AND ? "
    "AND instr(lower(text), ?) > 0 LIMIT 1"
)
GRAM_DIGEST_PROBE = "SELECT 1 FROM chat_digest_grams WHERE chat_digest_grams MATCH ? AND rowid = ?"
GRAM_DIGEST_SCAN_PROBE = (
    f"SELECT 1 FROM chat_digest_grams WHERE rowid = ? AND instr(lower({_DIGEST_TEXT}), ?) > 0"
)
GRAM_ENTRY_ROW = "SELECT text FROM session_entry_grams WHERE rowid = ?"
GRAM_DIGEST_ROW = (
    "SELECT title, first_message, first_reply, summary FROM chat_digest_grams WHERE rowid = ?"
)
GRAM_ENTRY_IN_RANGE = (
    "SELECT rowid FROM session_entry_grams WHERE session_entry_grams MATCH ? "
    "AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?"
)
GRAM_ENTRY_SCAN_IN_RANGE = (
    "SELECT rowid FROM session_entry_grams WHERE rowid BETWEEN ? AND ? "
    "AND instr(lower(text), ?) > 0 ORDER BY rowid DESC LIMIT ?"
)


def used(terms: Sequence[Term]) -> bool:
    """Whether any term can occur in the trigram index (never in a Latin-only store)."""
    return any(t.grams is not None for t in terms)


def _lists(
    conn: sqlite3.Connection,
    terms: Sequence[Term],
    conjunctive: bool,
    sql: tuple[str, str | None, str, str],
    limit: int,
    budget: int | None,
) -> list[int]:
    """Rowids from one trigram table holding every term (AND) or any (OR).

    `sql`: ranked MATCH, newest-first MATCH (None: always ranked), every
    scan, any scan. Past `budget` estimated matches, MATCH takes the newest.
    """
    ranked_sql, newest_sql, every_sql, any_sql = sql
    forms = [t.grams for t in terms]
    present = [g for g in forms if g is not None]
    matches = [g.match for g in present if g.match is not None]
    estimate = [g.entry_df for g in present if g.match is not None]
    if conjunctive:
        if len(present) < len(forms):
            return []  # a term the trigram index cannot hold: no row there has every one
        if not matches:
            return [r[0] for r in conn.execute(every_sql, (Grams.scans(present), limit))]
        sql_now = ranked_sql
        if newest_sql is not None and budget is not None and min(estimate) > budget:
            sql_now = newest_sql
        args = (fts.all_of(matches), Grams.scans(present), limit)
        return [r[0] for r in conn.execute(sql_now, args)]
    rows: list[int] = []
    if matches:
        sql_now = ranked_sql
        if newest_sql is not None and budget is not None and sum(estimate) > budget:
            sql_now = newest_sql
        rows += [r[0] for r in conn.execute(sql_now, (fts.any_of(matches), "[]", limit))]
    if len(matches) < len(present):
        rows += [r[0] for r in conn.execute(any_sql, (Grams.scans(present), limit))]
    return rows


def entries(
    conn: sqlite3.Connection, terms: Sequence[Term], conjunctive: bool, limit: int, budget: int
) -> list[int]:
    """Entry rowids (session number << 32 + sequence), best or newest first."""
    sql = (GRAM_ENTRY_RANKED, GRAM_ENTRY_NEWEST, GRAM_ENTRY_SCAN_EVERY, GRAM_ENTRY_SCAN_ANY)
    return _lists(conn, terms, conjunctive, sql, limit, budget)


def digests(
    conn: sqlite3.Connection, terms: Sequence[Term], conjunctive: bool, limit: int
) -> list[int]:
    """Chat numbers whose digest holds the terms, best first."""
    sql = (GRAM_DIGEST_RANKED, None, GRAM_DIGEST_SCAN_EVERY, GRAM_DIGEST_SCAN_ANY)
    return _lists(conn, terms, conjunctive, sql, limit, None)


def in_range(conn: sqlite3.Connection, text: str, low: int, high: int, limit: int) -> list[int]:
    """Rowids between `low` and `high` (one session) holding `text`, newest first.

    Within one session reading the rows is cheap, so a short word is found
    with instr() there instead of through the vocabulary.
    """
    if len(text) >= MIN_GRAM_CHARS:
        args: tuple[object, ...] = (fts.quote(text), low, high, limit)
        return [r[0] for r in conn.execute(GRAM_ENTRY_IN_RANGE, args)]
    args = (low, high, text.lower(), limit)
    return [r[0] for r in conn.execute(GRAM_ENTRY_SCAN_IN_RANGE, args)]


def contains(conn: sqlite3.Connection, grams: Grams, num: int, shift: int, mask: int) -> bool:
    """Whether chat `num` holds the term in an entry or its digest."""
    low = num << shift
    if grams.match is not None:
        return bool(
            conn.execute(GRAM_ENTRY_PROBE, (grams.match, low, low + mask)).fetchone()
            or conn.execute(GRAM_DIGEST_PROBE, (grams.match, num)).fetchone()
        )
    return bool(
        conn.execute(GRAM_ENTRY_SCAN_PROBE, (low, low + mask, grams.scan)).fetchone()
        or conn.execute(GRAM_DIGEST_SCAN_PROBE, (num, grams.scan)).fetchone()
    )


def entry_excerpt(conn: sqlite3.Connection, rowid: int, needles: Sequence[str]) -> str | None:
    """An excerpt of the entry, or None when the trigram index does not hold it."""
    row = conn.execute(GRAM_ENTRY_ROW, (rowid,)).fetchone()
    return excerpt(str(row[0]), needles) if row else None


def digest_excerpt(conn: sqlite3.Connection, num: int, needles: Sequence[str]) -> str | None:
    """An excerpt of the first digest column (title first) holding a needle."""
    lowered = [n.lower() for n in needles]
    for column in conn.execute(GRAM_DIGEST_ROW, (num,)).fetchone() or ():
        if any(n in str(column).lower() for n in lowered):
            return excerpt(str(column), needles)
    return None
