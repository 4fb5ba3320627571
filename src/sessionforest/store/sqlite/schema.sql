-- The schema of a fresh SQLite store after every migration in store/sqlite/sql/.
-- Written by scripts/schema-dump; tests/store/test_schema_dump.py checks a fresh
-- store and upgraded old ones against it. Do not edit by hand.

PRAGMA application_id = 1397117780;
PRAGMA user_version = 32;

-- migration create_sessions
-- migration create_agent_events
-- migration create_session_entries
-- migration create_session_heads
-- migration entries_immutable
-- migration agent_events_to_forest
-- migration session_status_visibility_quarantine
-- migration workspace_and_agent_trees
-- migration session_search_index
-- migration session_sources
-- migration session_gram_index
-- migration store_application_id
-- migration session_origin_cwd
-- migration sessions_kept
-- migration sessions_no_adoption
-- migration search_large_payloads_outside_sql
-- migration search_index_deferred
-- migration session_paths
-- migration chat_digest_project
-- migration session_path_segments
-- migration entry_vectors
-- migration entry_branch_index
-- migration followed_sources
-- migration session_provenance
-- migration handoffs
-- migration search_tool_text
-- migration session_renamed
-- migration session_listing
-- migration session_changes
-- migration session_messages
-- migration search_harness_output
-- migration session_path_chunks

-- table agents on agents
CREATE TABLE agents (
            id TEXT PRIMARY KEY,
            parent_id TEXT,
            role TEXT NOT NULL CHECK (role IN ('orchestrator', 'worker')),
            session_id TEXT NOT NULL,
            workspace_id TEXT,
            policy TEXT,
            created_at TEXT NOT NULL,
            removed_at TEXT,
            CHECK ((role = 'orchestrator') = (parent_id IS NULL)),
            CHECK ((role = 'worker') = (policy IS NOT NULL))
        );

-- index agents_live_session on agents
CREATE UNIQUE INDEX agents_live_session ON agents(session_id) WHERE removed_at IS NULL;

-- index agents_parent on agents
CREATE INDEX agents_parent ON agents(parent_id);

-- table chat_digest_fts on chat_digest_fts
CREATE VIRTUAL TABLE chat_digest_fts USING fts5(
        title, first_message, first_reply, summary, tokenize = 'porter unicode61 remove_diacritics 2'
    );

-- table chat_digest_fts_config on chat_digest_fts_config
CREATE TABLE 'chat_digest_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;

-- table chat_digest_fts_content on chat_digest_fts_content
CREATE TABLE 'chat_digest_fts_content'(id INTEGER PRIMARY KEY, c0, c1, c2, c3);

-- table chat_digest_fts_data on chat_digest_fts_data
CREATE TABLE 'chat_digest_fts_data'(id INTEGER PRIMARY KEY, block BLOB);

-- table chat_digest_fts_docsize on chat_digest_fts_docsize
CREATE TABLE 'chat_digest_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB);

-- table chat_digest_fts_idx on chat_digest_fts_idx
CREATE TABLE 'chat_digest_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;

-- table chat_digest_gram_vocab on chat_digest_gram_vocab
CREATE VIRTUAL TABLE chat_digest_gram_vocab USING fts5vocab(chat_digest_grams, 'row');

-- table chat_digest_grams on chat_digest_grams
CREATE VIRTUAL TABLE chat_digest_grams USING fts5(
        title, first_message, first_reply, summary, tokenize = 'trigram'
    );

-- table chat_digest_grams_config on chat_digest_grams_config
CREATE TABLE 'chat_digest_grams_config'(k PRIMARY KEY, v) WITHOUT ROWID;

-- table chat_digest_grams_content on chat_digest_grams_content
CREATE TABLE 'chat_digest_grams_content'(id INTEGER PRIMARY KEY, c0, c1, c2, c3);

-- table chat_digest_grams_data on chat_digest_grams_data
CREATE TABLE 'chat_digest_grams_data'(id INTEGER PRIMARY KEY, block BLOB);

-- table chat_digest_grams_docsize on chat_digest_grams_docsize
CREATE TABLE 'chat_digest_grams_docsize'(id INTEGER PRIMARY KEY, sz BLOB);

-- table chat_digest_grams_idx on chat_digest_grams_idx
CREATE TABLE 'chat_digest_grams_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;

-- table chat_digest_vocab on chat_digest_vocab
CREATE VIRTUAL TABLE chat_digest_vocab USING fts5vocab(chat_digest_fts, 'row');

-- table entry_vectors on entry_vectors
CREATE TABLE entry_vectors (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        entry INTEGER NOT NULL UNIQUE,
        vector BLOB NOT NULL
    );

-- table followed_sources on followed_sources
CREATE TABLE followed_sources (
    path TEXT PRIMARY KEY,
    format TEXT NOT NULL,
    position TEXT NOT NULL,
    source_offset INTEGER NOT NULL,
    chat TEXT,
    updated_at TEXT NOT NULL,
    error TEXT
) WITHOUT ROWID;

-- table forest_migrations on forest_migrations
CREATE TABLE forest_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL);

-- table handoffs on handoffs
CREATE TABLE handoffs (
    format TEXT NOT NULL,
    source_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    path TEXT NOT NULL,
    target TEXT NOT NULL,
    plan TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (format, source_id)
) WITHOUT ROWID;

-- index handoffs_session on handoffs
CREATE INDEX handoffs_session ON handoffs(session_id);

-- view search_feed on search_feed
CREATE VIEW search_feed AS
    SELECT session_id, sequence, kind, payload, created_at
    FROM session_entries WHERE 0;

-- trigger search_digest_first_message on search_feed
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

-- trigger search_digest_first_reply on search_feed
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

-- trigger search_digest_grams_summary on search_feed
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

-- trigger search_digest_summary on search_feed
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

-- trigger search_entry_added on search_feed
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

-- trigger search_entry_grams_added on search_feed
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

-- trigger search_session_activity on search_feed
CREATE TRIGGER search_session_activity INSTEAD OF INSERT ON search_feed BEGIN
        UPDATE search_sessions
        SET first_at = min(coalesce(first_at, NEW.created_at), NEW.created_at),
            last_at = max(coalesce(last_at, NEW.created_at), NEW.created_at)
        WHERE session_id = NEW.session_id;
    END;

-- table search_pending on search_pending
CREATE TABLE search_pending (
        session_id TEXT PRIMARY KEY,
        from_sequence INTEGER NOT NULL
    ) WITHOUT ROWID;

-- table search_sessions on search_sessions
CREATE TABLE search_sessions (
        num INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL UNIQUE,
        has_first INTEGER NOT NULL DEFAULT 0,
        has_reply INTEGER NOT NULL DEFAULT 0,
        first_at TEXT,
        last_at TEXT
    );

-- trigger search_digest_grams_chat on search_sessions
CREATE TRIGGER search_digest_grams_chat AFTER INSERT ON search_sessions
    WHEN (length((SELECT title FROM sessions WHERE id = NEW.session_id)) < length(CAST((SELECT title FROM sessions WHERE id = NEW.session_id) AS BLOB)) AND (SELECT title FROM sessions WHERE id = NEW.session_id) GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*') BEGIN
        INSERT OR REPLACE INTO chat_digest_grams(rowid, title, first_message, first_reply, summary)
        VALUES (NEW.num, (coalesce((SELECT title FROM sessions WHERE id = NEW.session_id), '') || '  '),
                '  ', '  ', '  ');
    END;

-- trigger search_digest_grams_opening on search_sessions
CREATE TRIGGER search_digest_grams_opening
    AFTER UPDATE OF has_first, has_reply ON search_sessions
    WHEN (NEW.has_first AND NOT OLD.has_first) OR (NEW.has_reply AND NOT OLD.has_reply) BEGIN
        INSERT OR REPLACE INTO chat_digest_grams(rowid, title, first_message, first_reply, summary)
        SELECT rowid, (coalesce(title, '') || '  '), (coalesce(first_message, '') || '  '), (coalesce(first_reply, '') || '  '), (coalesce(summary, '') || '  ') FROM chat_digest_fts
        WHERE rowid = NEW.num AND ((length(title) < length(CAST(title AS BLOB)) AND title GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*') OR (length(first_message) < length(CAST(first_message AS BLOB)) AND first_message GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*') OR (length(first_reply) < length(CAST(first_reply AS BLOB)) AND first_reply GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*') OR (length(summary) < length(CAST(summary AS BLOB)) AND summary GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*'));
    END;

-- trigger vector_note_activity on search_sessions
CREATE TRIGGER vector_note_activity AFTER UPDATE OF last_at ON search_sessions
    BEGIN INSERT OR IGNORE INTO vector_pending(num) VALUES (NEW.num); END;

-- table search_tool_pending on search_tool_pending
CREATE TABLE search_tool_pending (
        session_id TEXT PRIMARY KEY,
        from_sequence INTEGER NOT NULL,
        below_sequence INTEGER NOT NULL
    ) WITHOUT ROWID;

-- table session_changes on session_changes
CREATE TABLE session_changes (
    rev INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL UNIQUE
);

-- table session_entries on session_entries
CREATE TABLE session_entries (
            id TEXT NOT NULL PRIMARY KEY,
            session_id TEXT NOT NULL,
            parent_entry_id TEXT,
            sequence INTEGER NOT NULL,
            semantic_schema_version INTEGER NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            context_visibility TEXT NOT NULL,
            created_at TEXT NOT NULL,
            stamp TEXT
        , parent_sequence INTEGER);

-- index session_entries_branch on session_entries
CREATE INDEX session_entries_branch ON session_entries(parent_entry_id) WHERE parent_entry_id IS NOT NULL AND (parent_sequence IS NULL OR parent_sequence <> sequence - 1);

-- index session_entries_sequence on session_entries
CREATE UNIQUE INDEX session_entries_sequence ON session_entries(session_id, sequence);

-- trigger search_entry_pending on session_entries
CREATE TRIGGER search_entry_pending AFTER INSERT ON session_entries BEGIN
        INSERT OR IGNORE INTO search_pending(session_id, from_sequence)
        VALUES (NEW.session_id, NEW.sequence);
    END;

-- trigger session_entries_no_delete on session_entries
CREATE TRIGGER session_entries_no_delete BEFORE DELETE ON session_entries
        BEGIN
            SELECT RAISE(ABORT, 'session_entries are immutable: an entry cannot be deleted');
        END;

-- trigger session_entries_no_update on session_entries
CREATE TRIGGER session_entries_no_update BEFORE UPDATE ON session_entries
        BEGIN
            SELECT RAISE(ABORT, 'session_entries are immutable: an entry cannot be updated');
        END;

-- table session_entry_fts on session_entry_fts
CREATE VIRTUAL TABLE "session_entry_fts" USING fts5(
        text, tool, session_id UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2'
    );

-- table session_entry_fts_config on session_entry_fts_config
CREATE TABLE "session_entry_fts_config"(k PRIMARY KEY, v) WITHOUT ROWID;

-- table session_entry_fts_content on session_entry_fts_content
CREATE TABLE "session_entry_fts_content"(id INTEGER PRIMARY KEY, c0, c1, c2);

-- table session_entry_fts_data on session_entry_fts_data
CREATE TABLE "session_entry_fts_data"(id INTEGER PRIMARY KEY, block BLOB);

-- table session_entry_fts_docsize on session_entry_fts_docsize
CREATE TABLE "session_entry_fts_docsize"(id INTEGER PRIMARY KEY, sz BLOB);

-- table session_entry_fts_idx on session_entry_fts_idx
CREATE TABLE "session_entry_fts_idx"(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;

-- table session_entry_gram_vocab on session_entry_gram_vocab
CREATE VIRTUAL TABLE session_entry_gram_vocab USING fts5vocab(session_entry_grams, 'row');

-- table session_entry_grams on session_entry_grams
CREATE VIRTUAL TABLE session_entry_grams USING fts5(text, tokenize = 'trigram');

-- table session_entry_grams_config on session_entry_grams_config
CREATE TABLE 'session_entry_grams_config'(k PRIMARY KEY, v) WITHOUT ROWID;

-- table session_entry_grams_content on session_entry_grams_content
CREATE TABLE 'session_entry_grams_content'(id INTEGER PRIMARY KEY, c0);

-- table session_entry_grams_data on session_entry_grams_data
CREATE TABLE 'session_entry_grams_data'(id INTEGER PRIMARY KEY, block BLOB);

-- table session_entry_grams_docsize on session_entry_grams_docsize
CREATE TABLE 'session_entry_grams_docsize'(id INTEGER PRIMARY KEY, sz BLOB);

-- table session_entry_grams_idx on session_entry_grams_idx
CREATE TABLE 'session_entry_grams_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;

-- table session_entry_vocab on session_entry_vocab
CREATE VIRTUAL TABLE session_entry_vocab USING fts5vocab(session_entry_fts, 'row');

-- table session_heads on session_heads
CREATE TABLE session_heads (
            session_id TEXT PRIMARY KEY,
            active_entry_id TEXT,
            updated_at TEXT NOT NULL
        , path_tip TEXT, path_length INTEGER, messages INTEGER NOT NULL DEFAULT 0);

-- table session_path_chunks on session_path_chunks
CREATE TABLE session_path_chunks (
            session_id TEXT NOT NULL,
            last_sequence INTEGER NOT NULL,
            depth INTEGER NOT NULL,
            entries INTEGER NOT NULL,
            body BLOB NOT NULL,
            PRIMARY KEY (session_id, last_sequence)
        );

-- table session_path_segments on session_path_segments
CREATE TABLE session_path_segments (
            session_id TEXT NOT NULL,
            depth INTEGER NOT NULL,
            from_sequence INTEGER NOT NULL,
            PRIMARY KEY (session_id, depth)
        ) WITHOUT ROWID;

-- table sessions on sessions
CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            harness TEXT NOT NULL DEFAULT '',
            cwd TEXT,
            created_at TEXT NOT NULL
        , status TEXT NOT NULL DEFAULT 'active', visibility TEXT NOT NULL DEFAULT 'top-level', quarantine TEXT, source_format TEXT, source_path TEXT, source_id TEXT, summary TEXT, git_branch TEXT, origin_cwd TEXT, git_commit TEXT, git_repository TEXT, origin_project TEXT, renamed INTEGER NOT NULL DEFAULT 0);

-- index sessions_source on sessions
CREATE INDEX sessions_source ON sessions(source_format, source_id);

-- trigger search_digest_grams_retitled on sessions
CREATE TRIGGER search_digest_grams_retitled AFTER UPDATE OF title ON sessions BEGIN
        UPDATE chat_digest_grams SET title = (coalesce(NEW.title, '') || '  ')
        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.id);
        INSERT INTO chat_digest_grams(rowid, title, first_message, first_reply, summary)
        SELECT rowid, (coalesce(NEW.title, '') || '  '), (coalesce(first_message, '') || '  '), (coalesce(first_reply, '') || '  '), (coalesce(summary, '') || '  ') FROM chat_digest_fts
        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.id) AND (length(NEW.title) < length(CAST(NEW.title AS BLOB)) AND NEW.title GLOB '*[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]*')
              AND NOT EXISTS (SELECT 1 FROM chat_digest_grams WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.id));
    END;

-- trigger search_session_added on sessions
CREATE TRIGGER search_session_added AFTER INSERT ON sessions BEGIN
        INSERT OR IGNORE INTO search_sessions(session_id) VALUES (NEW.id);
        INSERT OR REPLACE INTO chat_digest_fts(rowid, title, first_message, first_reply, summary)
        VALUES ((SELECT num FROM search_sessions WHERE session_id = NEW.id),
                NEW.title || CASE WHEN trim(substr(rtrim(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', '')), '/'), length(rtrim(rtrim(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', '')), '/'), replace(rtrim(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', '')), '/'), '/', ''))) + 1) || ' ' || substr(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), length(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', ''))) + 1)) <> '' THEN char(10) || trim(substr(rtrim(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', '')), '/'), length(rtrim(rtrim(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', '')), '/'), replace(rtrim(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', '')), '/'), '/', ''))) + 1) || ' ' || substr(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), length(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', ''))) + 1)) ELSE '' END, '', '', '');
    END;

-- trigger search_session_retitled on sessions
CREATE TRIGGER search_session_retitled
    AFTER UPDATE OF title, cwd, origin_cwd ON sessions BEGIN
        UPDATE chat_digest_fts SET title = NEW.title || CASE WHEN trim(substr(rtrim(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', '')), '/'), length(rtrim(rtrim(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', '')), '/'), replace(rtrim(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', '')), '/'), '/', ''))) + 1) || ' ' || substr(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), length(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', ''))) + 1)) <> '' THEN char(10) || trim(substr(rtrim(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', '')), '/'), length(rtrim(rtrim(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', '')), '/'), replace(rtrim(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', '')), '/'), '/', ''))) + 1) || ' ' || substr(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), length(rtrim(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), replace(rtrim(replace(coalesce(NEW.cwd, NEW.origin_cwd, ''), char(92), '/'), '/'), '/', ''))) + 1)) ELSE '' END
        WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = NEW.id);
    END;

-- trigger sessions_created on sessions
CREATE TRIGGER sessions_created AFTER INSERT ON sessions
        BEGIN
            DELETE FROM session_changes WHERE session_id = NEW.id;
            INSERT INTO session_changes(session_id) VALUES (NEW.id);
        END;

-- trigger sessions_have_a_head on sessions
CREATE TRIGGER sessions_have_a_head AFTER INSERT ON sessions
        BEGIN
            INSERT INTO session_heads(session_id, active_entry_id, updated_at)
            SELECT NEW.id, NULL, NEW.created_at
            WHERE NOT EXISTS (SELECT 1 FROM session_heads WHERE session_id = NEW.id);
        END;

-- trigger sessions_no_adoption on sessions
CREATE TRIGGER sessions_no_adoption BEFORE INSERT ON sessions
        WHEN NEW.quarantine IS NULL AND (
            EXISTS (SELECT 1 FROM session_entries WHERE session_id = NEW.id)
            OR EXISTS (SELECT 1 FROM session_heads WHERE session_id = NEW.id))
        BEGIN
            SELECT RAISE(ABORT, 'session row refused: entries or a head of a session with this id remain');
        END;

-- trigger sessions_no_delete on sessions
CREATE TRIGGER sessions_no_delete BEFORE DELETE ON sessions
        BEGIN
            SELECT RAISE(ABORT, 'a session cannot be deleted: archive it instead');
        END;

-- trigger sessions_no_id_change on sessions
CREATE TRIGGER sessions_no_id_change BEFORE UPDATE OF id ON sessions
        WHEN NEW.id IS NOT OLD.id
        BEGIN
            SELECT RAISE(ABORT, 'a session id cannot change: its entries name it');
        END;

-- trigger sessions_status_set on sessions
CREATE TRIGGER sessions_status_set AFTER UPDATE OF status, title ON sessions
        WHEN NEW.status IS NOT OLD.status OR NEW.title IS NOT OLD.title
        BEGIN
            DELETE FROM session_changes WHERE session_id = NEW.id;
            INSERT INTO session_changes(session_id) VALUES (NEW.id);
        END;

-- table sqlite_sequence on sqlite_sequence
CREATE TABLE sqlite_sequence(name,seq);

-- table vector_model on vector_model
CREATE TABLE vector_model (one INTEGER PRIMARY KEY CHECK (one = 1), model TEXT NOT NULL);

-- table vector_pending on vector_pending
CREATE TABLE vector_pending (num INTEGER PRIMARY KEY);

-- table vector_progress on vector_progress
CREATE TABLE vector_progress (num INTEGER PRIMARY KEY, upto INTEGER NOT NULL);

-- table workspaces on workspaces
CREATE TABLE workspaces (
            id TEXT PRIMARY KEY,
            parent_id TEXT,
            kind TEXT NOT NULL
                CHECK (kind IN ('repository', 'task_worktree', 'worker_worktree')),
            path TEXT NOT NULL,
            branch TEXT,
            created_at TEXT NOT NULL,
            removed_at TEXT,
            CHECK ((kind = 'repository') = (parent_id IS NULL))
        );

-- index workspaces_live_path on workspaces
CREATE UNIQUE INDEX workspaces_live_path ON workspaces(path) WHERE removed_at IS NULL;

-- index workspaces_parent on workspaces
CREATE INDEX workspaces_parent ON workspaces(parent_id);
