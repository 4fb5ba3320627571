-- 0005 digest_once_per_statement (released; never edited).
--
-- The statement trigger found each chat's opening message, reply and summary
-- with a subquery over all the statement's rows per chat: quadratic in a COPY
-- of many chats (forest copy). Each is now one sorted pass (DISTINCT ON)
-- joined by chat; the values written are the same. The digest also keeps the
-- chat's last sequence (its length for BM25: one row per chat read by key,
-- instead of an index probe into its entries), and sessions are indexed by
-- harness (the harnesses a search knows: a few values read by skipping
-- through this index, search.HARNESSES, instead of scanning every row).

ALTER TABLE chat_digests ADD COLUMN last_sequence BIGINT NOT NULL DEFAULT 0;

CREATE INDEX sessions_harness ON sessions(harness);

UPDATE chat_digests d SET last_sequence = x.last FROM (
            SELECT session_id, max(sequence) AS last FROM session_entries GROUP BY session_id
        ) x WHERE x.session_id = d.session_id;

CREATE OR REPLACE FUNCTION forest_entries_added() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO search_terms(term, docs)
            SELECT t.term, count(*) FROM added a, unnest(tsvector_to_array(a.words)) AS t(term)
            GROUP BY t.term ORDER BY t.term
            ON CONFLICT (term) DO UPDATE SET docs = search_terms.docs + excluded.docs;
            UPDATE chat_digests d SET
                first_at = LEAST(d.first_at, x.first_at),
                last_at = GREATEST(d.last_at, x.last_at),
                first_message = CASE WHEN d.first_message = '' AND x.opening
                    THEN coalesce(left(m.text, 2000), '') ELSE d.first_message END,
                first_reply = CASE WHEN d.first_reply = '' AND x.opening
                    THEN coalesce(left(r.text, 2000), '') ELSE d.first_reply END,
                summary = CASE WHEN x.summarised
                    THEN coalesce(u.text, '') ELSE d.summary END,
                spaceless = d.spaceless,
                last_sequence = GREATEST(d.last_sequence, x.last_sequence)
            FROM (SELECT session_id, min(created_at) AS first_at, max(created_at) AS last_at,
                         max(sequence) AS last_sequence,
                         bool_or(kind IN ('user.message', 'user.prompt', 'assistant.message',
                                          'assistant.text') AND text <> '') AS opening,
                         bool_or(kind IN ('branch.summary', 'checkpoint', 'compaction'))
                             AS summarised
                  FROM added GROUP BY session_id) x
            LEFT JOIN (SELECT DISTINCT ON (session_id) session_id, text FROM added
                       WHERE kind IN ('user.message', 'user.prompt') AND text <> ''
                       ORDER BY session_id, sequence) m ON m.session_id = x.session_id
            LEFT JOIN (SELECT DISTINCT ON (session_id) session_id, text FROM added
                       WHERE kind IN ('assistant.message', 'assistant.text') AND text <> ''
                       ORDER BY session_id, sequence) r ON r.session_id = x.session_id
            LEFT JOIN (SELECT DISTINCT ON (session_id) session_id, text FROM added
                       WHERE kind IN ('branch.summary', 'checkpoint', 'compaction')
                       ORDER BY session_id, sequence DESC) u ON u.session_id = x.session_id
            WHERE d.session_id = x.session_id;
            RETURN NULL;
        END $$;
