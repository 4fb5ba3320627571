"""The one door from user text to FTS5 syntax, and the tokenizer both sides share.

Every string a user typed reaches a MATCH only through `quote` (a phrase) or
`prefix` (a prefix phrase), `match` for a whole term; `all_of`/`any_of`
combine such pieces. `Tokenizer` runs an index's own tokenizer so vocabulary
lookups see the stems (or the trigrams) FTS5 stores.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from typing import Final

from ...base import Term

# Stemming (porter) lets "failing" find "fails"; remove_diacritics 2 lets "cafe"
# find "café". Shared by both indexes and by `Tokenizer`, so stems always agree.
TOKENIZE: Final = "porter unicode61 remove_diacritics 2"
# Character trigrams (case-folded) for text in scripts written without spaces
# (sessionforest.scripts): any substring of three or more characters is a phrase of
# its trigrams. Shared by both trigram indexes and by `tokenizer(GRAMS)`.
GRAMS: Final = "trigram"

# FTS5 reads a query as C text: a NUL ends it mid-string ("unterminated
# string"), and other control characters are never part of a token anyway.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def quote(text: str) -> str:
    """`text` as one FTS5 phrase: whatever it contains, it is never syntax."""
    return '"' + _CONTROL.sub(" ", text).replace('"', '""') + '"'


def prefix(text: str) -> str:
    """`text` as a phrase whose last token may be the start of a longer one."""
    return quote(text) + "*"


def match(term: Term) -> str:
    """A funnel term as FTS5 syntax, through the one quoting function."""
    return prefix(term.text) if term.prefix else quote(term.text)


def said(piece: str) -> str:
    """A piece made by `match` restricted to the conversational field (`text`): what
    was said, not what a tool said (the whole-chat evidence counts only that)."""
    return "text : " + piece


def all_of(pieces: Iterable[str]) -> str:
    """Combine pieces made by `quote`/`prefix`: every one must match."""
    return " AND ".join(pieces)


def any_of(pieces: Iterable[str]) -> str:
    """Combine pieces made by `quote`/`prefix`: any one may match."""
    return " OR ".join(pieces)


class Tokenizer:
    """The index tokenizer, run on a private in-memory FTS5 table.

    SQLite has no SQL function that tokenizes, so each batch is inserted into a
    scratch table, read back through an `instance` vocabulary and rolled back.
    """

    _CREATE = (
        "CREATE VIRTUAL TABLE scratch USING fts5(text, tokenize = '{tokenize}')",
        "CREATE VIRTUAL TABLE scratch_tokens USING fts5vocab(scratch, 'instance')",
    )

    def __init__(self, tokenize: str = TOKENIZE) -> None:
        self._conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        for sql in self._CREATE:
            self._conn.execute(sql.format(tokenize=tokenize))
        self._lock = threading.Lock()

    def tokens(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """The tokens (stems) FTS5 makes of each text, in order."""
        out: list[list[str]] = [[] for _ in texts]
        if not texts:
            return []
        rows = [(i, _CONTROL.sub(" ", t)) for i, t in enumerate(texts, 1)]
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN")
            try:
                conn.executemany("INSERT INTO scratch(rowid, text) VALUES (?, ?)", rows)
                found = conn.execute(
                    "SELECT doc, term FROM scratch_tokens ORDER BY doc, offset"
                ).fetchall()
            finally:
                conn.execute("ROLLBACK")
        for doc, term in found:
            out[doc - 1].append(term)
        return [tuple(t) for t in out]


_shared: dict[str, Tokenizer] = {}
_shared_lock = threading.Lock()


def tokenizer(tokenize: str = TOKENIZE) -> Tokenizer:
    """The process-wide tokenizer for `tokenize` (created on first use)."""
    with _shared_lock:
        if tokenize not in _shared:
            _shared[tokenize] = Tokenizer(tokenize)
        return _shared[tokenize]
