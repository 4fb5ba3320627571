-- 0031 search_harness_output (released; never edited).
--
-- The tool field also holds what a harness printed of its own runs: a
-- provider.notification with an `output` (Aider's output blocks, where its
-- lint, test and /run results and its errors stand; sessionforest/tooltext.py).
-- The catch-up fills it for new entries; the ones already indexed are noted here
-- for its tool pass (search_tool_pending, 0026_search_tool_text), from the
-- session's first such entry up to where its pending entries begin (those the
-- catch-up indexes anyway), or past its last one.

INSERT INTO search_tool_pending(session_id, from_sequence, below_sequence)
    SELECT n.session_id, n.first,
           coalesce((SELECT p.from_sequence FROM search_pending p WHERE p.session_id = n.session_id),
                    n.last + 1)
    FROM (SELECT e.session_id, min(e.sequence) AS first, max(e.sequence) AS last
          FROM session_entries e JOIN search_sessions m ON m.session_id = e.session_id
          WHERE e.kind = 'provider.notification' AND instr(e.payload, '"output"') > 0
          GROUP BY e.session_id) AS n
    WHERE true
    ON CONFLICT(session_id) DO UPDATE SET
        from_sequence = min(from_sequence, excluded.from_sequence),
        below_sequence = max(below_sequence, excluded.below_sequence);
