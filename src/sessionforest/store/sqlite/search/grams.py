"""Lookups in the trigram index, for text in spaceless scripts (sessionforest.scripts).

The SearchIndex primitives read the word index and add what these return:
rows where a term occurs as a substring. A term's form here is `Grams`: a
MATCH over trigrams, or, for a short word that starts too many trigrams to
list, text found by instr() row by row. Rows are excerpted here too, by
characters (`excerpt`), since FTS5 snippets of trigrams cut mid-word.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Final

import msgspec
import orjson

from .... import scripts
from ....scripts import EXCERPT_CHARS, spaceless
from ...base import Spaceless
from . import fts
from .schema import GRAM_PAD

MIN_GRAM_CHARS: Final = 3  # shorter text has no trigram of its own
# A short word starting more trigrams than this is common: listing them all
# would cost more than reading the rows, so it is found with instr() instead.
MAX_GRAM_STARTS: Final = 512
_TOP = "\U0010ffff"  # sorts after every continuation of a prefix

GRAMS_PRESENT = (
    "SELECT EXISTS (SELECT 1 FROM session_entry_grams), EXISTS (SELECT 1 FROM chat_digest_grams)"
)
GRAM_ENTRY_DF = "SELECT doc FROM session_entry_gram_vocab WHERE term = ?"
GRAM_DIGEST_DF = "SELECT doc FROM chat_digest_gram_vocab WHERE term = ?"
# The trigrams a one- or two-character word starts: every indexed character has
# two more after it (schema.GRAM_PAD), so these are all its occurrences.
GRAM_ENTRY_STARTS = (
    "SELECT term, doc FROM session_entry_gram_vocab WHERE term >= ? AND term < ? LIMIT ?"
)
GRAM_DIGEST_STARTS = (
    "SELECT term, doc FROM chat_digest_gram_vocab WHERE term >= ? AND term < ? LIMIT ?"
)

# The same reads as retrieve.py and recall.py make of the word index. Scan
# texts come as a JSON array: every one must occur under AND, any one under OR.
_EVERY_SCAN = "NOT EXISTS (SELECT 1 FROM json_each(?) WHERE instr(lower({text}), value) = 0)"
_ANY_SCAN = "EXISTS (SELECT 1 FROM json_each(?) WHERE instr(lower({text}), value) > 0)"
_ENTRY_TEXT = "text"
_DIGEST_TEXT = "title || first_message || first_reply || summary"
GRAM_ENTRY_RANKED = (
    "SELECT rowid FROM session_entry_grams WHERE session_entry_grams MATCH ? AND "
    + _EVERY_SCAN.format(text=_ENTRY_TEXT)
    + " ORDER BY rank, rowid DESC LIMIT ?"
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
    + " ORDER BY rank, rowid DESC LIMIT ?"
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


class Grams(msgspec.Struct, frozen=True):
    """How a term is found in the trigram index: as a substring of the text."""

    match: str | None  # FTS5 expression over the trigram tables (through fts.quote)
    scan: str | None  # or: lower-cased text looked for with instr(), row by row
    entry_df: int  # entries that may hold it (an upper bound)
    digest_df: int

    @staticmethod
    def scans(forms: Sequence[Grams | None]) -> str:
        """The scan texts of `forms`, as the JSON array the SQL reads."""
        return orjson.dumps([g.scan for g in forms if g is not None and g.scan]).decode()

    @property
    def frequencies(self) -> Spaceless:
        return Spaceless(self.entry_df, self.digest_df)


class GramVocabulary:
    """Terms' forms in the trigram index, from its vocabularies, memoised for one search."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._df: dict[str, tuple[int, int]] = {}
        self._forms: dict[str, Grams | None] = {}
        self._present: bool | None = None

    def _one(self, sql: str, *args: str) -> int:
        row = self._conn.execute(sql, args).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def present(self) -> bool:
        """Whether the trigram index holds anything (never, in a Latin-only store)."""
        if self._present is None:
            row = self._conn.execute(GRAMS_PRESENT).fetchone()
            self._present = bool(row[0] or row[1])
        return self._present

    def _trigram_df(self, gram: str) -> tuple[int, int]:
        if gram not in self._df:
            self._df[gram] = (self._one(GRAM_ENTRY_DF, gram), self._one(GRAM_DIGEST_DF, gram))
        return self._df[gram]

    def form(self, text: str) -> Grams | None:
        """`text`'s form in the trigram index, or None when it cannot occur there."""
        if text not in self._forms:
            self._forms[text] = self._form(text)
        return self._forms[text]

    def _form(self, text: str) -> Grams | None:
        if not self.present():
            return None
        folded = text.lower()
        if len(folded) >= MIN_GRAM_CHARS:
            trigrams = fts.tokenizer(fts.GRAMS).tokens([text])[0]
            if not trigrams:
                return None
            # A substring occurs at most where its rarest trigram does.
            entry_df = min(self._trigram_df(g)[0] for g in trigrams)
            digest_df = min(self._trigram_df(g)[1] for g in trigrams)
            return (
                Grams(fts.quote(text), None, entry_df, digest_df) if entry_df + digest_df else None
            )
        if not spaceless(folded):
            return None  # a one- or two-letter Latin word is found as a word only
        args = (folded, folded + _TOP, MAX_GRAM_STARTS + 1)
        entry = dict(self._conn.execute(GRAM_ENTRY_STARTS, args).fetchall())
        digest = dict(self._conn.execute(GRAM_DIGEST_STARTS, args).fetchall())
        entry_df, digest_df = sum(entry.values()), sum(digest.values())
        starts = sorted(entry.keys() | digest.keys())
        if not starts:
            return None
        if len(entry) > MAX_GRAM_STARTS or len(digest) > MAX_GRAM_STARTS:
            return Grams(None, folded, entry_df, digest_df)
        return Grams(fts.any_of(fts.quote(g) for g in starts), None, entry_df, digest_df)


def used(forms: Sequence[Grams | None]) -> bool:
    """Whether any term can occur in the trigram index (never in a Latin-only store)."""
    return any(g is not None for g in forms)


def _lists(
    conn: sqlite3.Connection,
    forms: Sequence[Grams | None],
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
    conn: sqlite3.Connection,
    forms: Sequence[Grams | None],
    conjunctive: bool,
    limit: int,
    budget: int,
) -> list[int]:
    """Entry rowids (session number << 32 + sequence), best or newest first."""
    sql = (GRAM_ENTRY_RANKED, GRAM_ENTRY_NEWEST, GRAM_ENTRY_SCAN_EVERY, GRAM_ENTRY_SCAN_ANY)
    return _lists(conn, forms, conjunctive, sql, limit, budget)


def digests(
    conn: sqlite3.Connection, forms: Sequence[Grams | None], conjunctive: bool, limit: int
) -> list[int]:
    """Chat numbers whose digest holds the terms, best first."""
    sql = (GRAM_DIGEST_RANKED, None, GRAM_DIGEST_SCAN_EVERY, GRAM_DIGEST_SCAN_ANY)
    return _lists(conn, forms, conjunctive, sql, limit, None)


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


def excerpt(text: str, needles: Sequence[str], width: int = EXCERPT_CHARS) -> str:
    """`scripts.excerpt` of a trigram row's text (without the pad the index adds)."""
    if text.endswith(GRAM_PAD):
        text = text[: -len(GRAM_PAD)]
    return scripts.excerpt(text, needles, width)
