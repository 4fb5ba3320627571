-- 0027 session_renamed (released; never edited).
--
-- A title the user set (`forest rename`, sessions/rename) is theirs: an
-- importer running again over the chat's source keeps it instead of the
-- harness's title or first request. The title stays in `title`, so every
-- place that shows or indexes titles sees it; this only marks who set it.

ALTER TABLE sessions ADD COLUMN renamed INTEGER NOT NULL DEFAULT 0;
