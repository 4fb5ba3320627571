-- 0010 session_sources (released; never edited).
--
-- Where an imported chat came from (format, file, the source's own session
-- id), its summary and the git branch it last ran on. Imported ids derive
-- from (format, source id), so the index serves "was this imported?".

ALTER TABLE sessions ADD COLUMN source_format TEXT;

ALTER TABLE sessions ADD COLUMN source_path TEXT;

ALTER TABLE sessions ADD COLUMN source_id TEXT;

ALTER TABLE sessions ADD COLUMN summary TEXT;

ALTER TABLE sessions ADD COLUMN git_branch TEXT;

CREATE INDEX sessions_source ON sessions(source_format, source_id);
