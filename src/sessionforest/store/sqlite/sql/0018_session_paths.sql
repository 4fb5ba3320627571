-- 0018 session_paths (released; never edited).
--
-- The active path, materialised as the head moves (store/sqlite/paths.py):
-- rows 0..path_length-1 of a session are its root-to-head entries when
-- path_tip is its head; any other writer leaves path_tip behind, and then reads
-- walk the parent links until the next append re-materialises.

ALTER TABLE session_heads ADD COLUMN path_tip TEXT;

ALTER TABLE session_heads ADD COLUMN path_length INTEGER;

CREATE TABLE session_paths (
            session_id TEXT NOT NULL,
            depth INTEGER NOT NULL,
            entry_id TEXT NOT NULL,
            PRIMARY KEY (session_id, depth)
        ) WITHOUT ROWID;

CREATE INDEX session_paths_entry ON session_paths(entry_id);
