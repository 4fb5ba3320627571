-- 0010 search_tool_text (released; never edited).
--
-- An entry's word index gets a second field: `tool`, what the tools said in it
-- (tool calls' commands, paths and patterns, tool results' head and tail, the
-- harness's wrapper text of a user message), as sessionforest/tooltext.py
-- computes it; writers pass it beside `text`. `words` is made again over both:
-- the conversational text unweighted (D), as before, and the tool field with
-- weight C, so a query restricted to D reads what was said only and ts_rank
-- weighs the two apart. Entries stored before this wait in
-- `search_tool_pending` (from_sequence up to below_sequence, per session):
-- the backend's catch-up fills their tool field from Python and moves a user
-- message's wrapper text out of its `text`, keeping search_terms exact. The
-- immutability guard lets that update through: it changes only the columns
-- derived for the index (text, tool, spaceless), never what was stored.

ALTER TABLE session_entries ADD COLUMN tool TEXT;

ALTER TABLE session_entries DROP COLUMN words;

ALTER TABLE session_entries ADD COLUMN words tsvector GENERATED ALWAYS AS
        (to_tsvector('forest_text', regexp_replace(left(coalesce(text, ''), 200000), '[^[:alnum:]]+', ' ', 'g'))
         || setweight(to_tsvector('forest_text', regexp_replace(left(coalesce(tool, ''), 200000), '[^[:alnum:]]+', ' ', 'g')), 'C')) STORED;

CREATE INDEX session_entries_words ON session_entries USING gin (words) WITH (fastupdate = off);

CREATE TABLE search_tool_pending (
        session_id TEXT PRIMARY KEY,
        from_sequence BIGINT NOT NULL,
        below_sequence BIGINT NOT NULL
    );

INSERT INTO search_tool_pending(session_id, from_sequence, below_sequence)
    SELECT session_id, 0, max(sequence) + 1 FROM session_entries
    WHERE kind IN ('assistant.message', 'tool.completed', 'tool.started', 'user.message', 'user.prompt')
    GROUP BY session_id;

CREATE OR REPLACE FUNCTION forest_entries_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'UPDATE' THEN
                IF (NEW.id, NEW.session_id, NEW.parent_entry_id, NEW.sequence,
                    NEW.semantic_schema_version, NEW.kind, NEW.payload,
                    NEW.context_visibility, NEW.created_at, NEW.stamp)
                   IS NOT DISTINCT FROM
                   (OLD.id, OLD.session_id, OLD.parent_entry_id, OLD.sequence,
                    OLD.semantic_schema_version, OLD.kind, OLD.payload,
                    OLD.context_visibility, OLD.created_at, OLD.stamp) THEN
                    RETURN NEW;
                END IF;
                RAISE EXCEPTION 'session_entries are immutable: an entry cannot be updated';
            END IF;
            RAISE EXCEPTION 'session_entries are immutable: an entry cannot be deleted';
        END $$;
