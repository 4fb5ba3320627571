"""The SQL that writes and reads entry, session and head rows, shared by every PG writer.

Every entry insert goes through `insert_entries` (one statement for a whole
batch, so the statement-level index trigger runs once), with its searchable
text and tool text taken from the payload (tooltext.py) and its spaceless flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import orjson
import psycopg

from ...entrytext import INDEXED_KINDS
from ...rules import integrity as integrity_rules
from ...scripts import spaceless
from ...tooltext import TOOL_KINDS, texts
from ..sql import rows as shared_rows
from ..sql.dialect import POSTGRES

ENTRY_COLUMNS: Final = (
    "id, session_id, parent_entry_id, sequence, semantic_schema_version, kind, payload, "
    "context_visibility, created_at, stamp"
)
E_COLUMNS: Final = ", ".join("e." + c.strip() for c in ENTRY_COLUMNS.split(","))

# A batch as parallel arrays: one statement (and one trigger run) for any size.
INSERT_ENTRIES: Final = f"""
INSERT INTO session_entries({ENTRY_COLUMNS}, text, tool, spaceless)
SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::bigint[], %s::int[], %s::text[],
                     %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
                     %s::bool[])
"""

UPSERT_HEAD: Final = POSTGRES.sql(shared_rows.UPSERT_HEAD)
APPEND_HEAD: Final = POSTGRES.sql(shared_rows.APPEND_HEAD)
MOVE_HEAD: Final = POSTGRES.sql(shared_rows.MOVE_HEAD)

# The session's row lock: every writer of a session (append, import, repair)
# takes it first, in its own statement, so the statements after it read a
# snapshot that holds every earlier writer's rows (READ COMMITTED).
LOCK_SESSION: Final = "SELECT quarantine FROM sessions WHERE id = %s FOR UPDATE"

# Where an id lives when it is not in the session at hand: the error path only.
OWNER: Final = (
    "SELECT session_id, sequence, semantic_schema_version FROM session_entries "
    "WHERE id = %s LIMIT 1"
)

# The first row written after sequence `base` whose parent is missing, foreign,
# not earlier, of a newer schema version than the row, or of one this
# sessionforest cannot read (as store/sqlite/rows.BAD_PARENT).
BAD_PARENT: Final = f"""
SELECT c.id, c.parent_entry_id, coalesce(p.session_id, o.session_id),
       p.sequence < c.sequence, coalesce(p.semantic_schema_version, o.semantic_schema_version),
       c.semantic_schema_version, c.sequence
FROM session_entries c
LEFT JOIN session_entries p ON p.session_id = c.session_id AND p.id = c.parent_entry_id
LEFT JOIN LATERAL (SELECT session_id, semantic_schema_version FROM session_entries o
                   WHERE p.id IS NULL AND o.id = c.parent_entry_id LIMIT 1) o ON true
WHERE c.session_id = %s AND c.sequence > %s AND c.parent_entry_id IS NOT NULL
  AND (p.id IS NULL OR p.sequence >= c.sequence
       OR p.semantic_schema_version > c.semantic_schema_version
       OR p.semantic_schema_version NOT IN ({integrity_rules.READABLE}))
ORDER BY c.sequence LIMIT 1
"""

# Branch points that re-did a turn (as store/sqlite/rows.BRANCHES).
BRANCHES: Final = """
SELECT COUNT(*) FROM (
    SELECT 1 FROM session_entries
    WHERE session_id = %s AND parent_entry_id IS NOT NULL
      AND kind IN ('user.message', 'assistant.message') AND context_visibility = 'context'
      AND CASE WHEN strpos(payload, '"local_command"') = 0 THEN true
               ELSE coalesce(json_typeof(payload::json -> 'local_command'), 'null') = 'null' END
    GROUP BY parent_entry_id HAVING COUNT(*) > 1
) AS b
"""


# Branch points among the parents of the rows written after a sequence (an import
# that continued from a saved position: as store/sqlite/rows.BRANCHES_SINCE).
BRANCHES_SINCE: Final = """
SELECT COUNT(*) FROM (
    SELECT 1 FROM session_entries
    WHERE session_id = %s AND parent_entry_id IN (
        SELECT parent_entry_id FROM session_entries WHERE session_id = %s AND sequence > %s
    )
      AND kind IN ('user.message', 'assistant.message') AND context_visibility = 'context'
      AND CASE WHEN strpos(payload, '"local_command"') = 0 THEN true
               ELSE coalesce(json_typeof(payload::json -> 'local_command'), 'null') = 'null' END
    GROUP BY parent_entry_id HAVING COUNT(*) > 1
) AS b
"""


def searchable(kind: str, payload: Any) -> tuple[str | None, str | None, bool]:
    """(the indexed text, the tool text, whether the text holds spaceless-script
    text) of a payload; an indexed kind without text gets "" (NULL is for rows
    the database fills in)."""
    if kind not in INDEXED_KINDS and kind not in TOOL_KINDS:
        return None, None, False
    found = texts(kind, payload)
    # PostgreSQL text holds no NUL (the payload keeps it, JSON-escaped).
    tool = found.tool.replace("\x00", " ") if found.tool is not None else None
    if kind not in INDEXED_KINDS:
        return None, tool, False
    text = (found.words or "").replace("\x00", " ")
    return text, tool, spaceless(text)


def searchable_json(kind: str, body: str) -> tuple[str | None, str | None, bool]:
    """`searchable` of a payload given as its stored JSON text."""
    if kind not in INDEXED_KINDS and kind not in TOOL_KINDS:
        return None, None, False
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None, None, False
    return searchable(kind, payload)


COPY_ENTRIES: Final = f"COPY session_entries({ENTRY_COLUMNS}, text, tool, spaceless) FROM STDIN"


def copy_entries(conn: psycopg.Connection[Any], rows: Sequence[Sequence[Any]]) -> None:
    """Write rows (ENTRY_COLUMNS + text, tool, spaceless) with one COPY: triggers run as for
    one INSERT of them all (the BEFORE ROW text trigger, the statement-level
    statistics and digest trigger once, over every row)."""
    if not rows:
        return
    db = getattr(conn, "forest_db", None)
    if db is not None and db.tracer is not None:
        db.tracer(COPY_ENTRIES)
    with conn.cursor() as cur, cur.copy(COPY_ENTRIES) as copy:
        for row in rows:
            copy.write_row(row)
    if db is not None:
        db.changes += len(rows)


def insert_entries(
    cur: psycopg.Cursor[Any] | psycopg.Connection[Any], rows: Sequence[Sequence[Any]]
) -> None:
    """Insert rows (ENTRY_COLUMNS + text, tool, spaceless) in one statement."""
    if not rows:
        return
    columns = list(zip(*rows, strict=True))
    cur.execute(INSERT_ENTRIES, [list(c) for c in columns])
