-- 0007 followed_sources (released; never edited).
--
-- Where the live mirror stands in each transcript file it follows
-- (store/sql/sources.py): `position` is the importer's SourcePosition as JSON
-- text (io/position.py), opaque to the store; `source_offset` its byte offset,
-- for listings; `chat` the chat its last import wrote; `error` why the last
-- import of the file failed (NULL: it did not). One row a file path: a small
-- reference table under Citus (docs/scaling.md).

CREATE TABLE followed_sources (
    path TEXT PRIMARY KEY,
    format TEXT NOT NULL,
    position TEXT NOT NULL,
    source_offset BIGINT NOT NULL,
    chat TEXT,
    updated_at TEXT NOT NULL,
    error TEXT
);
