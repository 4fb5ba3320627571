"""The exact statements the released `session_search_index` migration runs.

FTS5 word index over conversational entries (rowid = session number << 32 +
sequence) and a per-chat digest, backfilled, then kept in sync by triggers.
Generated once from main's search code (commit a4b5ce4) and never edited:
change the schema with a new migration.
"""

from typing import Final

# Tables, FTS5 indexes and their vocabularies.
CREATE_TABLES: Final = (
    (
        'CREATE TABLE search_sessions (\n'
        '        num INTEGER PRIMARY KEY,\n'
        '        session_id TEXT NOT NULL UNIQUE,\n'
        '        has_first INTEGER NOT NULL DEFAULT 0,\n'
        '        has_reply INTEGER NOT NULL DEFAULT 0,\n'
        '        first_at TEXT,\n'
        '        last_at TEXT\n'
        '    )'
    ),
    (
        'CREATE VIRTUAL TABLE session_entry_fts USING fts5(\n'
        "        text, session_id UNINDEXED, tokenize = 'porter unicode61 remove_diacritics"
        " 2'\n"
        '    )'
    ),
    (
        'CREATE VIRTUAL TABLE chat_digest_fts USING fts5(\n'
        "        title, first_message, first_reply, summary, tokenize = 'porter unicode61 r"
        "emove_diacritics 2'\n"
        '    )'
    ),
    (
        "CREATE VIRTUAL TABLE session_entry_vocab USING fts5vocab(session_entry_fts, 'row')"
    ),
    (
        "CREATE VIRTUAL TABLE chat_digest_vocab USING fts5vocab(chat_digest_fts, 'row')"
    ),
)

# Entries already stored, indexed in the migration's transaction.
BACKFILL: Final = (
    (
        'INSERT INTO search_sessions(session_id) SELECT id FROM sessions ORDER BY rowid'
    ),
    (
        'INSERT INTO session_entry_fts(rowid, text, session_id)\n'
        '    SELECT (m.num << 32) + e.sequence, CASE\n'
        "    WHEN e.kind = 'checkpoint' THEN\n"
        "        CASE WHEN json_extract(e.payload, '$.label') = json_extract(e.payload, '$."
        "summary')\n"
        "             THEN json_extract(e.payload, '$.summary')\n"
        "             ELSE trim(coalesce(json_extract(e.payload, '$.label'), '') || ' '\n"
        "                       || coalesce(json_extract(e.payload, '$.summary'), '')) END"
        '\n'
        "    WHEN e.kind IN ('worker.result', 'compaction', 'branch.summary')\n"
        "        THEN json_extract(e.payload, '$.summary')\n"
        '    ELSE coalesce(\n'
        "        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))\n"
        "         FROM json_each(e.payload, '$.content') AS b\n"
        "         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') EN"
        "D = 'text'),\n"
        "        json_extract(e.payload, '$.text'))\n"
        'END, e.session_id\n'
        '    FROM session_entries e JOIN search_sessions m ON m.session_id = e.session_id\n'
        "    WHERE e.kind IN ('assistant.message', 'assistant.text', 'branch.summary', 'che"
        "ckpoint', 'compaction', 'user.message', 'user.prompt', 'worker.result') AND json_v"
        'alid(e.payload)'
    ),
    (
        'INSERT INTO chat_digest_fts(rowid, title, first_message, first_reply, summary)\n'
        '    SELECT m.num, s.title,\n'
        '        coalesce((SELECT substr(coalesce(CASE\n'
        "    WHEN e.kind = 'checkpoint' THEN\n"
        "        CASE WHEN json_extract(e.payload, '$.label') = json_extract(e.payload, '$."
        "summary')\n"
        "             THEN json_extract(e.payload, '$.summary')\n"
        "             ELSE trim(coalesce(json_extract(e.payload, '$.label'), '') || ' '\n"
        "                       || coalesce(json_extract(e.payload, '$.summary'), '')) END"
        '\n'
        "    WHEN e.kind IN ('worker.result', 'compaction', 'branch.summary')\n"
        "        THEN json_extract(e.payload, '$.summary')\n"
        '    ELSE coalesce(\n'
        "        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))\n"
        "         FROM json_each(e.payload, '$.content') AS b\n"
        "         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') EN"
        "D = 'text'),\n"
        "        json_extract(e.payload, '$.text'))\n"
        "END, ''), 1, 2000) FROM session_entries e\n"
        "        WHERE e.session_id = s.id AND e.kind IN ('user.message', 'user.prompt') AN"
        'D json_valid(e.payload)\n'
        '              AND coalesce(CASE\n'
        "    WHEN e.kind = 'checkpoint' THEN\n"
        "        CASE WHEN json_extract(e.payload, '$.label') = json_extract(e.payload, '$."
        "summary')\n"
        "             THEN json_extract(e.payload, '$.summary')\n"
        "             ELSE trim(coalesce(json_extract(e.payload, '$.label'), '') || ' '\n"
        "                       || coalesce(json_extract(e.payload, '$.summary'), '')) END"
        '\n'
        "    WHEN e.kind IN ('worker.result', 'compaction', 'branch.summary')\n"
        "        THEN json_extract(e.payload, '$.summary')\n"
        '    ELSE coalesce(\n'
        "        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))\n"
        "         FROM json_each(e.payload, '$.content') AS b\n"
        "         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') EN"
        "D = 'text'),\n"
        "        json_extract(e.payload, '$.text'))\n"
        "END, '') <> '' ORDER BY e.sequence LIMIT 1), ''),\n"
        '        coalesce((SELECT substr(coalesce(CASE\n'
        "    WHEN e.kind = 'checkpoint' THEN\n"
        "        CASE WHEN json_extract(e.payload, '$.label') = json_extract(e.payload, '$."
        "summary')\n"
        "             THEN json_extract(e.payload, '$.summary')\n"
        "             ELSE trim(coalesce(json_extract(e.payload, '$.label'), '') || ' '\n"
        "                       || coalesce(json_extract(e.payload, '$.summary'), '')) END"
        '\n'
        "    WHEN e.kind IN ('worker.result', 'compaction', 'branch.summary')\n"
        "        THEN json_extract(e.payload, '$.summary')\n"
        '    ELSE coalesce(\n'
        "        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))\n"
        "         FROM json_each(e.payload, '$.content') AS b\n"
        "         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') EN"
        "D = 'text'),\n"
        "        json_extract(e.payload, '$.text'))\n"
        "END, ''), 1, 2000) FROM session_entries e\n"
        "        WHERE e.session_id = s.id AND e.kind IN ('assistant.message', 'assistant.t"
        "ext') AND json_valid(e.payload)\n"
        '              AND coalesce(CASE\n'
        "    WHEN e.kind = 'checkpoint' THEN\n"
        "        CASE WHEN json_extract(e.payload, '$.label') = json_extract(e.payload, '$."
        "summary')\n"
        "             THEN json_extract(e.payload, '$.summary')\n"
        "             ELSE trim(coalesce(json_extract(e.payload, '$.label'), '') || ' '\n"
        "                       || coalesce(json_extract(e.payload, '$.summary'), '')) END"
        '\n'
        "    WHEN e.kind IN ('worker.result', 'compaction', 'branch.summary')\n"
        "        THEN json_extract(e.payload, '$.summary')\n"
        '    ELSE coalesce(\n'
        "        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))\n"
        "         FROM json_each(e.payload, '$.content') AS b\n"
        "         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') EN"
        "D = 'text'),\n"
        "        json_extract(e.payload, '$.text'))\n"
        "END, '') <> '' ORDER BY e.sequence LIMIT 1), ''),\n"
        '        coalesce((SELECT CASE\n'
        "    WHEN e.kind = 'checkpoint' THEN\n"
        "        CASE WHEN json_extract(e.payload, '$.label') = json_extract(e.payload, '$."
        "summary')\n"
        "             THEN json_extract(e.payload, '$.summary')\n"
        "             ELSE trim(coalesce(json_extract(e.payload, '$.label'), '') || ' '\n"
        "                       || coalesce(json_extract(e.payload, '$.summary'), '')) END"
        '\n'
        "    WHEN e.kind IN ('worker.result', 'compaction', 'branch.summary')\n"
        "        THEN json_extract(e.payload, '$.summary')\n"
        '    ELSE coalesce(\n'
        "        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))\n"
        "         FROM json_each(e.payload, '$.content') AS b\n"
        "         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') EN"
        "D = 'text'),\n"
        "        json_extract(e.payload, '$.text'))\n"
        'END FROM session_entries e\n'
        "                  WHERE e.session_id = s.id AND e.kind IN ('branch.summary', 'chec"
        "kpoint', 'compaction')\n"
        '                        AND json_valid(e.payload) ORDER BY e.sequence DESC LIMIT 1'
        "), '')\n"
        '    FROM sessions s JOIN search_sessions m ON m.session_id = s.id'
    ),
    (
        'UPDATE search_sessions SET first_at = a.first_at, last_at = a.last_at\n'
        '    FROM (SELECT session_id, min(created_at) AS first_at, max(created_at) AS last_'
        'at\n'
        '          FROM session_entries GROUP BY session_id) AS a\n'
        '    WHERE a.session_id = search_sessions.session_id'
    ),
    (
        'UPDATE search_sessions SET\n'
        "        has_first = (SELECT first_message <> '' FROM chat_digest_fts WHERE rowid ="
        ' num),\n'
        "        has_reply = (SELECT first_reply <> '' FROM chat_digest_fts WHERE rowid = n"
        'um)'
    ),
)

# Keep the index in sync in the transaction of each insert.
CREATE_TRIGGERS: Final = (
    (
        'CREATE TRIGGER search_session_added AFTER INSERT ON sessions BEGIN\n'
        '        INSERT OR IGNORE INTO search_sessions(session_id) VALUES (NEW.id);\n'
        '        INSERT OR REPLACE INTO chat_digest_fts(rowid, title, first_message, first_'
        'reply, summary)\n'
        '        VALUES ((SELECT num FROM search_sessions WHERE session_id = NEW.id), NEW.t'
        "itle, '', '', '');\n"
        '    END'
    ),
    (
        'CREATE TRIGGER search_session_retitled AFTER UPDATE OF title ON sessions BEGIN\n'
        '        UPDATE chat_digest_fts SET title = NEW.title WHERE rowid = (SELECT num FRO'
        'M search_sessions WHERE session_id = NEW.id);\n'
        '    END'
    ),
    (
        'CREATE TRIGGER search_session_activity AFTER INSERT ON session_entries BEGIN\n'
        '        UPDATE search_sessions\n'
        '        SET first_at = min(coalesce(first_at, NEW.created_at), NEW.created_at),\n'
        '            last_at = max(coalesce(last_at, NEW.created_at), NEW.created_at)\n'
        '        WHERE session_id = NEW.session_id;\n'
        '    END'
    ),
    (
        'CREATE TRIGGER search_entry_added AFTER INSERT ON session_entries\n'
        "    WHEN NEW.kind IN ('assistant.message', 'assistant.text', 'branch.summary', 'ch"
        "eckpoint', 'compaction', 'user.message', 'user.prompt', 'worker.result') AND json_"
        'valid(NEW.payload)\n'
        '        AND EXISTS (SELECT 1 FROM search_sessions WHERE session_id = NEW.session_i'
        'd) BEGIN\n'
        '        INSERT INTO session_entry_fts(rowid, text, session_id)\n'
        '        VALUES (((SELECT num FROM search_sessions WHERE session_id = NEW.session_i'
        'd) << 32) + NEW.sequence, CASE\n'
        "    WHEN NEW.kind = 'checkpoint' THEN\n"
        "        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload,"
        " '$.summary')\n"
        "             THEN json_extract(NEW.payload, '$.summary')\n"
        "             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '\n"
        "                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) EN"
        'D\n'
        "    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')\n"
        "        THEN json_extract(NEW.payload, '$.summary')\n"
        '    ELSE coalesce(\n'
        "        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))\n"
        "         FROM json_each(NEW.payload, '$.content') AS b\n"
        "         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') EN"
        "D = 'text'),\n"
        "        json_extract(NEW.payload, '$.text'))\n"
        'END, NEW.session_id);\n'
        '    END'
    ),
    (
        'CREATE TRIGGER search_digest_first_message AFTER INSERT ON session_entries\n'
        "    WHEN NEW.kind IN ('user.message', 'user.prompt') AND json_valid(NEW.payload)\n"
        '        AND (SELECT has_first FROM search_sessions WHERE session_id = NEW.session_'
        'id) = 0 BEGIN\n'
        '        UPDATE chat_digest_fts SET first_message = substr(coalesce(CASE\n'
        "    WHEN NEW.kind = 'checkpoint' THEN\n"
        "        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload,"
        " '$.summary')\n"
        "             THEN json_extract(NEW.payload, '$.summary')\n"
        "             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '\n"
        "                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) EN"
        'D\n'
        "    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')\n"
        "        THEN json_extract(NEW.payload, '$.summary')\n"
        '    ELSE coalesce(\n'
        "        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))\n"
        "         FROM json_each(NEW.payload, '$.content') AS b\n"
        "         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') EN"
        "D = 'text'),\n"
        "        json_extract(NEW.payload, '$.text'))\n"
        "END, ''), 1, 2000)\n"
        '        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.sess'
        'ion_id);\n'
        '        UPDATE search_sessions SET has_first = 1\n'
        '        WHERE session_id = NEW.session_id AND substr(coalesce(CASE\n'
        "    WHEN NEW.kind = 'checkpoint' THEN\n"
        "        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload,"
        " '$.summary')\n"
        "             THEN json_extract(NEW.payload, '$.summary')\n"
        "             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '\n"
        "                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) EN"
        'D\n'
        "    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')\n"
        "        THEN json_extract(NEW.payload, '$.summary')\n"
        '    ELSE coalesce(\n'
        "        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))\n"
        "         FROM json_each(NEW.payload, '$.content') AS b\n"
        "         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') EN"
        "D = 'text'),\n"
        "        json_extract(NEW.payload, '$.text'))\n"
        "END, ''), 1, 2000) <> '';\n"
        '    END'
    ),
    (
        'CREATE TRIGGER search_digest_first_reply AFTER INSERT ON session_entries\n'
        "    WHEN NEW.kind IN ('assistant.message', 'assistant.text') AND json_valid(NEW.pa"
        'yload)\n'
        '        AND (SELECT has_reply FROM search_sessions WHERE session_id = NEW.session_'
        'id) = 0 BEGIN\n'
        '        UPDATE chat_digest_fts SET first_reply = substr(coalesce(CASE\n'
        "    WHEN NEW.kind = 'checkpoint' THEN\n"
        "        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload,"
        " '$.summary')\n"
        "             THEN json_extract(NEW.payload, '$.summary')\n"
        "             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '\n"
        "                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) EN"
        'D\n'
        "    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')\n"
        "        THEN json_extract(NEW.payload, '$.summary')\n"
        '    ELSE coalesce(\n'
        "        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))\n"
        "         FROM json_each(NEW.payload, '$.content') AS b\n"
        "         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') EN"
        "D = 'text'),\n"
        "        json_extract(NEW.payload, '$.text'))\n"
        "END, ''), 1, 2000)\n"
        '        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.sess'
        'ion_id);\n'
        '        UPDATE search_sessions SET has_reply = 1\n'
        '        WHERE session_id = NEW.session_id AND substr(coalesce(CASE\n'
        "    WHEN NEW.kind = 'checkpoint' THEN\n"
        "        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload,"
        " '$.summary')\n"
        "             THEN json_extract(NEW.payload, '$.summary')\n"
        "             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '\n"
        "                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) EN"
        'D\n'
        "    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')\n"
        "        THEN json_extract(NEW.payload, '$.summary')\n"
        '    ELSE coalesce(\n'
        "        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))\n"
        "         FROM json_each(NEW.payload, '$.content') AS b\n"
        "         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') EN"
        "D = 'text'),\n"
        "        json_extract(NEW.payload, '$.text'))\n"
        "END, ''), 1, 2000) <> '';\n"
        '    END'
    ),
    (
        'CREATE TRIGGER search_digest_summary AFTER INSERT ON session_entries\n'
        "    WHEN NEW.kind IN ('branch.summary', 'checkpoint', 'compaction') AND json_valid"
        '(NEW.payload) BEGIN\n'
        '        UPDATE chat_digest_fts SET summary = coalesce(CASE\n'
        "    WHEN NEW.kind = 'checkpoint' THEN\n"
        "        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload,"
        " '$.summary')\n"
        "             THEN json_extract(NEW.payload, '$.summary')\n"
        "             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '\n"
        "                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) EN"
        'D\n'
        "    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')\n"
        "        THEN json_extract(NEW.payload, '$.summary')\n"
        '    ELSE coalesce(\n'
        "        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))\n"
        "         FROM json_each(NEW.payload, '$.content') AS b\n"
        "         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') EN"
        "D = 'text'),\n"
        "        json_extract(NEW.payload, '$.text'))\n"
        "END, '')\n"
        '        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.sess'
        'ion_id);\n'
        '    END'
    ),
)
