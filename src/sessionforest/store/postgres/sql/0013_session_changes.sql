-- 0013 session_changes (released; never edited).
--
-- What a watcher waits on instead of polling every session's head: a commit
-- that writes or moves a head row, or sets a session's status or title, notifies
-- channel `forest_sessions` with "<schema>/<session id>" (one database can
-- hold several stores, one per schema). Notifications are delivered at
-- commit, in commit order, once per distinct payload of a transaction
-- (store/postgres/__init__.py's PostgresCommits LISTENs).

CREATE FUNCTION forest_head_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('forest_sessions', current_schema() || '/' || NEW.session_id);
            RETURN NULL;
        END $$;

CREATE FUNCTION forest_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('forest_sessions', current_schema() || '/' || NEW.id);
            RETURN NULL;
        END $$;

CREATE TRIGGER session_heads_added AFTER INSERT ON session_heads
        FOR EACH ROW EXECUTE FUNCTION forest_head_changed();

CREATE TRIGGER session_heads_moved AFTER UPDATE OF active_entry_id, updated_at ON session_heads
        FOR EACH ROW WHEN (NEW.active_entry_id IS DISTINCT FROM OLD.active_entry_id
                           OR NEW.updated_at IS DISTINCT FROM OLD.updated_at)
        EXECUTE FUNCTION forest_head_changed();

CREATE TRIGGER sessions_status_set AFTER UPDATE OF status, title ON sessions
        FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status
                           OR NEW.title IS DISTINCT FROM OLD.title)
        EXECUTE FUNCTION forest_status_changed();
