-- 0014 session_messages (released; never edited).
--
-- Each head row keeps its session's message count, what a chat list shows and
-- hides empty chats by: user and assistant messages in context on every branch,
-- not tool results, notifications or other hidden entries (store/sql/rows.py
-- IS_MESSAGE). An append adds what it appended in the head update it makes
-- anyway (no trigger, no index: appends cost what they did); an import, a
-- restore and a repair count the rows they wrote. Counted here once for the
-- entries already stored.

ALTER TABLE session_heads ADD COLUMN messages integer NOT NULL DEFAULT 0;

UPDATE session_heads SET messages = (
    SELECT COUNT(*) FROM session_entries e
    WHERE e.session_id = session_heads.session_id
      AND e.kind IN ('user.message', 'assistant.message') AND e.context_visibility = 'context'
);
