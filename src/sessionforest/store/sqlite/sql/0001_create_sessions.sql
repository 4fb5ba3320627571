-- 0001 create_sessions (released; never edited).
--
-- Sessions: one row per conversation.

CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            harness TEXT NOT NULL DEFAULT '',
            cwd TEXT,
            created_at TEXT NOT NULL
        );
