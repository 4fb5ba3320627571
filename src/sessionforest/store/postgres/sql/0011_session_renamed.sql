-- 0011 session_renamed (released; never edited).
--
-- A title the user set (`forest rename`, sessions/rename) is theirs: an
-- importer running again over the chat's source keeps it instead of the
-- harness's title or first request. The title stays in `title`, so every
-- place that shows or indexes titles sees it; this only marks who set it.

ALTER TABLE sessions ADD COLUMN renamed BOOLEAN NOT NULL DEFAULT false;

-- A title changed after the digest was made (a rename, an import retitling the
-- chat) reached the digest's `words` only through its BEFORE trigger, which an
-- `UPDATE OF words` trigger never sees: digest_terms kept the old title's words
-- and never learnt the new ones, so a search for the new title called its words
-- unknown. The update trigger now fires whenever `words` differs, and the
-- counts are made again from the digests as they are.

DROP TRIGGER search_digest_changed ON chat_digests;

CREATE TRIGGER search_digest_added AFTER INSERT ON chat_digests
        FOR EACH ROW EXECUTE FUNCTION forest_digest_changed();

CREATE TRIGGER search_digest_changed AFTER UPDATE ON chat_digests
        FOR EACH ROW WHEN (NEW.words IS DISTINCT FROM OLD.words)
        EXECUTE FUNCTION forest_digest_changed();

TRUNCATE digest_terms;

INSERT INTO digest_terms(term, docs)
    SELECT t.term, count(*) FROM chat_digests d, unnest(tsvector_to_array(d.words)) AS t(term)
    GROUP BY t.term ORDER BY t.term;
