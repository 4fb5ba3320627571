-- 0006 entry_vectors (released; never edited).
--
-- The semantic leg's entry vectors (store/postgres/vectors.py): float32 bytea,
-- since pgvector is not installed on the service (docs/semantic.md), searched
-- in Python as on SQLite. Keyed by session (docs/scaling.md). An append notes
-- its session in vector_pending (one statement-level upsert); nothing is
-- embedded inside it. Every session already holding searchable text is noted.

CREATE TABLE entry_vectors (
            session_id TEXT NOT NULL,
            sequence BIGINT NOT NULL,
            id BIGINT GENERATED ALWAYS AS IDENTITY,
            vector BYTEA NOT NULL,
            PRIMARY KEY (session_id, sequence)
        );

CREATE INDEX entry_vectors_id ON entry_vectors(id);

CREATE TABLE vector_pending (session_id TEXT PRIMARY KEY);

CREATE TABLE vector_progress (session_id TEXT PRIMARY KEY, upto BIGINT NOT NULL);

CREATE TABLE vector_model (
            one INTEGER PRIMARY KEY CHECK (one = 1), model TEXT NOT NULL
        );

CREATE FUNCTION forest_vector_note() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO vector_pending(session_id)
            SELECT DISTINCT session_id FROM added WHERE text IS NOT NULL ORDER BY session_id
            ON CONFLICT DO NOTHING;
            RETURN NULL;
        END $$;

CREATE TRIGGER vector_note AFTER INSERT ON session_entries
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT
        EXECUTE FUNCTION forest_vector_note();

INSERT INTO vector_pending(session_id)
        SELECT DISTINCT session_id FROM session_entries WHERE text IS NOT NULL;
