"""The exact statements the released `session_gram_index` migration runs.

A trigram index beside the word index for text in spaceless scripts, filled
from the word index, then kept in sync by triggers.
Generated once from main's search code (commit a4b5ce4) and never edited:
change the schema with a new migration.
"""

from typing import Final

# Trigram tables and their vocabularies.
CREATE_TABLES: Final = (
    (
        "CREATE VIRTUAL TABLE session_entry_grams USING fts5(text, tokenize = 'trigram')"
    ),
    (
        'CREATE VIRTUAL TABLE chat_digest_grams USING fts5(\n'
        "        title, first_message, first_reply, summary, tokenize = 'trigram'\n"
        '    )'
    ),
    (
        'CREATE VIRTUAL TABLE session_entry_gram_vocab USING fts5vocab(session_entry_grams,'
        " 'row')"
    ),
    (
        "CREATE VIRTUAL TABLE chat_digest_gram_vocab USING fts5vocab(chat_digest_grams, 'ro"
        "w')"
    ),
)

# Spaceless rows copied from the word index.
BACKFILL: Final = (
    (
        'INSERT INTO session_entry_grams(rowid, text)\n'
        "    SELECT rowid, (coalesce(text, '') || '  ') FROM session_entry_fts WHERE (lengt"
        "h(text) < length(CAST(text AS BLOB)) AND text GLOB '*[\u0e00-\u0eff\u1000-\u109f"
        '\u1100-\u11ff\u1780-\u17ff\u2e80-\u9fff\ua960-\ud7ff\uf900-\ufaff\uff66-\uff9f'
        "\U00020000-\U0003134f]*')"
    ),
    (
        'INSERT INTO chat_digest_grams(rowid, title, first_message, first_reply, summary)\n'
        "    SELECT rowid, (coalesce(title, '') || '  '), (coalesce(first_message, '') || '"
        "  '), (coalesce(first_reply, '') || '  '), (coalesce(summary, '') || '  ') FROM ch"
        "at_digest_fts WHERE (length(title) < length(CAST(title AS BLOB)) AND title GLOB '*"
        '[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u2e80-\u9fff\ua960-\ud7ff'
        "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]*') OR (length(first_message) < le"
        "ngth(CAST(first_message AS BLOB)) AND first_message GLOB '*[\u0e00-\u0eff\u1000-"
        '\u109f\u1100-\u11ff\u1780-\u17ff\u2e80-\u9fff\ua960-\ud7ff\uf900-\ufaff\uff66-'
        "\uff9f\U00020000-\U0003134f]*') OR (length(first_reply) < length(CAST(first_reply "
        "AS BLOB)) AND first_reply GLOB '*[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-"
        "\u17ff\u2e80-\u9fff\ua960-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]*'"
        ") OR (length(summary) < length(CAST(summary AS BLOB)) AND summary GLOB '*[\u0e00-"
        '\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u2e80-\u9fff\ua960-\ud7ff\uf900-'
        "\ufaff\uff66-\uff9f\U00020000-\U0003134f]*')"
    ),
)

# Keep the trigram index in sync.
CREATE_TRIGGERS: Final = (
    (
        'CREATE TRIGGER search_entry_grams_added AFTER INSERT ON session_entries\n'
        "    WHEN NEW.kind IN ('assistant.message', 'assistant.text', 'branch.summary', 'ch"
        "eckpoint', 'compaction', 'user.message', 'user.prompt', 'worker.result')\n"
        '        AND (length(NEW.payload) < length(CAST(NEW.payload AS BLOB)) AND (instr(CA'
        "ST(NEW.payload AS BLOB), x'E0') > 0 OR instr(CAST(NEW.payload AS BLOB), x'E1') > 0"
        " OR instr(CAST(NEW.payload AS BLOB), x'E3') > 0 OR instr(CAST(NEW.payload AS BLOB)"
        ", x'E4') > 0 OR instr(CAST(NEW.payload AS BLOB), x'E5') > 0 OR instr(CAST(NEW.payl"
        "oad AS BLOB), x'E6') > 0 OR instr(CAST(NEW.payload AS BLOB), x'E7') > 0 OR instr(C"
        "AST(NEW.payload AS BLOB), x'E8') > 0 OR instr(CAST(NEW.payload AS BLOB), x'E9') > "
        "0 OR instr(CAST(NEW.payload AS BLOB), x'EA') > 0 OR instr(CAST(NEW.payload AS BLOB"
        "), x'EB') > 0 OR instr(CAST(NEW.payload AS BLOB), x'EC') > 0 OR instr(CAST(NEW.pay"
        "load AS BLOB), x'ED') > 0 OR instr(CAST(NEW.payload AS BLOB), x'EF') > 0) OR instr"
        "(NEW.payload, '\\u') > 0)\n"
        '        AND json_valid(NEW.payload) AND (length(CASE\n'
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
        'END) < length(CAST(CASE\n'
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
        'END AS BLOB)) AND CASE\n'
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
        "END GLOB '*[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u2e80-\u9fff"
        "\ua960-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]*')\n"
        '        AND EXISTS (SELECT 1 FROM search_sessions WHERE session_id = NEW.session_i'
        'd) BEGIN\n'
        '        INSERT INTO session_entry_grams(rowid, text)\n'
        '        VALUES (((SELECT num FROM search_sessions WHERE session_id = NEW.session_i'
        'd) << 32) + NEW.sequence, (coalesce(CASE\n'
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
        "END, '') || '  '));\n"
        '    END'
    ),
    (
        'CREATE TRIGGER search_digest_grams_chat AFTER INSERT ON search_sessions\n'
        '    WHEN (length((SELECT title FROM sessions WHERE id = NEW.session_id)) < length('
        'CAST((SELECT title FROM sessions WHERE id = NEW.session_id) AS BLOB)) AND (SELECT '
        "title FROM sessions WHERE id = NEW.session_id) GLOB '*[\u0e00-\u0eff\u1000-\u109f"
        '\u1100-\u11ff\u1780-\u17ff\u2e80-\u9fff\ua960-\ud7ff\uf900-\ufaff\uff66-\uff9f'
        "\U00020000-\U0003134f]*') BEGIN\n"
        '        INSERT OR REPLACE INTO chat_digest_grams(rowid, title, first_message, firs'
        't_reply, summary)\n'
        '        VALUES (NEW.num, (coalesce((SELECT title FROM sessions WHERE id = NEW.sess'
        "ion_id), '') || '  '),\n"
        "                '  ', '  ', '  ');\n"
        '    END'
    ),
    (
        'CREATE TRIGGER search_digest_grams_retitled AFTER UPDATE OF title ON sessions BEGI'
        'N\n'
        "        UPDATE chat_digest_grams SET title = (coalesce(NEW.title, '') || '  ')\n"
        '        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.id);'
        '\n'
        '        INSERT INTO chat_digest_grams(rowid, title, first_message, first_reply, su'
        'mmary)\n'
        "        SELECT rowid, (coalesce(NEW.title, '') || '  '), (coalesce(first_message, "
        "'') || '  '), (coalesce(first_reply, '') || '  '), (coalesce(summary, '') || '  ')"
        ' FROM chat_digest_fts\n'
        '        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.id) '
        "AND (length(NEW.title) < length(CAST(NEW.title AS BLOB)) AND NEW.title GLOB '*["
        '\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u2e80-\u9fff\ua960-\ud7ff'
        "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]*')\n"
        '              AND NOT EXISTS (SELECT 1 FROM chat_digest_grams WHERE rowid = (SELEC'
        'T num FROM search_sessions WHERE session_id = NEW.id));\n'
        '    END'
    ),
    (
        'CREATE TRIGGER search_digest_grams_opening\n'
        '    AFTER UPDATE OF has_first, has_reply ON search_sessions\n'
        '    WHEN (NEW.has_first AND NOT OLD.has_first) OR (NEW.has_reply AND NOT OLD.has_r'
        'eply) BEGIN\n'
        '        INSERT OR REPLACE INTO chat_digest_grams(rowid, title, first_message, firs'
        't_reply, summary)\n'
        "        SELECT rowid, (coalesce(title, '') || '  '), (coalesce(first_message, '') "
        "|| '  '), (coalesce(first_reply, '') || '  '), (coalesce(summary, '') || '  ') FRO"
        'M chat_digest_fts\n'
        '        WHERE rowid = NEW.num AND ((length(title) < length(CAST(title AS BLOB)) AN'
        "D title GLOB '*[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u2e80-\u9fff"
        "\ua960-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]*') OR (length(first_"
        "message) < length(CAST(first_message AS BLOB)) AND first_message GLOB '*[\u0e00-"
        '\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u2e80-\u9fff\ua960-\ud7ff\uf900-'
        "\ufaff\uff66-\uff9f\U00020000-\U0003134f]*') OR (length(first_reply) < length(CAST"
        "(first_reply AS BLOB)) AND first_reply GLOB '*[\u0e00-\u0eff\u1000-\u109f\u1100-"
        '\u11ff\u1780-\u17ff\u2e80-\u9fff\ua960-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-'
        "\U0003134f]*') OR (length(summary) < length(CAST(summary AS BLOB)) AND summary GLO"
        "B '*[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u2e80-\u9fff\ua960-"
        "\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]*'));\n"
        '    END'
    ),
    (
        'CREATE TRIGGER search_digest_grams_summary AFTER INSERT ON session_entries\n'
        "    WHEN NEW.kind IN ('branch.summary', 'checkpoint', 'compaction') AND json_valid"
        '(NEW.payload) BEGIN\n'
        '        UPDATE chat_digest_grams SET summary = (coalesce(CASE\n'
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
        "END, '') || '  ') WHERE rowid = (SELECT num FROM search_sessions WHERE session_id "
        '= NEW.session_id);\n'
        '        INSERT INTO chat_digest_grams(rowid, title, first_message, first_reply, su'
        'mmary)\n'
        "        SELECT rowid, (coalesce(title, '') || '  '), (coalesce(first_message, '') "
        "|| '  '), (coalesce(first_reply, '') || '  '), (coalesce(CASE\n"
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
        "END, '') || '  ') FROM chat_digest_fts\n"
        '        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.sess'
        'ion_id) AND (length(CASE\n'
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
        'END) < length(CAST(CASE\n'
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
        'END AS BLOB)) AND CASE\n'
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
        "END GLOB '*[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u2e80-\u9fff"
        "\ua960-\ud7ff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f]*')\n"
        '              AND NOT EXISTS (SELECT 1 FROM chat_digest_grams WHERE rowid = (SELEC'
        'T num FROM search_sessions WHERE session_id = NEW.session_id));\n'
        '    END'
    ),
)
