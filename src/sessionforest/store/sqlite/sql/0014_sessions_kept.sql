-- 0014 sessions_kept (released; never edited).
--
-- A session's entries are immutable and name it by id, so deleting its row
-- (or changing its id) would hide them from every read while `check` said ok.
-- Sessions are archived, never deleted.

CREATE TRIGGER sessions_no_delete BEFORE DELETE ON sessions
        BEGIN
            SELECT RAISE(ABORT, 'a session cannot be deleted: archive it instead');
        END;

CREATE TRIGGER sessions_no_id_change BEFORE UPDATE OF id ON sessions
        WHEN NEW.id IS NOT OLD.id
        BEGIN
            SELECT RAISE(ABORT, 'a session id cannot change: its entries name it');
        END;
