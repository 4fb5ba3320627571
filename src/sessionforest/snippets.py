"""Snippets made in Python from a bounded window of a text: the one snippet maker
both search backends use.

FTS5's snippet() scores every match against every other one, so its cost grows
with the square of a word's repetitions inside one entry (40,000 repeats of
"error" took 14 s a search; issue 22), and PostgreSQL's ts_headline parses the
whole text. Here the cost is bounded per text: the text is scanned only in a
few windows of WINDOW_CHARS characters (its start, and around the first place
each wanted word's letters occur, found by `str.find` at C speed), and within
a window at most MAX_MATCHES matches are scored, in one pass.

A word matches when the backend's own tokenizer stems it as a wanted stem
(`Stemmer`: the index's tokenizer, so snippets agree with what matched). Only
words whose first letter could start a wanted stem are stemmed: stemming only
ever rewrites a word's ending. The source's own `**` (Markdown bold) is left out
of a snippet, so the only marks in one are the matches (`scripts.MARK`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Final

import msgspec

from .deadline import checkpoint
from .scripts import ELLIPSIS, MARK

# Runs of letters and digits: the tokens of FTS5's unicode61 and of the
# PostgreSQL index's WORDS_OF (underscores and punctuation separate words).
TOKEN: Final = re.compile(r"[^\W_]+")
# The source's own emphasis markers: a snippet's `**` must only ever be a match.
_SOURCE_MARKS: Final = re.compile(r"\*{2,}")
WINDOW_CHARS: Final = 8_192  # characters of text read per window
MAX_WINDOWS: Final = 8
MAX_MATCHES: Final = 256  # matches scored per window
FIND_TOKENS: Final = 12  # a find hit's snippet, in words (as FTS5's snippet() had it)
RECALL_TOKENS: Final = 16

Stemmer = Callable[[Sequence[str]], list[tuple[str, ...]]]


class Wanted(msgspec.Struct, frozen=True):
    """One term to mark: its stems in order (a phrase when several), whether the
    last may be the start of a longer stem, and the typed text (to find a window)."""

    stems: tuple[str, ...]
    typed: str
    prefix: bool = False


def _fold(char: str) -> str:
    """A word's first character as the index folds it (case, diacritics)."""
    base = unicodedata.normalize("NFKD", char.lower())
    return base[0] if base else char


class _Stems:
    """Words' stems through the backend's tokenizer, memoised for one snippet call."""

    def __init__(self, stem: Stemmer, firsts: frozenset[str]) -> None:
        self._stem = stem
        self._firsts = firsts
        self._known: dict[str, tuple[str, ...]] = {}

    def learn(self, words: Sequence[str]) -> None:
        new = [w for w in dict.fromkeys(words) if w not in self._known]
        maybe = [w for w in new if _fold(w[0]) in self._firsts]
        for word in new:
            self._known[word] = ()
        if maybe:
            for word, stems in zip(maybe, self._stem(maybe), strict=True):
                self._known[word] = stems

    def of(self, word: str) -> tuple[str, ...]:
        return self._known.get(word, ())


def _holds(own: tuple[str, ...], wanted: str, prefix: bool) -> bool:
    """Whether a word whose stems are `own` matches one wanted stem."""
    if prefix:
        return any(s.startswith(wanted) for s in own)
    return wanted in own


class _Fragment(msgspec.Struct, frozen=True):
    score: int
    first: int  # index of its first token in the window's token list
    start: int  # character span in the text
    end: int
    marks: tuple[tuple[int, int], ...]  # character spans of the matched words


def _windows(text: str, wanted: Sequence[Wanted]) -> list[tuple[int, int]]:
    """The start of the text and, per wanted term, around where its letters first occur."""
    if len(text) <= WINDOW_CHARS:
        return [(0, len(text))]
    spans = [(0, WINDOW_CHARS)]
    low = text.lower()
    for term in wanted:
        needles = {term.typed.lower().split()[0] if term.typed.split() else "", term.stems[0]}
        found = [p for n in needles if n and (p := low.find(n)) >= 0]
        if not found:
            continue
        at = min(found)
        lo = max(0, at - WINDOW_CHARS // 2)
        spans.append((lo, min(len(text), lo + WINDOW_CHARS)))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged[:MAX_WINDOWS]


def _best(
    text: str,
    span: tuple[int, int],
    wanted: Sequence[Wanted],
    stems: _Stems,
    width: int,
) -> _Fragment | None:
    """The window's best run of `width` tokens: most distinct terms, then most
    matches, earliest on ties (as FTS5's snippet() scores), matches centred."""
    lo, hi = span
    tokens = [(m.start(), m.end()) for m in TOKEN.finditer(text, lo, hi)]
    # A token cut by the window's edge is not a word of the text.
    if tokens and lo > 0 and tokens[0][0] == lo and text[lo - 1 : lo].isalnum():
        tokens.pop(0)
    if tokens and hi < len(text) and tokens[-1][1] == hi and text[hi : hi + 1].isalnum():
        tokens.pop()
    if not tokens:
        return None
    words = [text[a:b].lower() for a, b in tokens]
    stems.learn(words)
    found: list[tuple[int, int, int]] = []  # (first token, last token, term)
    for i, word in enumerate(words):
        if not stems.of(word):
            continue
        for t, term in enumerate(wanted):
            n = len(term.stems)
            if i + n <= len(words) and all(
                _holds(stems.of(words[i + k]), term.stems[k], term.prefix and k == n - 1)
                for k in range(n)
            ):
                found.append((i, i + n - 1, t))
        if len(found) >= MAX_MATCHES:
            break
    if not found:
        return None
    best: tuple[int, int, int] | None = None  # (score, -start token, index into found)
    j = 0
    for i, (first, _, _) in enumerate(found):
        # Matches starting within `width` tokens of this one.
        j = max(j, i)
        while j + 1 < len(found) and found[j + 1][1] < first + width:
            j += 1
        inside = found[i : j + 1]
        score = 1000 * len({t for _, _, t in inside}) + len(inside)
        if best is None or score > best[0]:
            best = (score, -first, i)
    assert best is not None
    score, _, i = best
    first = found[i][0]
    last = max(end for _, end, _ in found[i:] if end < first + width) if width else first
    # Centre the matched run in the fragment, within the window's tokens.
    room = width - (last - first + 1)
    begin = max(0, min(first - room // 2, len(tokens) - width))
    stop = min(len(tokens), begin + width)
    marks = tuple((tokens[a][0], tokens[b][1]) for a, b, _ in found if a >= begin and b < stop)
    return _Fragment(score, begin, tokens[begin][0], tokens[stop - 1][1], marks)


def _clean(text: str) -> str:
    return _SOURCE_MARKS.sub("", text)


def snippet(
    fields: str | Sequence[str], wanted: Sequence[Wanted], stem: Stemmer, width: int
) -> str | None:
    """A fragment of about `width` words with every wanted match marked: of the
    field (a text, or the first of several on a tie) whose best window holds the
    most distinct terms; None when no window of any field holds a match (the
    caller falls back to another text)."""
    texts = [fields] if isinstance(fields, str) else list(fields)
    wanted = [w for w in wanted if w.stems and w.stems[0]]
    if not wanted or width < 1:
        return None
    firsts = frozenset(_fold(s[0]) for w in wanted for s in w.stems if s)
    stems = _Stems(stem, firsts)
    chosen: tuple[_Fragment, str] | None = None
    for text in texts:
        if not text:
            continue
        for span in _windows(text, wanted):
            checkpoint()
            fragment = _best(text, span, wanted, stems, width)
            if fragment is not None and (chosen is None or fragment.score > chosen[0].score):
                chosen = (fragment, text)
    if chosen is None:
        return None
    fragment, text = chosen
    # The text's leading and trailing punctuation where the fragment reaches its ends.
    start = 0 if not TOKEN.search(text, 0, fragment.start) else fragment.start
    end = len(text) if not TOKEN.search(text, fragment.end) else fragment.end
    out = [ELLIPSIS] if start > 0 else []
    at = start
    for lo, hi in fragment.marks:
        out += [_clean(text[at:lo]), MARK, _clean(text[lo:hi]), MARK]
        at = hi
    out.append(_clean(text[at:end]))
    if end < len(text):
        out.append(ELLIPSIS)
    return "".join(out)


def asked(fields: str | Sequence[str], wanted: Sequence[Wanted]) -> list[str]:
    """The words `snippet` of these fields may ask its stemmer about (lower-cased,
    each once; a superset: the tokens a window's edge cuts are in it), so that a
    backend whose stemmer costs a round trip stems every hit's words at once."""
    texts = [fields] if isinstance(fields, str) else list(fields)
    wanted = [w for w in wanted if w.stems and w.stems[0]]
    firsts = frozenset(_fold(s[0]) for w in wanted for s in w.stems if s)
    found: dict[str, None] = {}
    for text in texts if wanted else ():
        for lo, hi in _windows(text, wanted) if text else ():
            for m in TOKEN.finditer(text, lo, hi):
                word = m.group().lower()
                if _fold(word[0]) in firsts:
                    found[word] = None
    return list(found)


def head(text: str, width: int) -> str:
    """The text's first `width` words, unmarked (a field that matched nothing visible)."""
    tokens = list(_first_tokens(text, width + 1))
    if len(tokens) <= width:
        return _clean(text)
    return _clean(text[: tokens[width - 1][1]]) + ELLIPSIS


def _first_tokens(text: str, n: int) -> list[tuple[int, int]]:
    out = []
    for m in TOKEN.finditer(text):
        out.append(m.span())
        if len(out) >= n:
            break
    return out
