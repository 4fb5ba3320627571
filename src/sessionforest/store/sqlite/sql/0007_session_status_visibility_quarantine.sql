-- 0007 session_status_visibility_quarantine (released; never edited).
--
-- A session's status and visibility; quarantine is set by `check` when a
-- session's tree is damaged, and reads refuse it.

ALTER TABLE sessions ADD COLUMN status TEXT NOT NULL DEFAULT 'active';

ALTER TABLE sessions ADD COLUMN visibility TEXT NOT NULL DEFAULT 'top-level';

ALTER TABLE sessions ADD COLUMN quarantine TEXT;
