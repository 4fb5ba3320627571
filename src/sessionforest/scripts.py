"""Scripts written without spaces between words, and how search marks and cuts text.

Chinese, Japanese, Korean, Thai, ...: a word index makes a whole run of such
characters one token, so a backend also indexes text holding them for
substrings. A leaf module (only `re`): the search funnel and every search
backend classify text and mark snippets (`MARK`, `ELLIPSIS`) the same way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Final

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


@functools.cache
def _spaceless_pattern() -> re.Pattern[str]:
    # Compiled on first use: the character class takes milliseconds to build, which a
    # CLI call that never reads a text would pay at import.
    return re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in SPACELESS_RANGES) + "]")


MARK: Final = "**"  # around a matched word in a snippet
# The source's own emphasis (Markdown bold): left out, so every MARK is a match.
_SOURCE_MARKS: Final = re.compile(r"\*{2,}")
ELLIPSIS: Final = "…"  # where a snippet cuts text


def spaceless(text: str) -> bool:
    """Whether `text` holds a character of a script written without spaces."""
    return _spaceless_pattern().search(text) is not None


EXCERPT_CHARS: Final = 64


def excerpt(text: str, needles: Sequence[str], width: int = EXCERPT_CHARS) -> str:
    """A snippet of `text` around the first needle, each needle marked (any case).

    For text matched as substrings (spaceless scripts), which a word index's
    own snippets would cut mid-word: this cuts by characters instead.
    """
    wanted = sorted({n for n in needles if n}, key=len, reverse=True)
    if not wanted:
        return _unmarked(text[:width]) + (ELLIPSIS if len(text) > width else "")
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
        out += [_unmarked(text[at:lo]), MARK, _unmarked(text[lo:hi]), MARK]
        at = hi
    out.append(_unmarked(text[at:end]))
    if end < len(text):
        out.append(ELLIPSIS)
    return "".join(out)


def _unmarked(text: str) -> str:
    return _SOURCE_MARKS.sub("", text)
