-- 0004 chat_digest_project (released; never edited).
--
-- A chat is findable by its project, as on SQLite: the last two components of
-- its directory (bound, else recorded; backslashes read as slashes, trailing
-- slashes ignored) join its title in the digest, and follow `bind`, which
-- sets cwd.

CREATE FUNCTION forest_digest_title(title TEXT, cwd TEXT, origin_cwd TEXT)
        RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
            SELECT CASE WHEN w <> '' THEN title || E'\n' || w ELSE title END
            FROM (SELECT trim(array_to_string(
                      parts[greatest(coalesce(array_length(parts, 1), 0) - 1, 1):], ' ')) AS w
                  FROM (SELECT string_to_array(rtrim(replace(coalesce(cwd, origin_cwd, ''),
                                                             E'\\', '/'), '/'), '/') AS parts
                       ) split) words
        $$;

CREATE OR REPLACE FUNCTION forest_session_added() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO chat_digests(session_id, title)
            VALUES (NEW.id, forest_digest_title(NEW.title, NEW.cwd, NEW.origin_cwd))
            ON CONFLICT (session_id) DO NOTHING;
            RETURN NULL;
        END $$;

CREATE OR REPLACE FUNCTION forest_session_retitled() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE chat_digests
            SET title = forest_digest_title(NEW.title, NEW.cwd, NEW.origin_cwd)
            WHERE session_id = NEW.id;
            RETURN NULL;
        END $$;

DROP TRIGGER search_session_retitled ON sessions;

CREATE TRIGGER search_session_retitled AFTER UPDATE OF title, cwd, origin_cwd
        ON sessions FOR EACH ROW
        WHEN (NEW.title IS DISTINCT FROM OLD.title OR NEW.cwd IS DISTINCT FROM OLD.cwd
              OR NEW.origin_cwd IS DISTINCT FROM OLD.origin_cwd)
        EXECUTE FUNCTION forest_session_retitled();

UPDATE chat_digests d
        SET title = forest_digest_title(s.title, s.cwd, s.origin_cwd)
        FROM sessions s
        WHERE s.id = d.session_id AND coalesce(s.cwd, s.origin_cwd, '') <> '';
