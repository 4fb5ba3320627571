-- 0015 sessions_no_adoption (released; never edited).
--
-- A row deleted before sessions_kept (or behind its back) leaves entries that
-- a new session with the same id would silently adopt. A row may come back
-- over them only quarantined, which is how `repair` recreates it before
-- checking the session afresh. The message is migrations.ADOPTION_REFUSED,
-- which the store maps to SessionDamaged.

CREATE TRIGGER sessions_no_adoption BEFORE INSERT ON sessions
        WHEN NEW.quarantine IS NULL AND (
            EXISTS (SELECT 1 FROM session_entries WHERE session_id = NEW.id)
            OR EXISTS (SELECT 1 FROM session_heads WHERE session_id = NEW.id))
        BEGIN
            SELECT RAISE(ABORT, 'session row refused: entries or a head of a session with this id remain');
        END;
