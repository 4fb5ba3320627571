"""What the live search code knows of the index the released migrations created.

The DDL itself is in the released migrations, store/sqlite/sql/ (tests/store
check a fresh store against the committed schema dump, and tests/store/sqlite
TEXT_OF against the released triggers);
these are the names and encodings the queries and `large.index_large` use.
"""

from __future__ import annotations

from typing import Final

# The indexed kinds and the digest's opening length are every backend's (entrytext.py).
from ....entrytext import (
    INDEXED_KINDS,
    OPENING_CHARS,
    REPLY_KINDS,
    SUMMARY_KINDS,
    USER_KINDS,
)

__all__ = [
    "GRAM_DIGEST_TABLE",
    "GRAM_ENTRY_TABLE",
    "GRAM_PAD",
    "INDEXED_KINDS",
    "OPENING_CHARS",
    "REPLY_KINDS",
    "SEQUENCE_MASK",
    "SESSION_SHIFT",
    "SUMMARY_KINDS",
    "TEXT_OF",
    "USER_KINDS",
]

# An entry's rowid in the index is (session number << 32) + sequence: a
# session's entries form one rowid range, so recall scopes a MATCH with
# `rowid BETWEEN` and FTS5 seeks straight to that session in every doclist.
# The session number (search_sessions.num) is the backend's ChatKey.
SESSION_SHIFT: Final = 32
SEQUENCE_MASK: Final = (1 << SESSION_SHIFT) - 1

# The trigram index: text in spaceless scripts (sessionforest.scripts).
GRAM_ENTRY_TABLE: Final = "session_entry_grams"
GRAM_DIGEST_TABLE: Final = "chat_digest_grams"
# Characters the trigram index appends to every text it holds, so that each
# character has two after it: a one- or two-character word is then always the
# start of some trigram, found by a prefix range over the vocabulary. Spaces,
# because a query word never holds one and `fts.quote` keeps them.
GRAM_PAD: Final = "  "

# The searchable text of a stored payload ({p}) of kind ({k}), as the released
# triggers compute it: the text blocks of a message (v2) or its flat text
# (v1), a summary, a checkpoint's label and summary. Tool calls, images and
# thinking are not conversation text. `entrytext.entry_text` is its Python twin.
TEXT_OF: Final = """CASE
    WHEN {k} = 'checkpoint' THEN
        CASE WHEN json_extract({p}, '$.label') = json_extract({p}, '$.summary')
             THEN json_extract({p}, '$.summary')
             ELSE trim(coalesce(json_extract({p}, '$.label'), '') || ' '
                       || coalesce(json_extract({p}, '$.summary'), '')) END
    WHEN {k} IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract({p}, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each({p}, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract({p}, '$.text'))
END"""
