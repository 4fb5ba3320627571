"""What both SQL backends run alike, written once: SQL in one neutral form and the logic around it.

A backend hands these modules its `Database` (anything with `read()` and
`write()` yielding a connection whose `execute(sql, params)` returns rows)
and its `Dialect` (placeholders, the creation-order column). What truly
differs stays in the backend's package: the driver and its errors, the
schema and migrations, full text (FTS5 or tsvector), how a session's rows
are keyed (by id on SQLite, by (session_id, id) on PostgreSQL, see
docs/scaling.md) and the hot paths each keeps fast its own way.
"""
