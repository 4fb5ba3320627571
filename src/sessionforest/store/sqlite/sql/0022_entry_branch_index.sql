-- 0022 entry_branch_index (released; never edited).
--
-- An entry that continues its parent (the entry just before it in the session,
-- every append of a linear chat) gets no parent-index row: children and tips
-- find it through the (session_id, sequence) index (rows.py), so such an
-- append writes one page fewer. `parent_sequence` is the parent's sequence,
-- written by appends; rows stored before it (and imported ones) hold NULL and
-- stay indexed. `check` compares it with the parent's (integrity.py). The
-- index's WHERE is migrations.BRANCH, which the queries repeat.

ALTER TABLE session_entries ADD COLUMN parent_sequence INTEGER;

CREATE INDEX session_entries_branch ON session_entries(parent_entry_id) WHERE parent_entry_id IS NOT NULL AND (parent_sequence IS NULL OR parent_sequence <> sequence - 1);

DROP INDEX session_entries_parent;
