"""The trigram index: entries and chat digests whose text is in a spaceless script.

Only rows holding such text (scripts.py) get a row here, so Latin-only stores
pay one cheap check per append and no index space. Rows share the word index's
rowids (entries: session number << 32 + sequence; digests: session number), and
are written by triggers in the transaction of the insert itself, like the word
index. These statements belong to the `session_gram_index` migration: change
them only through a new migration.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from .fts import GRAMS
from .index import INDEXED_KINDS, SESSION_SHIFT, SUMMARY_KINDS, TEXT_OF
from .scripts import GRAM_PAD, LEAD_BYTES, SPACELESS_GLOB

ENTRY_TABLE: Final = "session_entry_grams"
DIGEST_TABLE: Final = "chat_digest_grams"


def _in(kinds: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{k}'" for k in kinds) + ")"


def _spaceless(text: str) -> str:
    """SQL: `text` holds a spaceless character. The length test first skips
    ASCII-only text without the GLOB, whose class is read at every character."""
    return f"(length({text}) < length(CAST({text} AS BLOB)) AND {text} GLOB '{SPACELESS_GLOB}')"


def _may_be_spaceless(payload: str) -> str:
    """SQL: a first look at a raw payload, cheap for Latin text: a lead byte of
    a spaceless character, or a JSON \\u escape that might be one."""
    raw = f"CAST({payload} AS BLOB)"
    bytes_ = " OR ".join(f"instr({raw}, x'{b:02X}') > 0" for b in LEAD_BYTES)
    return f"(length({payload}) < length({raw}) AND ({bytes_}) OR instr({payload}, '\\u') > 0)"


def _pad(text: str) -> str:
    return f"(coalesce({text}, '') || '{GRAM_PAD}')"


CREATE_TABLES: Final = (
    f"CREATE VIRTUAL TABLE {ENTRY_TABLE} USING fts5(text, tokenize = '{GRAMS}')",
    f"""CREATE VIRTUAL TABLE {DIGEST_TABLE} USING fts5(
        title, first_message, first_reply, summary, tokenize = '{GRAMS}'
    )""",
    # Document frequencies of trigrams, and the trigrams a short word starts.
    f"CREATE VIRTUAL TABLE session_entry_gram_vocab USING fts5vocab({ENTRY_TABLE}, 'row')",
    f"CREATE VIRTUAL TABLE chat_digest_gram_vocab USING fts5vocab({DIGEST_TABLE}, 'row')",
)

_NUM = "(SELECT num FROM search_sessions WHERE session_id = {sid})"
_NEW_TEXT = TEXT_OF.format(k="NEW.kind", p="NEW.payload")
_NEW_NUM = _NUM.format(sid="NEW.session_id")
_DIGEST_COLUMNS = "title, first_message, first_reply, summary"
_DIGEST_PADDED = ", ".join(_pad(c) for c in _DIGEST_COLUMNS.split(", "))
_ANY_DIGEST_COLUMN = " OR ".join(_spaceless(c) for c in _DIGEST_COLUMNS.split(", "))


def _copy_digest(num: str, column: str, value: str) -> str:
    """Give chat `num` a trigram digest row once `value` (its new `column`)
    makes it spaceless: a copy of its word-index digest with `value` set."""
    names = _DIGEST_COLUMNS.split(", ")
    columns = [_pad(value) if name == column else _pad(name) for name in names]
    return f"""INSERT INTO {DIGEST_TABLE}(rowid, {_DIGEST_COLUMNS})
        SELECT rowid, {", ".join(columns)} FROM chat_digest_fts
        WHERE rowid = {num} AND {_spaceless(value)}
              AND NOT EXISTS (SELECT 1 FROM {DIGEST_TABLE} WHERE rowid = {num})"""


CREATE_TRIGGERS: Final = (
    # The append hot path. A cheap test of the raw payload first (any non-ASCII
    # spaceless character, or a JSON \u escape that might be one), then the
    # exact test on the conversation text, as the word index extracts it.
    f"""CREATE TRIGGER search_entry_grams_added AFTER INSERT ON session_entries
    WHEN NEW.kind IN {_in(INDEXED_KINDS)}
        AND {_may_be_spaceless("NEW.payload")}
        AND json_valid(NEW.payload) AND {_spaceless(_NEW_TEXT)}
        AND EXISTS (SELECT 1 FROM search_sessions WHERE session_id = NEW.session_id) BEGIN
        INSERT INTO {ENTRY_TABLE}(rowid, text)
        VALUES (({_NEW_NUM} << {SESSION_SHIFT}) + NEW.sequence, {_pad(_NEW_TEXT)});
    END""",
    # The digest triggers below never depend on the order in which SQLite runs
    # them next to the word index's own: each sets the value it brings itself.
    # A new chat: its search number is assigned when search_sessions gets its row.
    f"""CREATE TRIGGER search_digest_grams_chat AFTER INSERT ON search_sessions
    WHEN {_spaceless("(SELECT title FROM sessions WHERE id = NEW.session_id)")} BEGIN
        INSERT OR REPLACE INTO {DIGEST_TABLE}(rowid, {_DIGEST_COLUMNS})
        VALUES (NEW.num, {_pad("(SELECT title FROM sessions WHERE id = NEW.session_id)")},
                '{GRAM_PAD}', '{GRAM_PAD}', '{GRAM_PAD}');
    END""",
    f"""CREATE TRIGGER search_digest_grams_retitled AFTER UPDATE OF title ON sessions BEGIN
        UPDATE {DIGEST_TABLE} SET title = {_pad("NEW.title")}
        WHERE rowid = {_NUM.format(sid="NEW.id")};
        {_copy_digest(_NUM.format(sid="NEW.id"), "title", "NEW.title")};
    END""",
    # The opening exchange is written to the word digest before has_first or
    # has_reply is set (search_digest_first_message), so it can be copied here.
    f"""CREATE TRIGGER search_digest_grams_opening
    AFTER UPDATE OF has_first, has_reply ON search_sessions
    WHEN (NEW.has_first AND NOT OLD.has_first) OR (NEW.has_reply AND NOT OLD.has_reply) BEGIN
        INSERT OR REPLACE INTO {DIGEST_TABLE}(rowid, {_DIGEST_COLUMNS})
        SELECT rowid, {_DIGEST_PADDED} FROM chat_digest_fts
        WHERE rowid = NEW.num AND ({_ANY_DIGEST_COLUMN});
    END""",
    f"""CREATE TRIGGER search_digest_grams_summary AFTER INSERT ON session_entries
    WHEN NEW.kind IN {_in(SUMMARY_KINDS)} AND json_valid(NEW.payload) BEGIN
        UPDATE {DIGEST_TABLE} SET summary = {_pad(_NEW_TEXT)} WHERE rowid = {_NEW_NUM};
        {_copy_digest(_NEW_NUM, "summary", _NEW_TEXT)};
    END""",
)

# The word index already holds every text, extracted: copy the spaceless ones.
BACKFILL: Final = (
    f"""INSERT INTO {ENTRY_TABLE}(rowid, text)
    SELECT rowid, {_pad("text")} FROM session_entry_fts WHERE {_spaceless("text")}""",
    f"""INSERT INTO {DIGEST_TABLE}(rowid, {_DIGEST_COLUMNS})
    SELECT rowid, {_DIGEST_PADDED} FROM chat_digest_fts WHERE {_ANY_DIGEST_COLUMN}""",
)


def create(conn: sqlite3.Connection) -> None:
    """Create the trigram index, fill it from the word index, then keep it in sync."""
    for sql in (*CREATE_TABLES, *BACKFILL, *CREATE_TRIGGERS):
        conn.execute(sql)
