"""`SQLiteSearch`: the SearchIndex primitives over the FTS5 word and trigram indexes.

One instance serves one search inside one read transaction (the connection it
is given is already in it). Chat keys are search_sessions.num, entry keys the
index rowids (num << 32 + sequence); terms reach FTS5 only through fts.match.
Each primitive reads the word index first, then adds substring matches from
the trigram index (grams.py) where a term can occur in spaceless-script text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Final

import orjson

from .... import snippets
from ....deadline import checkpoint
from ...base import ChatEvidence, ChatKey, ChatRow, EntryKey, Landing, Spaceless, Term
from ...base.search import (
    chat_evidence_alone,
    contains_each_alone,
    entry_sequences_alone,
    shown_alone,
    then_missing,
)
from ...sql.visibility import FINDABLE, LISTED
from .. import paths
from . import fts, grams
from .grams import Grams, GramVocabulary
from .recall import ACTIVE_SEQUENCES, SESSION_NUM, SQLiteSessionIndex
from .schema import SEQUENCE_MASK, SESSION_SHIFT

# The trigram leg decides for itself whether bm25 can afford to rank a MATCH
# (the word leg is told by the funnel): past this many estimated matches it
# takes the newest rows instead, as the word index does past the funnel's budget.
GRAM_RANK_BUDGET: Final = 10_000

ENTRY_DF = "SELECT doc FROM session_entry_vocab WHERE term = ?"
DIGEST_DF = "SELECT doc FROM chat_digest_vocab WHERE term = ?"
# Summed over every stem with the prefix: an upper bound on the documents.
ENTRY_PREFIX_DF = (
    "SELECT coalesce(sum(doc), 0) FROM session_entry_vocab WHERE term >= ? AND term < ?"
)
DIGEST_PREFIX_DF = (
    "SELECT coalesce(sum(doc), 0) FROM chat_digest_vocab WHERE term >= ? AND term < ?"
)
_TOP = "\U0010ffff"  # sorts after every continuation of a prefix

# bm25 is lower-is-better. What was said weighs four times what a tool said
# (text, tool, session_id): a chat that talks about the words ranks above one
# whose tool output holds them. Equal ranks go newest first (rowid DESC), as on
# PostgreSQL, so the list's order, and find's, is the same every time.
ENTRY_WEIGHTS: Final = "bm25(1.0, 0.25, 0.0)"
ENTRY_RANKED = (
    "SELECT rowid FROM session_entry_fts WHERE session_entry_fts MATCH ? "
    f"AND rank MATCH '{ENTRY_WEIGHTS}' ORDER BY rank, rowid DESC LIMIT ?"
)
# Index rowids grow with session numbers, so rowid order is newest chats first.
ENTRY_NEWEST = (
    "SELECT rowid FROM session_entry_fts WHERE session_entry_fts MATCH ? "
    "ORDER BY rowid DESC LIMIT ?"
)
# A title describes a chat best; the first reply less than what the user asked.
# Equal ranks: the newest chat first.
DIGEST_RANKED = (
    "SELECT rowid FROM chat_digest_fts WHERE chat_digest_fts MATCH ? "
    "AND rank MATCH 'bm25(4.0, 1.0, 0.5, 1.0)' ORDER BY rank, rowid DESC LIMIT ?"
)
# A find hit's entry by its key: the session's id (for the active-branch walk) and the entry's.
LANDING = """
SELECT s.session_id, e.id FROM search_sessions s
JOIN session_entries e ON e.session_id = s.session_id AND e.sequence = ? WHERE s.num = ?
"""
# The head, and the materialised path's tip and length (paths.py): trusted when the tip is the head.
HEAD_PATH = "SELECT active_entry_id, path_tip, path_length FROM session_heads WHERE session_id = ?"
# The activity span comes from search_sessions: no session_entries rows are read.
_CHAT_COLUMNS = """m.num, s.id, s.title, s.harness, s.status, s.created_at, m.first_at, m.last_at,
       s.visibility <> 'top-level'
FROM search_sessions m JOIN sessions s ON s.id = m.session_id WHERE s.quarantine IS NULL"""
# Which chats a match may be in, and which are listed: store/sql/visibility.py.
CHATS_BY_NUM = (
    f"SELECT {_CHAT_COLUMNS} AND {FINDABLE} AND m.num IN (SELECT value FROM json_each(?))"
)
ALL_CHATS = f"SELECT {_CHAT_COLUMNS} AND {LISTED}"
ENTRY_PROBE = (
    "SELECT 1 FROM session_entry_fts WHERE session_entry_fts MATCH ? "
    "AND rowid BETWEEN ? AND ? LIMIT 1"
)
ENTRY_ROWIDS = "SELECT rowid FROM session_entry_fts WHERE session_entry_fts MATCH ? LIMIT ?"
# Counted inside SQLite: no row crosses into Python (~2x faster on common words).
ENTRY_COUNTS = (
    f"SELECT rowid >> {SESSION_SHIFT}, count(*) FROM (SELECT rowid FROM session_entry_fts "
    "WHERE session_entry_fts MATCH ? LIMIT ?) GROUP BY 1"
)
# One pass over the term's doclist, keeping the rows of the chats asked about
# (a rowid range per chat would reload the doclist for each).
ENTRY_ROWIDS_OF = (
    f"SELECT rowid FROM session_entry_fts WHERE session_entry_fts MATCH ? "
    f"AND (rowid >> {SESSION_SHIFT}) IN (SELECT value FROM json_each(?)) LIMIT ?"
)
DIGEST_ROWIDS = "SELECT rowid FROM chat_digest_fts WHERE chat_digest_fts MATCH ? LIMIT ?"
CHAT_COUNT = "SELECT count(*) FROM search_sessions"
DIGEST_PROBE = "SELECT 1 FROM chat_digest_fts WHERE chat_digest_fts MATCH ? AND rowid = ?"
# Snippets are made in Python from the stored text (snippets.py): FTS5's
# snippet() costs the square of a word's repetitions in one row.
ENTRY_TEXT = "SELECT text, tool FROM session_entry_fts WHERE rowid = ?"
DIGEST_TEXT = (
    "SELECT title, first_message, first_reply, summary FROM chat_digest_fts WHERE rowid = ?"
)
HARNESSES = "SELECT DISTINCT harness FROM sessions WHERE harness <> ''"
# A chat's size is the sequence of its last indexed entry: one seek down the
# index's docsize B-tree per chat (counting the range would walk every row).
CHAT_SIZES = f"""
SELECT k.value, (SELECT max(d.id) FROM session_entry_fts_docsize d
                 WHERE d.id BETWEEN k.value << {SESSION_SHIFT}
                                AND (k.value << {SESSION_SHIFT}) + {SEQUENCE_MASK})
FROM json_each(?) AS k
"""


def wanted_of(terms: Sequence[Term]) -> list[snippets.Wanted]:
    """What a snippet marks: each term's stems (a phrase when several)."""
    return [snippets.Wanted(t.tokens, t.text, t.prefix) for t in terms if t.tokens]


class SQLiteSearch:
    """The SearchIndex of one SQLite store, bound to one read transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._grams = GramVocabulary(conn)

    def _one(self, sql: str, *args: str) -> int:
        row = self._conn.execute(sql, args).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def _forms(self, terms: Sequence[Term]) -> list[Grams | None]:
        return [self._grams.form(t.text) if t.spaceless is not None else None for t in terms]

    # --- choosing terms ---

    def tokens(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        return fts.tokenizer().tokens(texts)

    def frequency(self, stem: str) -> tuple[int, int]:
        return self._one(ENTRY_DF, stem), self._one(DIGEST_DF, stem)

    def prefix_frequency(self, stem: str) -> tuple[int, int]:
        high = stem + _TOP
        return self._one(ENTRY_PREFIX_DF, stem, high), self._one(DIGEST_PREFIX_DF, stem, high)

    def spaceless(self, text: str) -> Spaceless | None:
        form = self._grams.form(text)
        return form.frequencies if form is not None else None

    # --- the lists T1 fuses ---

    def chat_count(self) -> int:
        return int(self._conn.execute(CHAT_COUNT).fetchone()[0])

    def chat_sizes(self, keys: Iterable[ChatKey]) -> dict[ChatKey, int]:
        wanted = orjson.dumps(sorted(set(keys))).decode()
        rows = self._conn.execute(CHAT_SIZES, (wanted,))
        return {num: (last & SEQUENCE_MASK) if last is not None else 0 for num, last in rows}

    def entry_matches(
        self, terms: Sequence[Term], *, conjunctive: bool, ranked: bool, limit: int
    ) -> list[tuple[ChatKey, EntryKey]]:
        combine = fts.all_of if conjunctive else fts.any_of
        expr = combine(fts.match(t) for t in terms)
        sql = ENTRY_RANKED if ranked else ENTRY_NEWEST
        rows = [r[0] for r in self._conn.execute(sql, (expr, limit))]
        forms = self._forms(terms)
        if grams.used(forms):
            # Word matches first, then substrings in text of spaceless scripts.
            more = grams.entries(self._conn, forms, conjunctive, limit, GRAM_RANK_BUDGET)
            rows = then_missing(rows, more)
        return [(row >> SESSION_SHIFT, row) for row in rows]

    def digest_matches(
        self, terms: Sequence[Term], *, conjunctive: bool, ranked: bool, limit: int
    ) -> list[ChatKey]:
        combine = fts.all_of if conjunctive else fts.any_of
        expr = combine(fts.match(t) for t in terms)
        sql = DIGEST_RANKED if ranked else DIGEST_ROWIDS
        nums = [r[0] for r in self._conn.execute(sql, (expr, limit))]
        forms = self._forms(terms)
        if grams.used(forms):
            nums = then_missing(nums, grams.digests(self._conn, forms, conjunctive, limit))
        return nums

    def entry_counts(self, term: Term, limit: int) -> dict[ChatKey, int]:
        [form] = self._forms([term])
        if form is None or not form.entry_df:
            if not term.entry_df:
                return {}
            said = fts.said(fts.match(term))
            return dict(self._conn.execute(ENTRY_COUNTS, (said, limit)).fetchall())
        # Words and substrings: an entry may hold both, so rows are told apart first.
        rows: set[int] = set()
        if term.entry_df:
            said = fts.said(fts.match(term))
            rows.update(r[0] for r in self._conn.execute(ENTRY_ROWIDS, (said, limit)))
        rows.update(grams.entries(self._conn, [form], False, limit, GRAM_RANK_BUDGET))
        counts: dict[ChatKey, int] = {}
        for rowid in rows:
            num = rowid >> SESSION_SHIFT
            counts[num] = counts.get(num, 0) + 1
        return counts

    def entry_sequences(
        self, term: Term, chats: Iterable[ChatKey], limit: int
    ) -> dict[ChatKey, list[int]]:
        wanted = set(chats)
        rows: set[int] = set()
        if term.entry_df and wanted:
            said = fts.said(fts.match(term))
            args = (said, orjson.dumps(sorted(wanted)).decode(), limit)
            rows.update(r[0] for r in self._conn.execute(ENTRY_ROWIDS_OF, args))
        [form] = self._forms([term])
        if form is not None and form.entry_df and wanted:
            more = grams.entries(self._conn, [form], False, limit, GRAM_RANK_BUDGET)
            rows.update(r for r in more if r >> SESSION_SHIFT in wanted)
        found: dict[ChatKey, list[int]] = {}
        for rowid in sorted(rows):
            found.setdefault(rowid >> SESSION_SHIFT, []).append(rowid & SEQUENCE_MASK)
        return found

    def chat_evidence(self, terms: Sequence[Term], limit: int) -> ChatEvidence:
        # In process a list costs no round trip; a search whose client went away
        # stops between terms.
        return chat_evidence_alone(self, terms, limit, checkpoint)

    def entry_sequences_each(
        self, terms: Sequence[Term], chats: Iterable[ChatKey], limit: int
    ) -> list[dict[ChatKey, list[int]]]:
        return entry_sequences_alone(self, terms, chats, limit)

    def contains(self, chat: ChatKey, term: Term) -> bool:
        low = chat << SESSION_SHIFT
        match = fts.match(term)
        conn = self._conn
        if (
            conn.execute(ENTRY_PROBE, (match, low, low + SEQUENCE_MASK)).fetchone()
            or conn.execute(DIGEST_PROBE, (match, chat)).fetchone()
        ):
            return True
        [form] = self._forms([term])
        return form is not None and grams.contains(conn, form, chat, SESSION_SHIFT, SEQUENCE_MASK)

    def contains_each(self, pairs: Sequence[tuple[ChatKey, Term]]) -> list[bool]:
        return contains_each_alone(self, pairs)  # in process, a probe costs no round trip

    # --- chats and what is shown of them ---

    def chats(self, keys: Iterable[ChatKey]) -> list[ChatRow]:
        wanted = orjson.dumps(sorted(set(keys))).decode()
        return list(map(ChatRow._make, self._conn.execute(CHATS_BY_NUM, (wanted,))))

    def all_chats(self) -> list[ChatRow]:
        return list(map(ChatRow._make, self._conn.execute(ALL_CHATS)))

    def harnesses(self) -> list[str]:
        return [row[0] for row in self._conn.execute(HARNESSES)]

    def snippet(self, chat: ChatKey, entry: EntryKey | None, terms: Sequence[Term]) -> str:
        """An excerpt of the entry (or, without one, of the digest) marking `terms`;
        when a term can occur in the trigram index, an excerpt of a row from there
        takes precedence."""
        conn = self._conn
        needles = [t.text for t in terms] if grams.used(self._forms(terms)) else None
        wanted = wanted_of(terms)
        stem = fts.tokenizer().tokens
        if entry is not None:
            if needles is not None:
                found = grams.entry_excerpt(conn, entry, needles)
                if found is not None:
                    return found
            row = conn.execute(ENTRY_TEXT, (entry,)).fetchone()
            if row and (row[0] or row[1]):
                # What was said first; the tool field when only it holds the words.
                fields = [str(row[0] or ""), str(row[1] or "")]
                made = snippets.snippet(fields, wanted, stem, snippets.FIND_TOKENS)
                if made is not None:
                    return made
                return snippets.head(fields[0] or fields[1], snippets.FIND_TOKENS)
        row = conn.execute(DIGEST_TEXT, (chat,)).fetchone()
        if row:
            made = snippets.snippet([str(c or "") for c in row], wanted, stem, snippets.FIND_TOKENS)
            if made is not None:
                return made
        if needles is not None:
            return grams.digest_excerpt(conn, chat, needles) or ""
        return ""

    def landing(self, entry: EntryKey) -> Landing | None:
        sequence = entry & SEQUENCE_MASK
        row = self._conn.execute(LANDING, (sequence, entry >> SESSION_SHIFT)).fetchone()
        if row is None:
            return None
        return Landing(row[1], sequence, self._on_path(row[0], sequence))

    def shown(
        self, hits: Sequence[tuple[ChatKey, EntryKey | None]], terms: Sequence[Term]
    ) -> list[tuple[str, Landing | None]]:
        # A search whose client went away stops between snippets.
        return shown_alone(self, hits, terms, checkpoint)

    def _on_path(self, session_id: str, sequence: int) -> bool:
        """Whether the entry at `sequence` is on the active path: by the materialised
        path's segments when they describe the head's path (a few rows), else by
        walking the parent links from the head (as many rows as the path is long)."""
        head = self._conn.execute(HEAD_PATH, (session_id,)).fetchone()
        if head is not None and head[0] is not None and head[1] == head[0] and head[2]:
            ranges = paths.spans(self._conn, session_id, head[2], 0)
            if ranges is not None:
                return any(low <= sequence <= high for low, high in ranges)
        walk = self._conn.execute(ACTIVE_SEQUENCES, {"sid": session_id, "oldest": sequence})
        return any(r[0] == sequence for r in walk)

    # --- recall ---

    def session(self, session_id: str) -> SQLiteSessionIndex | None:
        row = self._conn.execute(SESSION_NUM, (session_id,)).fetchone()
        return SQLiteSessionIndex(self._conn, session_id, row[0]) if row else None
