-- 0026 search_tool_text (released; never edited).
--
-- The word index gets a second field, `tool`: what the tools said in an entry
-- (tool calls' commands, paths and patterns, tool results' head and tail, the
-- harness's wrapper text in a user message), as sessionforest/tooltext.py
-- computes it; `text` stays the conversational field, weighted above it. An
-- FTS5 table takes no new column, so the index is rebuilt with the rows it
-- holds (their `tool` empty), and the trigger that fills it is made again,
-- unchanged, over the new table. Python fills `tool` as it catches up
-- (store/sqlite/search/catchup.py): the entries indexed before this wait in
-- `search_tool_pending` (from_sequence up to below_sequence, per session),
-- which the same catch-up works off.

DROP TRIGGER search_entry_added;

DROP TABLE session_entry_vocab;

CREATE VIRTUAL TABLE session_entry_fts_tool USING fts5(
        text, tool, session_id UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2'
    );

INSERT INTO session_entry_fts_tool(rowid, text, session_id)
    SELECT rowid, text, session_id FROM session_entry_fts ORDER BY rowid;

DROP TABLE session_entry_fts;

ALTER TABLE session_entry_fts_tool RENAME TO session_entry_fts;

CREATE VIRTUAL TABLE session_entry_vocab USING fts5vocab(session_entry_fts, 'row');

CREATE TABLE search_tool_pending (
        session_id TEXT PRIMARY KEY,
        from_sequence INTEGER NOT NULL,
        below_sequence INTEGER NOT NULL
    ) WITHOUT ROWID;

INSERT INTO search_tool_pending(session_id, from_sequence, below_sequence)
    SELECT m.session_id, 0,
           coalesce((SELECT p.from_sequence FROM search_pending p WHERE p.session_id = m.session_id),
                    (SELECT max(e.sequence) + 1 FROM session_entries e
                     WHERE e.session_id = m.session_id))
    FROM search_sessions m
    WHERE EXISTS (SELECT 1 FROM session_entries e WHERE e.session_id = m.session_id
                  AND e.kind IN ('assistant.message', 'tool.completed', 'tool.started',
                                 'user.message', 'user.prompt'));

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
