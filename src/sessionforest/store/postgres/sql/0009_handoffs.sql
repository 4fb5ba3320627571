-- 0009 handoffs (released; never edited).
--
-- The transcripts `forest resume` wrote (store/sql/handoffs.py): keyed as the
-- transcript's importer names it (format, source id), the chat and entry it
-- continues, and `plan`, the importer-side map of its prefix as JSON text
-- (io/handoff.py), opaque to the store. One row a transcript: a small
-- reference table under Citus (docs/scaling.md).

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
);

CREATE INDEX handoffs_session ON handoffs(session_id);
