-- 0029 session_changes (released; never edited).
--
-- What a watcher polls instead of every session's head: each session's latest
-- change (a head row written or moved, a status or title set) gets a new `rev`, larger
-- than every rev before it (AUTOINCREMENT never reuses one, and SQLite has one
-- writer at a time, so revs grow in commit order). A poller that read up to
-- rev N asks for rev > N and gets the sessions changed since, one row each
-- (store/sqlite/__init__.py's SQLiteCommits). Path caches (path_tip,
-- path_length) are not changes, nor is a write of the values a row already
-- holds (importing a chat again changes nothing). A delete and an insert, not INSERT OR REPLACE:
-- an outer statement's conflict clause (an upsert of the head) would override
-- the trigger's.

CREATE TABLE session_changes (
    rev INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL UNIQUE
);

CREATE TRIGGER session_heads_added AFTER INSERT ON session_heads
        BEGIN
            DELETE FROM session_changes WHERE session_id = NEW.session_id;
            INSERT INTO session_changes(session_id) VALUES (NEW.session_id);
        END;

CREATE TRIGGER session_heads_moved AFTER UPDATE OF active_entry_id, updated_at ON session_heads
        WHEN NEW.active_entry_id IS NOT OLD.active_entry_id OR NEW.updated_at IS NOT OLD.updated_at
        BEGIN
            DELETE FROM session_changes WHERE session_id = NEW.session_id;
            INSERT INTO session_changes(session_id) VALUES (NEW.session_id);
        END;

CREATE TRIGGER sessions_status_set AFTER UPDATE OF status, title ON sessions
        WHEN NEW.status IS NOT OLD.status OR NEW.title IS NOT OLD.title
        BEGIN
            DELETE FROM session_changes WHERE session_id = NEW.id;
            INSERT INTO session_changes(session_id) VALUES (NEW.id);
        END;
