-- 0003 search_index (released; never edited).
--
-- Per-chat digests (title, opening exchange, latest summary) and document
-- frequencies of every stem (entries and digests), kept in the transaction of
-- each insert by statement-level triggers: one statement per append updates
-- them, whatever the number of rows (bulk imports and COPY included). A
-- digest's words are kept only when its text changes: the activity span
-- changes on every append and must stay a cheap (HOT) update. Stems sort
-- bytewise (COLLATE "C") so a prefix is one range, and are counted in sorted
-- order, so two writers lock their rows in the same order (a multi-statement
-- transaction may still deadlock: Database.retrying runs it again). Writers
-- pass an entry's searchable text (entrytext.py); a row written without it
-- (by another program, or an older writer) gets it from forest_entry_text, as
-- SQLite's TEXT_OF computes it. The spaceless character class and the indexed
-- kinds are the values sessionforest.scripts and entrytext had when this was
-- released.

CREATE TABLE chat_digests (
            session_id TEXT PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            first_message TEXT NOT NULL DEFAULT '',
            first_reply TEXT NOT NULL DEFAULT '',
            summary TEXT NOT NULL DEFAULT '',
            first_at TEXT,
            last_at TEXT,
            spaceless BOOLEAN NOT NULL DEFAULT false,
            -- Kept by search_digest_words, only when the text changes: the
            -- activity span changes on every append and must stay a cheap (HOT) update.
            words tsvector NOT NULL DEFAULT ''
        );

CREATE FUNCTION forest_digest_words() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' OR NEW.title IS DISTINCT FROM OLD.title
               OR NEW.first_message IS DISTINCT FROM OLD.first_message
               OR NEW.first_reply IS DISTINCT FROM OLD.first_reply
               OR NEW.summary IS DISTINCT FROM OLD.summary THEN
                NEW.words :=
                    setweight(to_tsvector('forest_text', regexp_replace(left(coalesce(NEW.title, ''), 200000), '[^[:alnum:]]+', ' ', 'g')), 'A')
                    || setweight(to_tsvector('forest_text',
                                             regexp_replace(left(coalesce(NEW.first_message, ''), 200000), '[^[:alnum:]]+', ' ', 'g')), 'B')
                    || setweight(to_tsvector('forest_text', regexp_replace(left(coalesce(NEW.summary, ''), 200000), '[^[:alnum:]]+', ' ', 'g')), 'C')
                    || setweight(to_tsvector('forest_text',
                                             regexp_replace(left(coalesce(NEW.first_reply, ''), 200000), '[^[:alnum:]]+', ' ', 'g')), 'D');
                NEW.spaceless := (NEW.title || NEW.first_message || NEW.first_reply
                                  || NEW.summary) ~ '[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]';
            END IF;
            RETURN NEW;
        END $$;

CREATE TRIGGER search_digest_words BEFORE INSERT OR UPDATE ON chat_digests
        FOR EACH ROW EXECUTE FUNCTION forest_digest_words();

CREATE INDEX chat_digests_words ON chat_digests USING gin (words) WITH (fastupdate = off);

CREATE INDEX chat_digests_spaceless ON chat_digests(session_id) WHERE spaceless;

CREATE INDEX chat_digests_grams ON chat_digests USING gin (lower(title || ' ' || first_message || ' ' || first_reply || ' ' || summary) gin_trgm_ops) WHERE spaceless;

CREATE TABLE search_terms (term TEXT COLLATE "C" PRIMARY KEY, docs BIGINT NOT NULL);

CREATE TABLE digest_terms (term TEXT COLLATE "C" PRIMARY KEY, docs BIGINT NOT NULL);

CREATE FUNCTION forest_session_added() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO chat_digests(session_id, title) VALUES (NEW.id, NEW.title)
            ON CONFLICT (session_id) DO NOTHING;
            RETURN NULL;
        END $$;

CREATE TRIGGER search_session_added AFTER INSERT ON sessions
        FOR EACH ROW EXECUTE FUNCTION forest_session_added();

CREATE FUNCTION forest_session_retitled() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE chat_digests SET title = NEW.title WHERE session_id = NEW.id;
            RETURN NULL;
        END $$;

CREATE TRIGGER search_session_retitled AFTER UPDATE OF title ON sessions
        FOR EACH ROW WHEN (NEW.title IS DISTINCT FROM OLD.title)
        EXECUTE FUNCTION forest_session_retitled();

CREATE FUNCTION forest_entry_text(kind TEXT, payload TEXT) RETURNS TEXT
        LANGUAGE plpgsql IMMUTABLE AS $$
        DECLARE
            p jsonb;
            c jsonb;
            found TEXT;
        BEGIN
            BEGIN
                p := payload::jsonb;
            EXCEPTION WHEN others THEN
                RETURN NULL;
            END;
            IF jsonb_typeof(p) <> 'object' THEN
                RETURN NULL;
            END IF;
            IF kind = 'checkpoint' THEN
                IF jsonb_typeof(p -> 'label') = 'string' AND p -> 'label' = p -> 'summary' THEN
                    RETURN p ->> 'label';
                END IF;
                RETURN btrim(coalesce(p ->> 'label', '') || ' '
                             || coalesce(p ->> 'summary', ''), ' ');
            END IF;
            IF kind IN ('worker.result', 'compaction', 'branch.summary') THEN
                RETURN p ->> 'summary';
            END IF;
            c := p -> 'content';
            IF jsonb_typeof(c) = 'array' THEN
                SELECT string_agg(b.v ->> 'text', E'\n' ORDER BY b.n) INTO found
                FROM jsonb_array_elements(c) WITH ORDINALITY AS b(v, n)
                WHERE jsonb_typeof(b.v) = 'object' AND b.v ->> 'type' = 'text'
                  AND b.v ->> 'text' IS NOT NULL;
            ELSIF jsonb_typeof(c) = 'object' THEN
                SELECT string_agg(b.value ->> 'text', E'\n') INTO found
                FROM jsonb_each(c) AS b
                WHERE jsonb_typeof(b.value) = 'object' AND b.value ->> 'type' = 'text'
                  AND b.value ->> 'text' IS NOT NULL;
            END IF;
            RETURN coalesce(found, p ->> 'text');
        END $$;

CREATE FUNCTION forest_entry_searchable() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.text := forest_entry_text(NEW.kind, NEW.payload);
            NEW.spaceless := coalesce(NEW.text ~ '[฀-໿က-႟ᄀ-ᇿក-៿⺀-鿿ꥠ-퟿豈-﫿ｦ-ﾟ𠀀-𱍏]', false);
            RETURN NEW;
        END $$;

CREATE TRIGGER search_entry_text BEFORE INSERT ON session_entries FOR EACH ROW
        WHEN (NEW.text IS NULL AND NEW.kind IN ('assistant.message', 'assistant.text', 'branch.summary', 'checkpoint', 'compaction', 'user.message', 'user.prompt', 'worker.result'))
        EXECUTE FUNCTION forest_entry_searchable();

CREATE FUNCTION forest_entries_added() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO search_terms(term, docs)
            SELECT t.term, count(*) FROM added a, unnest(tsvector_to_array(a.words)) AS t(term)
            GROUP BY t.term ORDER BY t.term
            ON CONFLICT (term) DO UPDATE SET docs = search_terms.docs + excluded.docs;
            UPDATE chat_digests d SET
                first_at = LEAST(d.first_at, x.first_at),
                last_at = GREATEST(d.last_at, x.last_at),
                first_message = CASE WHEN d.first_message = '' AND x.opening THEN coalesce(left((
                    SELECT a.text FROM added a WHERE a.session_id = d.session_id
                      AND a.kind IN ('user.message', 'user.prompt') AND a.text <> ''
                    ORDER BY a.sequence LIMIT 1), 2000), '') ELSE d.first_message END,
                first_reply = CASE WHEN d.first_reply = '' AND x.opening THEN coalesce(left((
                    SELECT a.text FROM added a WHERE a.session_id = d.session_id
                      AND a.kind IN ('assistant.message', 'assistant.text') AND a.text <> ''
                    ORDER BY a.sequence LIMIT 1), 2000), '') ELSE d.first_reply END,
                summary = CASE WHEN x.summarised THEN coalesce((
                    SELECT coalesce(a.text, '') FROM added a WHERE a.session_id = d.session_id
                      AND a.kind IN ('branch.summary', 'checkpoint', 'compaction')
                    ORDER BY a.sequence DESC LIMIT 1), d.summary) ELSE d.summary END,
                spaceless = d.spaceless
            FROM (SELECT session_id, min(created_at) AS first_at, max(created_at) AS last_at,
                         bool_or(kind IN ('user.message', 'user.prompt', 'assistant.message',
                                          'assistant.text') AND text <> '') AS opening,
                         bool_or(kind IN ('branch.summary', 'checkpoint', 'compaction'))
                             AS summarised
                  FROM added GROUP BY session_id) x
            WHERE d.session_id = x.session_id;
            RETURN NULL;
        END $$;

CREATE TRIGGER search_entries_added AFTER INSERT ON session_entries
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT
        EXECUTE FUNCTION forest_entries_added();

CREATE FUNCTION forest_digest_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'UPDATE' AND NEW.words = OLD.words THEN
                RETURN NULL;
            END IF;
            IF TG_OP = 'UPDATE' THEN
                UPDATE digest_terms SET docs = docs - 1
                WHERE term IN (SELECT unnest(tsvector_to_array(OLD.words)));
            END IF;
            INSERT INTO digest_terms(term, docs)
            SELECT t, 1 FROM unnest(tsvector_to_array(NEW.words)) AS t ORDER BY t
            ON CONFLICT (term) DO UPDATE SET docs = digest_terms.docs + 1;
            RETURN NULL;
        END $$;

CREATE TRIGGER search_digest_changed AFTER INSERT OR UPDATE OF words ON chat_digests
        FOR EACH ROW EXECUTE FUNCTION forest_digest_changed();
