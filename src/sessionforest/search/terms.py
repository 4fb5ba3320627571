"""T0's index half: which typed words to search for, ranked by document frequency.

Frequencies are the search backend's (SearchIndex), looked up by the stems its
tokenizer makes, so they agree with its index. Unknown words of four or more
letters retry as a prefix; words the index has never seen are reported, never
searched. Where the store holds text in spaceless scripts, each word also gets
its substring frequencies there (`Term.spaceless`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

from ..store.base import SearchIndex, Spaceless, Term

__all__ = ["Term", "TermChoice", "Vocabulary", "choose_terms", "exclusions", "typed_line"]

MAX_TERMS: Final = 6
# Words looked up at most, in typed order: a pasted page is not a query.
MAX_WORDS: Final = 32
MIN_PREFIX_LETTERS: Final = 4
# A query of at least this many tokens is also looked for as the line it is (an
# error, a command). Fewer are a topic's words, where a chat that talks about
# them still ranks above a tool output holding them in that order.
MIN_LINE_TOKENS: Final = 4


class TermChoice(msgspec.Struct, frozen=True):
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
    """A search's view of the index vocabulary: frequencies memoised for one search."""

    def __init__(self, index: SearchIndex) -> None:
        self._index = index
        self._df: dict[str, tuple[int, int]] = {}
        self._tokens: dict[str, tuple[str, ...]] = {}

    def learn(self, texts: Sequence[str]) -> None:
        """Tokenize these texts now, in one call of the index (one round trip on a
        server): a search names up front every text it will ask `tokens` about."""
        new = [t for t in dict.fromkeys(texts) if t not in self._tokens]
        if new:
            self._tokens.update(zip(new, self._index.tokens(new), strict=True))

    def tokens(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """The index's stems of each text (memoised for the search)."""
        self.learn(texts)
        return [self._tokens[t] for t in texts]

    def df(self, token: str) -> tuple[int, int]:
        """(entries, digests) containing the stem `token`."""
        if token not in self._df:
            self._df[token] = self._index.frequency(token)
        return self._df[token]

    def entry_df(self, token: str) -> int:
        return self.df(token)[0]

    def prefix_df(self, token: str) -> tuple[int, int]:
        return self._index.prefix_frequency(token)

    def spaceless(self, text: str) -> Spaceless | None:
        """`text`'s substring frequencies in spaceless-script text (None: cannot occur)."""
        return self._index.spaceless(text)


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
    tokens = vocab.tokens([*phrases, *looked_up])
    unknown: list[str] = []
    prefixed: list[str] = []
    chosen_phrases: list[Term] = []
    for text, toks in zip(phrases, tokens[: len(phrases)], strict=True):
        if not toks:
            continue
        substring = vocab.spaceless(text)
        if all(sum(vocab.df(t)) for t in toks):
            entry_df, digest_df = _phrase_df(vocab, toks)
        elif substring is not None:
            entry_df = digest_df = 0  # only as a substring in spaceless-script text
        else:
            unknown.append(f'"{text}"')  # it cannot match anywhere
            continue
        chosen_phrases.append(
            Term(text, toks, entry_df, digest_df, phrase=True, spaceless=substring)
        )
    candidates: list[Term] = []
    for text, toks in zip(looked_up, tokens[len(phrases) :], strict=True):
        if not toks:
            continue  # punctuation or symbols only: nothing to search for
        substring = vocab.spaceless(text)
        if all(sum(vocab.df(t)) for t in toks):
            # A word of several tokens ("set_focus") is searched as their phrase.
            candidates.append(Term(text, toks, *_phrase_df(vocab, toks), spaceless=substring))
            continue
        if substring is not None:
            # Inside text in a spaceless script ("我们的数据库很慢", "用SQLite做").
            candidates.append(Term(text, toks, 0, 0, spaceless=substring))
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


def typed_line(vocab: Vocabulary, text: str, kept: Sequence[Term]) -> Term | None:
    """The whole typed text as one phrase (an error line, a command, a sentence),
    stopwords and punctuation-joined parts included: None when it is one word, when
    it adds nothing to the one term kept, or when it is longer than a line. Its
    frequencies are the rarest kept term's (a bound: every entry holding the line
    holds that term); its stopwords are never looked up, which for "the" costs a
    walk of its whole posting list."""
    tokens = tuple(t for toks in vocab.tokens([text]) for t in toks)
    if len(tokens) < MIN_LINE_TOKENS or len(tokens) > MAX_WORDS or not kept:
        return None
    if len(kept) == 1 and kept[0].tokens == tokens:
        return None  # a single code name ("build_wheel") is searched as this phrase already
    entry_df = min(t.entry_df for t in kept)
    digest_df = min(t.digest_df for t in kept)
    return Term(text, tokens, entry_df, digest_df, phrase=True)


def exclusions(vocab: Vocabulary, words: Sequence[str]) -> tuple[Term, ...]:
    """The `-word`s as terms a chat is checked against; words no index has
    seen cannot be in any chat and are left out."""
    out: list[Term] = []
    for text, toks in zip(words, vocab.tokens(list(words)), strict=True):
        if not toks:
            continue
        substring = vocab.spaceless(text)
        if all(sum(vocab.df(t)) for t in toks):
            out.append(Term(text, toks, *_phrase_df(vocab, toks), spaceless=substring))
        elif substring is not None:
            out.append(Term(text, toks, 0, 0, spaceless=substring))
    return tuple(out)
