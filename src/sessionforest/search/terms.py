"""T0's index half: which typed words to search for, ranked by document frequency.

Frequencies come from the fts5vocab tables of both indexes, looked up by the
stems the index tokenizer makes. Unknown words of four or more letters retry
as a prefix; words neither index has seen are reported, never searched. When
the store holds text in spaceless scripts, each word also gets its form in the
trigram index (`Grams`): found as a substring there.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import orjson

from . import fts
from .scripts import spaceless

MAX_TERMS: Final = 6
# Words looked up at most, in typed order: a pasted page is not a query.
MAX_WORDS: Final = 32
MIN_PREFIX_LETTERS: Final = 4

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

# The trigram index (search/grams.py), for text in spaceless scripts.
GRAMS_PRESENT = (
    "SELECT EXISTS (SELECT 1 FROM session_entry_grams), EXISTS (SELECT 1 FROM chat_digest_grams)"
)
GRAM_ENTRY_DF = "SELECT doc FROM session_entry_gram_vocab WHERE term = ?"
GRAM_DIGEST_DF = "SELECT doc FROM chat_digest_gram_vocab WHERE term = ?"
# The trigrams a one- or two-character word starts: every indexed character has
# two more after it (scripts.GRAM_PAD), so these are all its occurrences.
GRAM_ENTRY_STARTS = (
    "SELECT term, doc FROM session_entry_gram_vocab WHERE term >= ? AND term < ? LIMIT ?"
)
GRAM_DIGEST_STARTS = (
    "SELECT term, doc FROM chat_digest_gram_vocab WHERE term >= ? AND term < ? LIMIT ?"
)
MIN_GRAM_CHARS: Final = 3  # shorter text has no trigram of its own
# A short word starting more trigrams than this is common: listing them all
# would cost more than reading the rows, so it is found with instr() instead.
MAX_GRAM_STARTS: Final = 512


@dataclass(frozen=True, slots=True)
class Grams:
    """How a term is found in the trigram index: as a substring of the text."""

    match: str | None  # FTS5 expression over the trigram tables (through fts.quote)
    scan: str | None  # or: lower-cased text looked for with instr(), row by row
    entry_df: int  # entries that may hold it (an upper bound)
    digest_df: int

    @staticmethod
    def scans(forms: Sequence[Grams | None]) -> str:
        """The scan texts of `forms`, as the JSON array the SQL reads."""
        return orjson.dumps([g.scan for g in forms if g is not None and g.scan]).decode()


@dataclass(frozen=True, slots=True)
class Term:
    """One thing to search for: a typed word, a quoted phrase, or a word's prefix."""

    text: str
    tokens: tuple[str, ...]
    entry_df: int
    digest_df: int
    phrase: bool = False
    prefix: bool = False
    grams: Grams | None = None  # None: not in the trigram index (or the store has none)

    @property
    def df(self) -> int:
        if self.grams is None:
            return self.entry_df + self.digest_df
        return self.entry_df + self.digest_df + self.grams.entry_df + self.grams.digest_df

    @property
    def entries(self) -> int:
        """Entries that may match, in either index (for the read budgets)."""
        return self.entry_df + (self.grams.entry_df if self.grams is not None else 0)

    @property
    def label(self) -> str:
        if self.phrase:
            return f'"{self.text}"'
        return self.text + "*" if self.prefix else self.text

    def match(self) -> str:
        """This term as FTS5 syntax, through the one quoting function."""
        return fts.prefix(self.text) if self.prefix else fts.quote(self.text)


@dataclass(frozen=True, slots=True)
class TermChoice:
    kept: tuple[Term, ...]  # phrases first, then the rarest words
    unknown: tuple[str, ...]  # never seen by either index, not even as a prefix
    prefixed: tuple[str, ...]  # unknown words kept as a prefix
    dropped: tuple[str, ...]  # known words beyond the rarest six (or beyond MAX_WORDS)
    # The dropped words that were looked up, as terms: not searched, but the
    # gate checks the top chat against them too. Words beyond MAX_WORDS are
    # in `dropped` only, so they can never be confirmed.
    extra: tuple[Term, ...] = ()

    @property
    def unchecked(self) -> tuple[str, ...]:
        """Dropped words that are not in `extra` (never looked up)."""
        labels = {t.label for t in self.extra}
        return tuple(d for d in self.dropped if d not in labels)


class Vocabulary:
    """Document frequencies of stems in both indexes, memoised for one search."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._df: dict[str, tuple[int, int]] = {}
        self._gram_df: dict[str, tuple[int, int]] = {}
        self._has_grams: bool | None = None

    def _one(self, sql: str, *args: str) -> int:
        row = self._conn.execute(sql, args).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def df(self, token: str) -> tuple[int, int]:
        """(entries, digests) containing the stem `token`."""
        if token not in self._df:
            self._df[token] = (self._one(ENTRY_DF, token), self._one(DIGEST_DF, token))
        return self._df[token]

    def entry_df(self, token: str) -> int:
        return self.df(token)[0]

    def prefix_df(self, token: str) -> tuple[int, int]:
        high = token + _TOP
        return self._one(ENTRY_PREFIX_DF, token, high), self._one(DIGEST_PREFIX_DF, token, high)

    def has_grams(self) -> bool:
        """Whether the trigram index holds anything (never, in a Latin-only store)."""
        if self._has_grams is None:
            row = self._conn.execute(GRAMS_PRESENT).fetchone()
            self._has_grams = bool(row[0] or row[1])
        return self._has_grams

    def _trigram_df(self, gram: str) -> tuple[int, int]:
        if gram not in self._gram_df:
            self._gram_df[gram] = (self._one(GRAM_ENTRY_DF, gram), self._one(GRAM_DIGEST_DF, gram))
        return self._gram_df[gram]

    def grams(self, text: str) -> Grams | None:
        """`text`'s form in the trigram index, or None when it cannot occur there."""
        if not self.has_grams():
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


def _phrase_df(vocab: Vocabulary, tokens: Sequence[str]) -> tuple[int, int]:
    # A phrase occurs at most where its rarest token does.
    return min(vocab.df(t)[0] for t in tokens), min(vocab.df(t)[1] for t in tokens)


def choose_terms(
    vocab: Vocabulary,
    phrases: Sequence[str],
    words: Sequence[str],
    limit: int = MAX_TERMS,
) -> TermChoice:
    """Phrases, then known words rarest first, up to `limit`; the rest classified."""
    looked_up = list(words[:MAX_WORDS])
    overflow = list(words[MAX_WORDS:])
    tokens = fts.tokenizer().tokens([*phrases, *looked_up])
    unknown: list[str] = []
    prefixed: list[str] = []
    chosen_phrases: list[Term] = []
    for text, toks in zip(phrases, tokens[: len(phrases)], strict=True):
        if not toks:
            continue
        grams = vocab.grams(text)
        if all(sum(vocab.df(t)) for t in toks):
            entry_df, digest_df = _phrase_df(vocab, toks)
        elif grams is not None:
            entry_df = digest_df = 0  # only the trigram index can hold it
        else:
            unknown.append(f'"{text}"')  # it cannot match anywhere
            continue
        chosen_phrases.append(Term(text, toks, entry_df, digest_df, phrase=True, grams=grams))
    candidates: list[Term] = []
    for text, toks in zip(looked_up, tokens[len(phrases) :], strict=True):
        if not toks:
            continue  # punctuation or symbols only: nothing to search for
        grams = vocab.grams(text)
        if all(sum(vocab.df(t)) for t in toks):
            # A word of several tokens ("set_focus") is searched as their phrase.
            candidates.append(Term(text, toks, *_phrase_df(vocab, toks), grams=grams))
            continue
        if grams is not None:
            # Inside text in a spaceless script ("我们的数据库很慢", "用SQLite做").
            candidates.append(Term(text, toks, 0, 0, grams=grams))
            continue
        if len(toks) == 1 and len(text) >= MIN_PREFIX_LETTERS:
            entry_df, digest_df = vocab.prefix_df(toks[0])
            if entry_df + digest_df:
                prefixed.append(text)
                candidates.append(Term(text, toks, entry_df, digest_df, prefix=True))
                continue
        unknown.append(text)
    kept_phrases = chosen_phrases[:limit]
    room = limit - len(kept_phrases)
    # Stable sort: equally rare words keep their typed order.
    ranked = sorted(candidates, key=lambda t: t.df)
    kept_words = ranked[:room]
    dropped = [t.label for t in ranked[room:]] + overflow
    kept = tuple(kept_phrases) + tuple(sorted(kept_words, key=candidates.index))
    extra = tuple(ranked[room:])
    return TermChoice(kept, tuple(unknown), tuple(prefixed), tuple(dropped), extra)


def exclusions(vocab: Vocabulary, words: Sequence[str]) -> tuple[Term, ...]:
    """The `-word`s as terms a chat is checked against; words no index has
    seen cannot be in any chat and are left out."""
    out: list[Term] = []
    for text, toks in zip(words, fts.tokenizer().tokens(list(words)), strict=True):
        if not toks:
            continue
        grams = vocab.grams(text)
        if all(sum(vocab.df(t)) for t in toks):
            out.append(Term(text, toks, *_phrase_df(vocab, toks), grams=grams))
        elif grams is not None:
            out.append(Term(text, toks, 0, 0, grams=grams))
    return tuple(out)
