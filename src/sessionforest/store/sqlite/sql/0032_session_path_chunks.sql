-- 0032 session_path_chunks (released; never edited).
--
-- Sealed chunks of a materialised path (store/sqlite/chunks.py): the `entries`
-- path entries at depths `depth`.. up to the entry of sequence `last_sequence`,
-- every column a load returns packed in one msgpack body (payloads and stamps
-- decoded). Entries are immutable and the path to an entry never changes, so a
-- chunk is right for good; a first read takes the chunks on its path and reads
-- only the rest as rows. Derived: stores without chunks read as before, and
-- `forest check` compares every chunk with the entries and their parent links.

CREATE TABLE session_path_chunks (
            session_id TEXT NOT NULL,
            last_sequence INTEGER NOT NULL,
            depth INTEGER NOT NULL,
            entries INTEGER NOT NULL,
            body BLOB NOT NULL,
            PRIMARY KEY (session_id, last_sequence)
        );
