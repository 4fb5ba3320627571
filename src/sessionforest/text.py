"""Text for one line of a terminal: escaping control characters, plurals, previews.

A leaf module (only `re`): the model's reports, the CLI and the renderers all
word things the same way through it.
"""

from __future__ import annotations

import re

# What could break a line of output or change how it reads: C0 and C1 controls
# (NUL, newline, ESC starting a terminal sequence, ...), the Unicode line and
# paragraph separators, the bidi controls that reorder text on screen (U+202E
# makes "exe.txt" read "txt.exe"), and lone surrogates (undecodable bytes).
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_SPACES = re.compile(" {2,}")


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str) -> str:
    """`text` safe for one line of a terminal: every control character shown as an escape.

    A newline becomes `\\n`, NUL `\\x00`, ESC `\\x1b`, U+202E `\\u202e`: visible,
    never dropped, never acted on. Backslashes are left alone, so this is for
    reading, not for round trips (`--json` output is exact).
    """
    return _CONTROL.sub(_escaped, text) if _CONTROL.search(text) else text


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 chat`, `2 chats`, `0 entries` (pass `many` where adding an s is wrong)."""
    if count == 1:
        return f"{count} {word}"
    return f"{count} {many if many is not None else word + 's'}"


def preview(text: str, width: int = 60) -> str:
    """`text` on one line, cut to `width` characters with `…`.

    Runs of spaces shrink to one and control characters are escaped (a newline
    shows as `\\n`); a cut never splits an escape.
    """
    flat = _SPACES.sub(" ", text).strip(" ")
    head = flat[:width]
    if not _CONTROL.search(head):
        return head if len(flat) <= width else head[: max(width - 1, 0)] + "…"
    pieces: list[str] = []
    used = 0
    for char in head:
        shown = _CONTROL.sub(_escaped, char)
        if used + len(shown) > width:
            break
        pieces.append(shown)
        used += len(shown)
    else:
        if len(flat) <= width:
            return "".join(pieces)
    while pieces and used + 1 > width:
        used -= len(pieces.pop())
    return "".join(pieces) + "…"
