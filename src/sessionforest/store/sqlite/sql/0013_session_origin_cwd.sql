-- 0013 session_origin_cwd (released; never edited).
--
-- Where an imported chat was recorded is data, not a directory to run git in:
-- it moves out of `cwd` (the bound directory stamps use) until the user binds
-- the session (`forest bind`).

ALTER TABLE sessions ADD COLUMN origin_cwd TEXT;

UPDATE sessions SET origin_cwd = cwd, cwd = NULL WHERE source_format IS NOT NULL AND cwd IS NOT NULL;
