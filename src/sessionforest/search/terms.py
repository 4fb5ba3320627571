"""T0's index half: which typed words to search for, ranked by document frequency.

Frequencies come from the fts5vocab tables of both indexes, looked up by the
stems the index tokenizer makes. Unknown words of four or more letters retry
as a prefix; words neither index has seen are reported, never searched.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from . import fts

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


@dataclass(frozen=True, slots=True)
class Term:
    """One thing to search for: a typed word, a quoted phrase, or a word's prefix."""

    text: str
    tokens: tuple[str, ...]
    entry_df: int
    digest_df: int
    phrase: bool = False
    prefix: bool = False

    @property
    def df(self) -> int:
        return self.entry_df + self.digest_df

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
        if not all(sum(vocab.df(t)) for t in toks):
            unknown.append(f'"{text}"')  # it cannot match anywhere
            continue
        entry_df, digest_df = _phrase_df(vocab, toks)
        chosen_phrases.append(Term(text, toks, entry_df, digest_df, phrase=True))
    candidates: list[Term] = []
    for text, toks in zip(looked_up, tokens[len(phrases) :], strict=True):
        if not toks:
            continue  # punctuation or symbols only: nothing to search for
        if all(sum(vocab.df(t)) for t in toks):
            # A word of several tokens ("set_focus") is searched as their phrase.
            candidates.append(Term(text, toks, *_phrase_df(vocab, toks)))
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
