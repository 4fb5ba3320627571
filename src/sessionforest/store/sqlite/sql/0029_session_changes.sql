-- 0029 session_changes (released; never edited).
--
-- What a watcher polls instead of every session's head. New entries it finds
-- by rowid (entries are never deleted and one writer at a time inserts them, so
-- a rowid past the last one it read is an entry committed since); what changes
-- a session without adding an entry is written here, each session's latest such
-- change under a new `rev`, larger than every rev before it (AUTOINCREMENT never
-- reuses one): a session created, its status or title set (these triggers), its
-- head moved (the store's move writes the row itself: no trigger on
-- session_heads, so an append or an import, which add entries, costs what it
-- did). (store/sqlite/__init__.py's SQLiteCommits reads both.) A write of the
-- values a row already holds is no change. A delete and an insert, not INSERT
-- OR REPLACE: an outer statement's conflict clause would override the trigger's.

CREATE TABLE session_changes (
    rev INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL UNIQUE
);

CREATE TRIGGER sessions_created AFTER INSERT ON sessions
        BEGIN
            DELETE FROM session_changes WHERE session_id = NEW.id;
            INSERT INTO session_changes(session_id) VALUES (NEW.id);
        END;

CREATE TRIGGER sessions_status_set AFTER UPDATE OF status, title ON sessions
        WHEN NEW.status IS NOT OLD.status OR NEW.title IS NOT OLD.title
        BEGIN
            DELETE FROM session_changes WHERE session_id = NEW.id;
            INSERT INTO session_changes(session_id) VALUES (NEW.id);
        END;
