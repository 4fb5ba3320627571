-- 0003 create_session_entries (released; never edited).
--
-- A rowid table (payloads can be large, so no WITHOUT ROWID); the unique
-- (session_id, sequence) index both guards gap-free numbering and serves
-- insertion-order reads; the parent index serves children and tips.

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
        );

CREATE UNIQUE INDEX session_entries_sequence ON session_entries(session_id, sequence);

CREATE INDEX session_entries_parent ON session_entries(parent_entry_id);
