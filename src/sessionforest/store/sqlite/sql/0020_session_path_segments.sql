-- 0020 session_path_segments (released; never edited).
--
-- The active path as segments (runs of consecutive sequences) instead of one
-- row per entry (store/sqlite/paths.py): an append at the head then writes
-- nothing but the head row. Paths stored the old way are forgotten: reads walk
-- the parent links until the next append or move stores them again.

DROP INDEX session_paths_entry;

DROP TABLE session_paths;

CREATE TABLE session_path_segments (
            session_id TEXT NOT NULL,
            depth INTEGER NOT NULL,
            from_sequence INTEGER NOT NULL,
            PRIMARY KEY (session_id, depth)
        ) WITHOUT ROWID;

UPDATE session_heads SET path_tip = NULL, path_length = NULL;
