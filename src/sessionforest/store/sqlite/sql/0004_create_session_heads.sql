-- 0004 create_session_heads (released; never edited).
--
-- Each session's movable head.

CREATE TABLE session_heads (
            session_id TEXT PRIMARY KEY,
            active_entry_id TEXT,
            updated_at TEXT NOT NULL
        );
