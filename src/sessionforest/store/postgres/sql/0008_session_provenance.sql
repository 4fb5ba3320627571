-- 0008 session_provenance (released; never edited).
--
-- Where an imported chat says it ran, beyond its directory (origin_cwd)
-- and branch (git_branch): the commit it ran at, the repository's
-- remote, and the harness's own name for the project (Gemini CLI's project
-- folder, OpenCode's project). Data only, as origin_cwd is: git never runs
-- for them.

ALTER TABLE sessions ADD COLUMN git_commit TEXT;

ALTER TABLE sessions ADD COLUMN git_repository TEXT;

ALTER TABLE sessions ADD COLUMN origin_project TEXT;
