-- 0009 session_search_index (released; never edited).
--
-- FTS5 word index over conversational entries (rowid = session number << 32 +
-- sequence) and a per-chat digest: tables, then the entries already stored
-- indexed in the migration's transaction, then the triggers that kept the index
-- in sync inside each insert (search_index_deferred later moved them).

CREATE TABLE search_sessions (
        num INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL UNIQUE,
        has_first INTEGER NOT NULL DEFAULT 0,
        has_reply INTEGER NOT NULL DEFAULT 0,
        first_at TEXT,
        last_at TEXT
    );

CREATE VIRTUAL TABLE session_entry_fts USING fts5(
        text, session_id UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2'
    );

CREATE VIRTUAL TABLE chat_digest_fts USING fts5(
        title, first_message, first_reply, summary, tokenize = 'porter unicode61 remove_diacritics 2'
    );

CREATE VIRTUAL TABLE session_entry_vocab USING fts5vocab(session_entry_fts, 'row');

CREATE VIRTUAL TABLE chat_digest_vocab USING fts5vocab(chat_digest_fts, 'row');

INSERT INTO search_sessions(session_id) SELECT id FROM sessions ORDER BY rowid;

INSERT INTO session_entry_fts(rowid, text, session_id)
    SELECT (m.num << 32) + e.sequence, CASE
    WHEN e.kind = 'checkpoint' THEN
        CASE WHEN json_extract(e.payload, '$.label') = json_extract(e.payload, '$.summary')
             THEN json_extract(e.payload, '$.summary')
             ELSE trim(coalesce(json_extract(e.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(e.payload, '$.summary'), '')) END
    WHEN e.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(e.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(e.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(e.payload, '$.text'))
END, e.session_id
    FROM session_entries e JOIN search_sessions m ON m.session_id = e.session_id
    WHERE e.kind IN ('assistant.message', 'assistant.text', 'branch.summary', 'checkpoint', 'compaction', 'user.message', 'user.prompt', 'worker.result') AND json_valid(e.payload);

INSERT INTO chat_digest_fts(rowid, title, first_message, first_reply, summary)
    SELECT m.num, s.title,
        coalesce((SELECT substr(coalesce(CASE
    WHEN e.kind = 'checkpoint' THEN
        CASE WHEN json_extract(e.payload, '$.label') = json_extract(e.payload, '$.summary')
             THEN json_extract(e.payload, '$.summary')
             ELSE trim(coalesce(json_extract(e.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(e.payload, '$.summary'), '')) END
    WHEN e.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(e.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(e.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(e.payload, '$.text'))
END, ''), 1, 2000) FROM session_entries e
        WHERE e.session_id = s.id AND e.kind IN ('user.message', 'user.prompt') AND json_valid(e.payload)
              AND coalesce(CASE
    WHEN e.kind = 'checkpoint' THEN
        CASE WHEN json_extract(e.payload, '$.label') = json_extract(e.payload, '$.summary')
             THEN json_extract(e.payload, '$.summary')
             ELSE trim(coalesce(json_extract(e.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(e.payload, '$.summary'), '')) END
    WHEN e.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(e.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(e.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(e.payload, '$.text'))
END, '') <> '' ORDER BY e.sequence LIMIT 1), ''),
        coalesce((SELECT substr(coalesce(CASE
    WHEN e.kind = 'checkpoint' THEN
        CASE WHEN json_extract(e.payload, '$.label') = json_extract(e.payload, '$.summary')
             THEN json_extract(e.payload, '$.summary')
             ELSE trim(coalesce(json_extract(e.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(e.payload, '$.summary'), '')) END
    WHEN e.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(e.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(e.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(e.payload, '$.text'))
END, ''), 1, 2000) FROM session_entries e
        WHERE e.session_id = s.id AND e.kind IN ('assistant.message', 'assistant.text') AND json_valid(e.payload)
              AND coalesce(CASE
    WHEN e.kind = 'checkpoint' THEN
        CASE WHEN json_extract(e.payload, '$.label') = json_extract(e.payload, '$.summary')
             THEN json_extract(e.payload, '$.summary')
             ELSE trim(coalesce(json_extract(e.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(e.payload, '$.summary'), '')) END
    WHEN e.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(e.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(e.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(e.payload, '$.text'))
END, '') <> '' ORDER BY e.sequence LIMIT 1), ''),
        coalesce((SELECT CASE
    WHEN e.kind = 'checkpoint' THEN
        CASE WHEN json_extract(e.payload, '$.label') = json_extract(e.payload, '$.summary')
             THEN json_extract(e.payload, '$.summary')
             ELSE trim(coalesce(json_extract(e.payload, '$.label'), '') || ' '
                       || coalesce(json_extract(e.payload, '$.summary'), '')) END
    WHEN e.kind IN ('worker.result', 'compaction', 'branch.summary')
        THEN json_extract(e.payload, '$.summary')
    ELSE coalesce(
        (SELECT group_concat(json_extract(b.value, '$.text'), char(10))
         FROM json_each(e.payload, '$.content') AS b
         WHERE CASE WHEN b.type = 'object' THEN json_extract(b.value, '$.type') END = 'text'),
        json_extract(e.payload, '$.text'))
END FROM session_entries e
                  WHERE e.session_id = s.id AND e.kind IN ('branch.summary', 'checkpoint', 'compaction')
                        AND json_valid(e.payload) ORDER BY e.sequence DESC LIMIT 1), '')
    FROM sessions s JOIN search_sessions m ON m.session_id = s.id;

UPDATE search_sessions SET first_at = a.first_at, last_at = a.last_at
    FROM (SELECT session_id, min(created_at) AS first_at, max(created_at) AS last_at
          FROM session_entries GROUP BY session_id) AS a
    WHERE a.session_id = search_sessions.session_id;

UPDATE search_sessions SET
        has_first = (SELECT first_message <> '' FROM chat_digest_fts WHERE rowid = num),
        has_reply = (SELECT first_reply <> '' FROM chat_digest_fts WHERE rowid = num);

CREATE TRIGGER search_session_added AFTER INSERT ON sessions BEGIN
        INSERT OR IGNORE INTO search_sessions(session_id) VALUES (NEW.id);
        INSERT OR REPLACE INTO chat_digest_fts(rowid, title, first_message, first_reply, summary)
        VALUES ((SELECT num FROM search_sessions WHERE session_id = NEW.id), NEW.title, '', '', '');
    END;

CREATE TRIGGER search_session_retitled AFTER UPDATE OF title ON sessions BEGIN
        UPDATE chat_digest_fts SET title = NEW.title WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.id);
    END;

CREATE TRIGGER search_session_activity AFTER INSERT ON session_entries BEGIN
        UPDATE search_sessions
        SET first_at = min(coalesce(first_at, NEW.created_at), NEW.created_at),
            last_at = max(coalesce(last_at, NEW.created_at), NEW.created_at)
        WHERE session_id = NEW.session_id;
    END;

CREATE TRIGGER search_entry_added AFTER INSERT ON session_entries
    WHEN NEW.kind IN ('assistant.message', 'assistant.text', 'branch.summary', 'checkpoint', 'compaction', 'user.message', 'user.prompt', 'worker.result') AND json_valid(NEW.payload)
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

CREATE TRIGGER search_digest_first_message AFTER INSERT ON session_entries
    WHEN NEW.kind IN ('user.message', 'user.prompt') AND json_valid(NEW.payload)
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

CREATE TRIGGER search_digest_first_reply AFTER INSERT ON session_entries
    WHEN NEW.kind IN ('assistant.message', 'assistant.text') AND json_valid(NEW.payload)
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

CREATE TRIGGER search_digest_summary AFTER INSERT ON session_entries
    WHEN NEW.kind IN ('branch.summary', 'checkpoint', 'compaction') AND json_valid(NEW.payload) BEGIN
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
