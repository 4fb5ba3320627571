-- 0005 entries_immutable (released; never edited).
--
-- History is append-only: moving a head is the only way to "rewind".

CREATE TRIGGER session_entries_no_update BEFORE UPDATE ON session_entries
        BEGIN
            SELECT RAISE(ABORT, 'session_entries are immutable: an entry cannot be updated');
        END;

CREATE TRIGGER session_entries_no_delete BEFORE DELETE ON session_entries
        BEGIN
            SELECT RAISE(ABORT, 'session_entries are immutable: an entry cannot be deleted');
        END;
