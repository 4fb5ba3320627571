-- 0021 entry_vectors (released; never edited).
--
-- Entry vectors of the semantic leg (store/sqlite/vectors.py): one float32
-- blob per indexed entry, keyed by the index rowid (chat number << 32 +
-- sequence). `vector_pending` notes the chats whose index gained entries (a
-- trigger on the activity span the full-text catch-up moves),
-- `vector_progress` the highest rowid of each chat that has been embedded,
-- `vector_model` the one model the vectors are of. Every chat already indexed
-- is noted pending.

CREATE TABLE entry_vectors (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        entry INTEGER NOT NULL UNIQUE,
        vector BLOB NOT NULL
    );

CREATE TABLE vector_pending (num INTEGER PRIMARY KEY);

CREATE TABLE vector_progress (num INTEGER PRIMARY KEY, upto INTEGER NOT NULL);

CREATE TABLE vector_model (one INTEGER PRIMARY KEY CHECK (one = 1), model TEXT NOT NULL);

CREATE TRIGGER vector_note_activity AFTER UPDATE OF last_at ON search_sessions
    BEGIN INSERT OR IGNORE INTO vector_pending(num) VALUES (NEW.num); END;

INSERT INTO vector_pending(num) SELECT num FROM search_sessions;
