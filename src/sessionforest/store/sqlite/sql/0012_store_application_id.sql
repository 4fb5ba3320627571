-- 0012 store_application_id (released; never edited).
--
-- Marks the file as a store in its header ("SFST", 0x53465354), so opening
-- any SQLite file can tell a store from another program's database before
-- touching it.

PRAGMA application_id = 1397117780;
