"""The search index schema: two FTS5 tables, their vocabularies, and the triggers.

Entries are indexed by triggers in the transaction of the insert itself, so a
failed append leaves no index row and a committed one is searchable at once.
These statements belong to the released `session_search_index` migration:
change the index only through a new migration, never by editing them.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from .fts import TOKENIZE

# Stored kinds whose text is indexed: the conversational kinds plus the legacy
# names that read as them (tests/search checks this against kinds.py).
INDEXED_KINDS: Final = (
    "assistant.message",
    "assistant.text",
    "branch.summary",
    "checkpoint",
    "compaction",
    "user.message",
    "user.prompt",
    "worker.result",
)
USER_KINDS: Final = ("user.message", "user.prompt")
REPLY_KINDS: Final = ("assistant.message", "assistant.text")
SUMMARY_KINDS: Final = ("branch.summary", "checkpoint", "compaction")


def _in(kinds: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{k}'" for k in kinds) + ")"


# An entry's rowid in the index is (session number << 32) + sequence: a
# session's entries form one rowid range, so recall scopes a MATCH with
# `rowid BETWEEN` and FTS5 seeks straight to that session in every doclist.
SESSION_SHIFT: Final = 32
SEQUENCE_MASK: Final = (1 << SESSION_SHIFT) - 1

# The searchable text of a stored payload ({p}) of kind ({k}): the text blocks
# of a message (v2) or its flat text (v1), a summary, a checkpoint's label and
# summary. Tool calls, images and thinking are not conversation text. Only
# object blocks are looked into: json_extract on a bare string is an error.
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

CREATE_TABLES: Final = (
    # A stable small number per session (INTEGER PRIMARY KEY survives VACUUM,
    # a plain rowid does not): the high half of its entries' index rowids.
    # has_first/has_reply: the digest holds the opening exchange (checked per
    # append here, which is far cheaper than reading the FTS5 row).
    # first_at/last_at: the span of the chat's entries, so time windows and
    # recency need no reads of session_entries rows at search time.
    """CREATE TABLE search_sessions (
        num INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL UNIQUE,
        has_first INTEGER NOT NULL DEFAULT 0,
        has_reply INTEGER NOT NULL DEFAULT 0,
        first_at TEXT,
        last_at TEXT
    )""",
    f"""CREATE VIRTUAL TABLE session_entry_fts USING fts5(
        text, session_id UNINDEXED, tokenize = '{TOKENIZE}'
    )""",
    # One row per session, rowid = its number: what the chat is about. The
    # opening exchange (first user message and first reply) states the task.
    f"""CREATE VIRTUAL TABLE chat_digest_fts USING fts5(
        title, first_message, first_reply, summary, tokenize = '{TOKENIZE}'
    )""",
    # Document frequencies for choosing the rarest query words.
    "CREATE VIRTUAL TABLE session_entry_vocab USING fts5vocab(session_entry_fts, 'row')",
    "CREATE VIRTUAL TABLE chat_digest_vocab USING fts5vocab(chat_digest_fts, 'row')",
)

_NUM = "(SELECT num FROM search_sessions WHERE session_id = {sid})"
_NEW_TEXT = TEXT_OF.format(k="NEW.kind", p="NEW.payload")
_NEW_NUM = _NUM.format(sid="NEW.session_id")
# A digest describes a chat; a pasted log as its first message would drown that.
OPENING_CHARS: Final = 2000
_OPENING = "substr(coalesce({text}, ''), 1, " + str(OPENING_CHARS) + ")"
_NEW_OPENING = _OPENING.format(text=_NEW_TEXT)

CREATE_TRIGGERS: Final = (
    # OR IGNORE/OR REPLACE: a session id that comes back keeps its number.
    """CREATE TRIGGER search_session_added AFTER INSERT ON sessions BEGIN
        INSERT OR IGNORE INTO search_sessions(session_id) VALUES (NEW.id);
        INSERT OR REPLACE INTO chat_digest_fts(rowid, title, first_message, first_reply, summary)
        VALUES ({num}, NEW.title, '', '', '');
    END""".format(num=_NUM.format(sid="NEW.id")),
    """CREATE TRIGGER search_session_retitled AFTER UPDATE OF title ON sessions BEGIN
        UPDATE chat_digest_fts SET title = NEW.title WHERE rowid = {num};
    END""".format(num=_NUM.format(sid="NEW.id")),
    # Every entry is activity, whatever its kind.
    """CREATE TRIGGER search_session_activity AFTER INSERT ON session_entries BEGIN
        UPDATE search_sessions
        SET first_at = min(coalesce(first_at, NEW.created_at), NEW.created_at),
            last_at = max(coalesce(last_at, NEW.created_at), NEW.created_at)
        WHERE session_id = NEW.session_id;
    END""",
    # The append hot path: one plain INSERT ... VALUES (an INSERT ... SELECT
    # into FTS5 measured ~100 us slower per append). json_valid: a damaged
    # payload stays unindexed instead of failing its insert.
    f"""CREATE TRIGGER search_entry_added AFTER INSERT ON session_entries
    WHEN NEW.kind IN {_in(INDEXED_KINDS)} AND json_valid(NEW.payload)
        AND EXISTS (SELECT 1 FROM search_sessions WHERE session_id = NEW.session_id) BEGIN
        INSERT INTO session_entry_fts(rowid, text, session_id)
        VALUES (({_NEW_NUM} << {SESSION_SHIFT}) + NEW.sequence, {_NEW_TEXT}, NEW.session_id);
    END""",
    # Fires once per chat (until a user message with text arrives).
    f"""CREATE TRIGGER search_digest_first_message AFTER INSERT ON session_entries
    WHEN NEW.kind IN {_in(USER_KINDS)} AND json_valid(NEW.payload)
        AND (SELECT has_first FROM search_sessions WHERE session_id = NEW.session_id) = 0 BEGIN
        UPDATE chat_digest_fts SET first_message = {_NEW_OPENING}
        WHERE rowid = {_NEW_NUM};
        UPDATE search_sessions SET has_first = 1
        WHERE session_id = NEW.session_id AND {_NEW_OPENING} <> '';
    END""",
    f"""CREATE TRIGGER search_digest_first_reply AFTER INSERT ON session_entries
    WHEN NEW.kind IN {_in(REPLY_KINDS)} AND json_valid(NEW.payload)
        AND (SELECT has_reply FROM search_sessions WHERE session_id = NEW.session_id) = 0 BEGIN
        UPDATE chat_digest_fts SET first_reply = {_NEW_OPENING}
        WHERE rowid = {_NEW_NUM};
        UPDATE search_sessions SET has_reply = 1
        WHERE session_id = NEW.session_id AND {_NEW_OPENING} <> '';
    END""",
    f"""CREATE TRIGGER search_digest_summary AFTER INSERT ON session_entries
    WHEN NEW.kind IN {_in(SUMMARY_KINDS)} AND json_valid(NEW.payload) BEGIN
        UPDATE chat_digest_fts SET summary = coalesce({_NEW_TEXT}, '')
        WHERE rowid = {_NEW_NUM};
    END""",
)

_E_TEXT = TEXT_OF.format(k="e.kind", p="e.payload")


def _opening(kinds: tuple[str, ...]) -> str:
    """The backfill's first message of `kinds` with text, as the triggers keep it."""
    return f"""coalesce((SELECT {_OPENING.format(text=_E_TEXT)} FROM session_entries e
        WHERE e.session_id = s.id AND e.kind IN {_in(kinds)} AND json_valid(e.payload)
              AND coalesce({_E_TEXT}, '') <> '' ORDER BY e.sequence LIMIT 1), '')"""


BACKFILL: Final = (
    "INSERT INTO search_sessions(session_id) SELECT id FROM sessions ORDER BY rowid",
    f"""INSERT INTO session_entry_fts(rowid, text, session_id)
    SELECT (m.num << {SESSION_SHIFT}) + e.sequence, {_E_TEXT}, e.session_id
    FROM session_entries e JOIN search_sessions m ON m.session_id = e.session_id
    WHERE e.kind IN {_in(INDEXED_KINDS)} AND json_valid(e.payload)""",
    f"""INSERT INTO chat_digest_fts(rowid, title, first_message, first_reply, summary)
    SELECT m.num, s.title,
        {_opening(USER_KINDS)},
        {_opening(REPLY_KINDS)},
        coalesce((SELECT {_E_TEXT} FROM session_entries e
                  WHERE e.session_id = s.id AND e.kind IN {_in(SUMMARY_KINDS)}
                        AND json_valid(e.payload) ORDER BY e.sequence DESC LIMIT 1), '')
    FROM sessions s JOIN search_sessions m ON m.session_id = s.id""",
    """UPDATE search_sessions SET first_at = a.first_at, last_at = a.last_at
    FROM (SELECT session_id, min(created_at) AS first_at, max(created_at) AS last_at
          FROM session_entries GROUP BY session_id) AS a
    WHERE a.session_id = search_sessions.session_id""",
    """UPDATE search_sessions SET
        has_first = (SELECT first_message <> '' FROM chat_digest_fts WHERE rowid = num),
        has_reply = (SELECT first_reply <> '' FROM chat_digest_fts WHERE rowid = num)""",
)


def create(conn: sqlite3.Connection) -> None:
    """Create the index, index every entry already stored, then keep it in sync."""
    for sql in (*CREATE_TABLES, *BACKFILL, *CREATE_TRIGGERS):
        conn.execute(sql)
