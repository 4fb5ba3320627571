-- 0015 search_harness_output (released; never edited).
--
-- The tool field also holds what a harness printed of its own runs: a
-- provider.notification with an `output` (Aider's output blocks, where its
-- lint, test and /run results and its errors stand; sessionforest/tooltext.py).
-- Writers fill it for new entries; the ones already stored are noted here for
-- the backend's tool fill (search_tool_pending, 0010_search_tool_text), from
-- the session's first such entry past its last one.

INSERT INTO search_tool_pending(session_id, from_sequence, below_sequence)
    SELECT session_id, min(sequence), max(sequence) + 1 FROM session_entries
    WHERE kind = 'provider.notification' AND strpos(payload, '"output"') > 0
    GROUP BY session_id
    ON CONFLICT (session_id) DO UPDATE SET
        from_sequence = least(search_tool_pending.from_sequence, excluded.from_sequence),
        below_sequence = greatest(search_tool_pending.below_sequence, excluded.below_sequence);
