-- 0028 session_listing (released; never edited).
--
-- A listing by latest activity pages through an index instead of sorting every
-- session: every session has a head row from its creation (its `updated_at` the
-- creation time until the first append, what COALESCE(h.updated_at, s.created_at)
-- gave), and the head rows are indexed by (updated_at, session_id), the order
-- `sessions(order="updated")` and its keyset cursor walk (store/sql/store.py).
-- The trigger gives a head row to a session however it is inserted (created,
-- imported, recreated by repair), keeping one a session already has.

INSERT INTO session_heads(session_id, active_entry_id, updated_at)
SELECT s.id, NULL, s.created_at FROM sessions s
WHERE NOT EXISTS (SELECT 1 FROM session_heads h WHERE h.session_id = s.id);

CREATE INDEX session_heads_by_activity ON session_heads(updated_at, session_id);

CREATE TRIGGER sessions_have_a_head AFTER INSERT ON sessions
        BEGIN
            INSERT INTO session_heads(session_id, active_entry_id, updated_at)
            SELECT NEW.id, NULL, NEW.created_at
            WHERE NOT EXISTS (SELECT 1 FROM session_heads WHERE session_id = NEW.id);
        END;
