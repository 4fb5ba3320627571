-- 0011 session_gram_index (released; never edited).
--
-- A trigram index beside the word index, for text in scripts written without
-- spaces (Chinese, Japanese, Korean, Thai, ...): only rows holding such text,
-- filled from the word index, then kept in sync by triggers.

CREATE VIRTUAL TABLE session_entry_grams USING fts5(text, tokenize = 'trigram');

CREATE VIRTUAL TABLE chat_digest_grams USING fts5(
        title, first_message, first_reply, summary, tokenize = 'trigram'
    );

CREATE VIRTUAL TABLE session_entry_gram_vocab USING fts5vocab(session_entry_grams, 'row');

CREATE VIRTUAL TABLE chat_digest_gram_vocab USING fts5vocab(chat_digest_grams, 'row');

INSERT INTO session_entry_grams(rowid, text)
    SELECT rowid, (coalesce(text, '') || '  ') FROM session_entry_fts WHERE (length(text) < length(CAST(text AS BLOB)) AND text GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*');

INSERT INTO chat_digest_grams(rowid, title, first_message, first_reply, summary)
    SELECT rowid, (coalesce(title, '') || '  '), (coalesce(first_message, '') || '  '), (coalesce(first_reply, '') || '  '), (coalesce(summary, '') || '  ') FROM chat_digest_fts WHERE (length(title) < length(CAST(title AS BLOB)) AND title GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*') OR (length(first_message) < length(CAST(first_message AS BLOB)) AND first_message GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*') OR (length(first_reply) < length(CAST(first_reply AS BLOB)) AND first_reply GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*') OR (length(summary) < length(CAST(summary AS BLOB)) AND summary GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*');

CREATE TRIGGER search_entry_grams_added AFTER INSERT ON session_entries
    WHEN NEW.kind IN ('assistant.message', 'assistant.text', 'branch.summary', 'checkpoint', 'compaction', 'user.message', 'user.prompt', 'worker.result')
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

CREATE TRIGGER search_digest_grams_chat AFTER INSERT ON search_sessions
    WHEN (length((SELECT title FROM sessions WHERE id = NEW.session_id)) < length(CAST((SELECT title FROM sessions WHERE id = NEW.session_id) AS BLOB)) AND (SELECT title FROM sessions WHERE id = NEW.session_id) GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*') BEGIN
        INSERT OR REPLACE INTO chat_digest_grams(rowid, title, first_message, first_reply, summary)
        VALUES (NEW.num, (coalesce((SELECT title FROM sessions WHERE id = NEW.session_id), '') || '  '),
                '  ', '  ', '  ');
    END;

CREATE TRIGGER search_digest_grams_retitled AFTER UPDATE OF title ON sessions BEGIN
        UPDATE chat_digest_grams SET title = (coalesce(NEW.title, '') || '  ')
        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.id);
        INSERT INTO chat_digest_grams(rowid, title, first_message, first_reply, summary)
        SELECT rowid, (coalesce(NEW.title, '') || '  '), (coalesce(first_message, '') || '  '), (coalesce(first_reply, '') || '  '), (coalesce(summary, '') || '  ') FROM chat_digest_fts
        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.id) AND (length(NEW.title) < length(CAST(NEW.title AS BLOB)) AND NEW.title GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*')
              AND NOT EXISTS (SELECT 1 FROM chat_digest_grams WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.id));
    END;

CREATE TRIGGER search_digest_grams_opening
    AFTER UPDATE OF has_first, has_reply ON search_sessions
    WHEN (NEW.has_first AND NOT OLD.has_first) OR (NEW.has_reply AND NOT OLD.has_reply) BEGIN
        INSERT OR REPLACE INTO chat_digest_grams(rowid, title, first_message, first_reply, summary)
        SELECT rowid, (coalesce(title, '') || '  '), (coalesce(first_message, '') || '  '), (coalesce(first_reply, '') || '  '), (coalesce(summary, '') || '  ') FROM chat_digest_fts
        WHERE rowid = NEW.num AND ((length(title) < length(CAST(title AS BLOB)) AND title GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*') OR (length(first_message) < length(CAST(first_message AS BLOB)) AND first_message GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*') OR (length(first_reply) < length(CAST(first_reply AS BLOB)) AND first_reply GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*') OR (length(summary) < length(CAST(summary AS BLOB)) AND summary GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*'));
    END;

CREATE TRIGGER search_digest_grams_summary AFTER INSERT ON session_entries
    WHEN NEW.kind IN ('branch.summary', 'checkpoint', 'compaction') AND json_valid(NEW.payload) BEGIN
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
