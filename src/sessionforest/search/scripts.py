"""Scripts written without spaces between words: Chinese, Japanese, Korean, Thai, ...

The word index makes a whole run of such characters one token, so a word inside
a clause cannot be found there; text containing them is also indexed by
character trigrams (grams.py). One list of code-point ranges serves the index
triggers (a GLOB class) and the query side (a regex), so both always agree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from .results import ELLIPSIS, MARK

# Thai and Lao; Myanmar; Hangul jamo; Khmer; CJK radicals, punctuation, kana,
# bopomofo and ideographs (extension A and the main block); Hangul syllables
# and jamo extensions; CJK compatibility ideographs; half-width katakana; CJK
# extensions B-G. Korean separates words by spaces, but particles attach to
# nouns ("데이터베이스가"), so it needs the same treatment.
SPACELESS_RANGES: Final = (
    (0x0E00, 0x0EFF),
    (0x1000, 0x109F),
    (0x1100, 0x11FF),
    (0x1780, 0x17FF),
    (0x2E80, 0x9FFF),
    (0xA960, 0xD7FF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x3134F),
)

# For SQL: `text GLOB SPACELESS_GLOB` is true when text holds such a character.
SPACELESS_GLOB: Final = "*[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in SPACELESS_RANGES) + "]*"
# UTF-8 lead bytes of the ranges below U+10000, except E2 (the CJK radicals
# share it with Latin punctuation such as "—" and "’"): a GLOB reads its class
# at every character (~30 us per 200), while instr() finds a byte at memchr
# speed, so the append trigger looks for these first. Text whose only such
# characters are radicals or extension B+ ideographs (always beside common
# ones in running text) is missed by this first look.
LEAD_BYTES: Final = tuple(
    sorted(
        {
            chr(c).encode()[0]
            for lo, hi in SPACELESS_RANGES
            if hi < 0x10000
            for c in range(lo, hi + 1, 64)
        }
        - {0xE2}
    )
)
_SPACELESS = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in SPACELESS_RANGES) + "]")

# Characters the trigram index appends to every text it holds, so that each
# character has two after it: a one- or two-character word is then always the
# start of some trigram, found by a prefix range over the vocabulary. Spaces,
# because a query word never holds one and `fts.quote` keeps them.
GRAM_PAD: Final = "  "

EXCERPT_CHARS: Final = 64


def spaceless(text: str) -> bool:
    """Whether `text` holds a character of a script written without spaces."""
    return _SPACELESS.search(text) is not None


def excerpt(text: str, needles: Sequence[str], width: int = EXCERPT_CHARS) -> str:
    """A snippet of `text` around the first needle, each needle marked (any case).

    Trigram rows are matched as substrings, which FTS5's snippet() cuts into
    three-character tokens; this cuts by characters instead.
    """
    if text.endswith(GRAM_PAD):
        text = text[: -len(GRAM_PAD)]
    wanted = sorted({n for n in needles if n}, key=len, reverse=True)
    if not wanted:
        return text[:width] + (ELLIPSIS if len(text) > width else "")
    pattern = re.compile("|".join(re.escape(n) for n in wanted), re.IGNORECASE)
    found = [m.span() for m in pattern.finditer(text)]
    first = found[0][0] if found else 0
    start = max(0, min(first - width // 4, len(text) - width))
    end = min(len(text), start + width)
    out = [ELLIPSIS] if start > 0 else []
    at = start
    for lo, hi in found:
        if hi <= start or lo >= end:
            continue
        lo, hi = max(lo, start), min(hi, end)
        out += [text[at:lo], MARK, text[lo:hi], MARK]
        at = hi
    out.append(text[at:end])
    if end < len(text):
        out.append(ELLIPSIS)
    return "".join(out)
