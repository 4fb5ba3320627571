"""Entries whose payload is over 1 MiB: indexed from Python, not by the SQL triggers.

SQLite's JSON functions copy the document they read and keep each parse until
the trigger ends, so the index triggers held some thirty copies of a 60 MB
message at once (1.9 GB measured on SQLite 3.40). The
`search_large_payloads_outside_sql` migration puts a size test (at most
LARGE_PAYLOAD bytes) first in the triggers that read a payload (word and
trigram index, chat digest), and every writer that inserts a larger one
calls `index_large` right after, in the same transaction, with the text taken
from the payload it still holds (`entry_text`, which gives what TEXT_OF
gives): nothing is parsed in SQL and the text is not copied. Both paths fill
the same rows.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from ....entrytext import entry_text
from ....scripts import spaceless
from .schema import (
    GRAM_DIGEST_TABLE,
    GRAM_ENTRY_TABLE,
    GRAM_PAD,
    INDEXED_KINDS,
    OPENING_CHARS,
    REPLY_KINDS,
    SESSION_SHIFT,
    SUMMARY_KINDS,
    USER_KINDS,
)

# The size test the released triggers lead with: length(CAST(NEW.payload AS BLOB)) <= this.
LARGE_PAYLOAD: Final = 1 << 20  # bytes of stored payload JSON (UTF-8)

_ENTRY = f"""
INSERT INTO {{table}}(rowid, text)
SELECT (num << {SESSION_SHIFT}) + :sequence, :text FROM search_sessions WHERE session_id = :sid
"""
_WORDS = f"""
INSERT INTO session_entry_fts(rowid, text, session_id)
SELECT (num << {SESSION_SHIFT}) + :sequence, :text, :sid
FROM search_sessions WHERE session_id = :sid
"""
# A chat's first trigram digest row, once its new summary is in such a script
# (as the released search_digest_grams_summary trigger does).
_GRAM_DIGEST = f"""
INSERT INTO {GRAM_DIGEST_TABLE}(rowid, title, first_message, first_reply, summary)
SELECT rowid, coalesce(title, '') || :pad, coalesce(first_message, '') || :pad,
       coalesce(first_reply, '') || :pad, :summary
FROM chat_digest_fts
WHERE rowid = :num AND NOT EXISTS (SELECT 1 FROM {GRAM_DIGEST_TABLE} WHERE rowid = :num)
"""


def is_large(payload_json: str) -> bool:
    """Whether an entry with this stored payload is indexed by `index_large`: over
    LARGE_PAYLOAD bytes of UTF-8, as the triggers measure it (a character is 1 to 4
    bytes, so only a payload between a quarter and all of that is encoded to tell)."""
    size = len(payload_json)
    if size > LARGE_PAYLOAD or size <= LARGE_PAYLOAD // 4:
        return size > LARGE_PAYLOAD
    return len(payload_json.encode()) > LARGE_PAYLOAD


def index_large(
    conn: sqlite3.Connection | sqlite3.Cursor,
    session_id: str,
    sequence: int,
    kind: str,
    text: str | None,
) -> None:
    """Index one just-inserted large entry as the triggers index a small one; `text` is
    `entry_text` of its payload. Call it right after the insert, before the next one."""
    if kind not in INDEXED_KINDS:
        return
    found = conn.execute(
        "SELECT num, has_first, has_reply FROM search_sessions WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    if found is None:
        return  # the session is not indexed (as the entry trigger's EXISTS says)
    num, has_first, has_reply = found
    conn.execute(_WORDS, {"sequence": sequence, "text": text, "sid": session_id})
    if text is not None and spaceless(text):
        table = _ENTRY.format(table=GRAM_ENTRY_TABLE)
        conn.execute(table, {"sequence": sequence, "text": text + GRAM_PAD, "sid": session_id})
    # The opening exchange: the word digest first, then its flag, whose update
    # copies a spaceless opening into the trigram digest (search_digest_grams_opening).
    for kinds, column, flag, done in (
        (USER_KINDS, "first_message", "has_first", has_first),
        (REPLY_KINDS, "first_reply", "has_reply", has_reply),
    ):
        if kind in kinds and not done:
            opening = (text or "")[:OPENING_CHARS]
            conn.execute(f"UPDATE chat_digest_fts SET {column} = ? WHERE rowid = ?", (opening, num))
            if opening:
                conn.execute(f"UPDATE search_sessions SET {flag} = 1 WHERE num = ?", (num,))
    if kind in SUMMARY_KINDS:
        summary = text or ""
        conn.execute("UPDATE chat_digest_fts SET summary = ? WHERE rowid = ?", (summary, num))
        padded = summary + GRAM_PAD
        conn.execute(f"UPDATE {GRAM_DIGEST_TABLE} SET summary = ? WHERE rowid = ?", (padded, num))
        if spaceless(summary):
            conn.execute(_GRAM_DIGEST, {"pad": GRAM_PAD, "summary": padded, "num": num})


__all__ = ["LARGE_PAYLOAD", "entry_text", "index_large", "is_large"]
