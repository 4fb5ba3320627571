-- 0002 create_agent_events (released; never edited).
--
-- The linear event log that came before the forest; converted and removed by
-- agent_events_to_forest (migration 6).

CREATE TABLE agent_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            event_type TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at TEXT NOT NULL
        );

CREATE INDEX agent_events_session ON agent_events(session_id, seq);
