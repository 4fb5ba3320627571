-- 0002 forest_guards (released; never edited).
--
-- History is append-only and a session row is never deleted or re-keyed (its
-- entries name it); a row may come back over remaining entries only
-- quarantined (how repair recreates it). As SQLite's triggers say it. The
-- adoption message is schema.ADOPTION_REFUSED, which the store maps to
-- SessionDamaged.

CREATE FUNCTION forest_entries_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'UPDATE' THEN
                RAISE EXCEPTION 'session_entries are immutable: an entry cannot be updated';
            END IF;
            RAISE EXCEPTION 'session_entries are immutable: an entry cannot be deleted';
        END $$;

CREATE TRIGGER session_entries_immutable BEFORE UPDATE OR DELETE ON session_entries
        FOR EACH ROW EXECUTE FUNCTION forest_entries_immutable();

CREATE FUNCTION forest_sessions_kept() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'DELETE' THEN
                RAISE EXCEPTION 'a session cannot be deleted: archive it instead';
            END IF;
            IF NEW.id IS DISTINCT FROM OLD.id THEN
                RAISE EXCEPTION 'a session id cannot change: its entries name it';
            END IF;
            RETURN NEW;
        END $$;

CREATE TRIGGER sessions_kept BEFORE UPDATE OF id OR DELETE ON sessions
        FOR EACH ROW EXECUTE FUNCTION forest_sessions_kept();

CREATE FUNCTION forest_sessions_no_adoption() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.quarantine IS NULL AND (
                EXISTS (SELECT 1 FROM session_entries WHERE session_id = NEW.id)
                OR EXISTS (SELECT 1 FROM session_heads WHERE session_id = NEW.id)) THEN
                RAISE EXCEPTION 'session row refused: entries or a head of a session with this id remain';
            END IF;
            RETURN NEW;
        END $$;

CREATE TRIGGER sessions_no_adoption BEFORE INSERT ON sessions
        FOR EACH ROW EXECUTE FUNCTION forest_sessions_no_adoption();
