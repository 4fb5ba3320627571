"""The exact statements the released `search_large_payloads_outside_sql` migration runs.

Every index trigger that reads a payload, dropped and created again with a size
test (at most 1 MiB) leading its WHEN; larger payloads are indexed from Python.
Generated once from main's search code (commit a4b5ce4) and never edited:
change the schema with a new migration.
"""

from typing import Final

# DROP, then CREATE with the size test, per trigger.
SMALL_PAYLOAD_TRIGGERS: Final = (
    (
        'DROP TRIGGER search_entry_added'
    ),
    (
        'CREATE TRIGGER search_entry_added AFTER INSERT ON session_entries\n'
        "    WHEN length(CAST(NEW.payload AS BLOB)) <= 1048576 AND NEW.kind IN ('assistant."
        "message', 'assistant.text', 'branch.summary', 'checkpoint', 'compaction', 'user.me"
        "ssage', 'user.prompt', 'worker.result') AND json_valid(NEW.payload)\n"
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
        'DROP TRIGGER search_digest_first_message'
    ),
    (
        'CREATE TRIGGER search_digest_first_message AFTER INSERT ON session_entries\n'
        "    WHEN length(CAST(NEW.payload AS BLOB)) <= 1048576 AND NEW.kind IN ('user.messa"
        "ge', 'user.prompt') AND json_valid(NEW.payload)\n"
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
        'DROP TRIGGER search_digest_first_reply'
    ),
    (
        'CREATE TRIGGER search_digest_first_reply AFTER INSERT ON session_entries\n'
        "    WHEN length(CAST(NEW.payload AS BLOB)) <= 1048576 AND NEW.kind IN ('assistant."
        "message', 'assistant.text') AND json_valid(NEW.payload)\n"
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
        'DROP TRIGGER search_digest_summary'
    ),
    (
        'CREATE TRIGGER search_digest_summary AFTER INSERT ON session_entries\n'
        "    WHEN length(CAST(NEW.payload AS BLOB)) <= 1048576 AND NEW.kind IN ('branch.sum"
        "mary', 'checkpoint', 'compaction') AND json_valid(NEW.payload) BEGIN\n"
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
    (
        'DROP TRIGGER search_entry_grams_added'
    ),
    (
        'CREATE TRIGGER search_entry_grams_added AFTER INSERT ON session_entries\n'
        "    WHEN length(CAST(NEW.payload AS BLOB)) <= 1048576 AND NEW.kind IN ('assistant."
        "message', 'assistant.text', 'branch.summary', 'checkpoint', 'compaction', 'user.me"
        "ssage', 'user.prompt', 'worker.result')\n"
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
        'DROP TRIGGER search_digest_grams_summary'
    ),
    (
        'CREATE TRIGGER search_digest_grams_summary AFTER INSERT ON session_entries\n'
        "    WHEN length(CAST(NEW.payload AS BLOB)) <= 1048576 AND NEW.kind IN ('branch.sum"
        "mary', 'checkpoint', 'compaction') AND json_valid(NEW.payload) BEGIN\n"
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
