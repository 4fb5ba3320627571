-- 0017 search_index_deferred (released; never edited).
--
-- The full-text index leaves the append's transaction: the seven AFTER INSERT
-- triggers on session_entries move, unchanged in body, to INSTEAD OF INSERT
-- triggers on the empty view `search_feed`, and one trigger records which
-- session has entries not yet indexed (`search_pending`: its lowest such
-- sequence); store/sqlite/search/catchup.py feeds those entries through the
-- view. Every entry stored so far was indexed by the old triggers: nothing is
-- pending.

DROP TRIGGER search_session_activity;

DROP TRIGGER search_entry_added;

DROP TRIGGER search_digest_first_message;

DROP TRIGGER search_digest_first_reply;

DROP TRIGGER search_digest_summary;

DROP TRIGGER search_entry_grams_added;

DROP TRIGGER search_digest_grams_summary;

CREATE VIEW search_feed AS
    SELECT session_id, sequence, kind, payload, created_at
    FROM session_entries WHERE 0;

CREATE TABLE search_pending (
        session_id TEXT PRIMARY KEY,
        from_sequence INTEGER NOT NULL
    ) WITHOUT ROWID;

CREATE TRIGGER search_entry_pending AFTER INSERT ON session_entries BEGIN
        INSERT OR IGNORE INTO search_pending(session_id, from_sequence)
        VALUES (NEW.session_id, NEW.sequence);
    END;

CREATE TRIGGER search_session_activity INSTEAD OF INSERT ON search_feed BEGIN
        UPDATE search_sessions
        SET first_at = min(coalesce(first_at, NEW.created_at), NEW.created_at),
            last_at = max(coalesce(last_at, NEW.created_at), NEW.created_at)
        WHERE session_id = NEW.session_id;
    END;

CREATE TRIGGER search_entry_added INSTEAD OF INSERT ON search_feed
    WHEN length(CAST(NEW.payload AS BLOB)) <= 1048576 AND NEW.kind IN ('assistant.message', 'assistant.text', 'branch.summary', 'checkpoint', 'compaction', 'user.message', 'user.prompt', 'worker.result') AND json_valid(NEW.payload)
        AND EXISTS (SELECT 1 FROM search_sessions WHERE session_id = NEW.session_id) BEGIN
        INSERT INTO session_entry_fts(rowid, text, session_id)
        VALUES (((SELECT num FROM search_sessions WHERE session_id = NEW.session_id) << 32) + NEW.sequence, CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END, NEW.session_id);
    END;

CREATE TRIGGER search_digest_first_message INSTEAD OF INSERT ON search_feed
    WHEN length(CAST(NEW.payload AS BLOB)) <= 1048576 AND NEW.kind IN ('user.message', 'user.prompt') AND json_valid(NEW.payload)
        AND (SELECT has_first FROM search_sessions WHERE session_id = NEW.session_id) = 0 BEGIN
        UPDATE chat_digest_fts SET first_message = substr(coalesce(CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END, ''), 1, 2000)
        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.session_id);
        UPDATE search_sessions SET has_first = 1
        WHERE session_id = NEW.session_id AND substr(coalesce(CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END, ''), 1, 2000) <> '';
    END;

CREATE TRIGGER search_digest_first_reply INSTEAD OF INSERT ON search_feed
    WHEN length(CAST(NEW.payload AS BLOB)) <= 1048576 AND NEW.kind IN ('assistant.message', 'assistant.text') AND json_valid(NEW.payload)
        AND (SELECT has_reply FROM search_sessions WHERE session_id = NEW.session_id) = 0 BEGIN
        UPDATE chat_digest_fts SET first_reply = substr(coalesce(CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END, ''), 1, 2000)
        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.session_id);
        UPDATE search_sessions SET has_reply = 1
        WHERE session_id = NEW.session_id AND substr(coalesce(CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END, ''), 1, 2000) <> '';
    END;

CREATE TRIGGER search_digest_summary INSTEAD OF INSERT ON search_feed
    WHEN length(CAST(NEW.payload AS BLOB)) <= 1048576 AND NEW.kind IN ('branch.summary', 'checkpoint', 'compaction') AND json_valid(NEW.payload) BEGIN
        UPDATE chat_digest_fts SET summary = coalesce(CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END, '')
        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.session_id);
    END;

CREATE TRIGGER search_entry_grams_added INSTEAD OF INSERT ON search_feed
    WHEN length(CAST(NEW.payload AS BLOB)) <= 1048576 AND NEW.kind IN ('assistant.message', 'assistant.text', 'branch.summary', 'checkpoint', 'compaction', 'user.message', 'user.prompt', 'worker.result')
        AND (length(NEW.payload) < length(CAST(NEW.payload AS BLOB)) AND (instr(CAST(NEW.payload AS BLOB), x'E0') > 0 OR instr(CAST(NEW.payload AS BLOB), x'E1') > 0 OR instr(CAST(NEW.payload AS BLOB), x'E3') > 0 OR instr(CAST(NEW.payload AS BLOB), x'E4') > 0 OR instr(CAST(NEW.payload AS BLOB), x'E5') > 0 OR instr(CAST(NEW.payload AS BLOB), x'E6') > 0 OR instr(CAST(NEW.payload AS BLOB), x'E7') > 0 OR instr(CAST(NEW.payload AS BLOB), x'E8') > 0 OR instr(CAST(NEW.payload AS BLOB), x'E9') > 0 OR instr(CAST(NEW.payload AS BLOB), x'EA') > 0 OR instr(CAST(NEW.payload AS BLOB), x'EB') > 0 OR instr(CAST(NEW.payload AS BLOB), x'EC') > 0 OR instr(CAST(NEW.payload AS BLOB), x'ED') > 0 OR instr(CAST(NEW.payload AS BLOB), x'EF') > 0) OR instr(NEW.payload, '\u') > 0)
        AND json_valid(NEW.payload) AND (length(CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END) < length(CAST(CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END AS BLOB)) AND CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*')
        AND EXISTS (SELECT 1 FROM search_sessions WHERE session_id = NEW.session_id) BEGIN
        INSERT INTO session_entry_grams(rowid, text)
        VALUES (((SELECT num FROM search_sessions WHERE session_id = NEW.session_id) << 32) + NEW.sequence, (coalesce(CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END, '') || '  '));
    END;

CREATE TRIGGER search_digest_grams_summary INSTEAD OF INSERT ON search_feed
    WHEN length(CAST(NEW.payload AS BLOB)) <= 1048576 AND NEW.kind IN ('branch.summary', 'checkpoint', 'compaction') AND json_valid(NEW.payload) BEGIN
        UPDATE chat_digest_grams SET summary = (coalesce(CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END, '') || '  ') WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.session_id);
        INSERT INTO chat_digest_grams(rowid, title, first_message, first_reply, summary)
        SELECT rowid, (coalesce(title, '') || '  '), (coalesce(first_message, '') || '  '), (coalesce(first_reply, '') || '  '), (coalesce(CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END, '') || '  ') FROM chat_digest_fts
        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.session_id) AND (length(CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END) < length(CAST(CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END AS BLOB)) AND CASE
    WHEN NEW.kind = 'checkpoint' THEN
        CASE WHEN json_extract(NEW.payload, '$.label') = json_extract(NEW.payload, '$.summary')
             THEN json_extract(NEW.payload, '$.summary')
             ELSE trim(coalesce(json_extract(NEW.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(NEW.payload, '$.summary'), '')) END
    WHEN NEW.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(NEW.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(NEW.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(NEW.payload, '$.text'))
END GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*')
              AND NOT EXISTS (SELECT 1 FROM chat_digest_grams WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.session_id));
    END;
