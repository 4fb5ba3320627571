-- 0012 session_listing (released; never edited).
--
-- Every session has a head row from its creation, its `updated_at` the creation
-- time until the first append (what COALESCE(h.updated_at, s.created_at) gave):
-- a listing by latest activity orders the head rows alone, and its keyset cursor
-- (store/sql/store.py) compares their (updated_at, session_id). No index on
-- updated_at: every append moves it, and keeping such an index cost appends
-- about a sixth of their rate (measured); a page sorts the head rows instead
-- (top-N), the same cost however deep the page. The trigger gives a head row to
-- a session however it is inserted (created, imported, recreated by repair),
-- keeping one a session already has. Both tables are distributed by session id under Citus, so the insert stays local.

INSERT INTO session_heads(session_id, active_entry_id, updated_at)
SELECT s.id, NULL, s.created_at FROM sessions s
WHERE NOT EXISTS (SELECT 1 FROM session_heads h WHERE h.session_id = s.id);

CREATE FUNCTION forest_sessions_have_a_head() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO session_heads(session_id, active_entry_id, updated_at)
            VALUES (NEW.id, NULL, NEW.created_at) ON CONFLICT (session_id) DO NOTHING;
            RETURN NULL;
        END $$;

CREATE TRIGGER sessions_have_a_head AFTER INSERT ON sessions
        FOR EACH ROW EXECUTE FUNCTION forest_sessions_have_a_head();
