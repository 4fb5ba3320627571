"""The SQL that writes entry, session and head rows, shared by every SQLite writer.

One statement each, so an append, an importer's chat and a restored session
store their rows the same way. None of them indexes: the `search_entry_pending`
trigger notes what the next catch-up indexes (search/catchup.py).
"""

from __future__ import annotations

import sqlite3
from typing import Any, TypeVar

from ...rules import integrity
from ..sql import rows as shared_rows
from ..sql.dialect import SQLITE
from .migrations import BRANCH

Row = TypeVar("Row", bound=tuple[Any, ...])

ENTRY_COLUMNS = (
    "id, session_id, parent_entry_id, sequence, semantic_schema_version, kind, payload, "
    "context_visibility, created_at, stamp"
)

# An append's row: ENTRY_COLUMNS' values and its parent's sequence, which the
# append knows (migrations.entry_branch_index).
APPEND_ENTRY = (
    f"INSERT INTO session_entries({ENTRY_COLUMNS}, parent_sequence) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

# An importer's or restore's row: the parent's sequence read by its id (one
# primary-key probe; NULL for a parent not stored, which the caller's checks refuse).
BULK_ENTRY = (
    f"INSERT INTO session_entries({ENTRY_COLUMNS}, parent_sequence) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
    "(SELECT p.sequence FROM session_entries p WHERE p.id = ?3))"
)

# Children: the one that directly follows its parent, by the (session_id, sequence)
# index, then the others, by the parent index that holds only them
# (migrations.BRANCH); disjoint, since a row is in one or the other. The unary +
# keeps SQLite from scanning the session by the sequence index instead.
CHILDREN = f"""
SELECT {ENTRY_COLUMNS} FROM session_entries
WHERE session_id = ?1 AND parent_entry_id = ?2 AND parent_sequence = sequence - 1
  AND sequence = (SELECT sequence + 1 FROM session_entries WHERE id = ?2)
UNION ALL
SELECT {ENTRY_COLUMNS} FROM session_entries
WHERE parent_entry_id = ?2 AND +session_id = ?1 AND {BRANCH}
ORDER BY sequence
"""
TIPS = f"""
SELECT {ENTRY_COLUMNS} FROM session_entries e WHERE session_id = ?1
  AND NOT EXISTS (SELECT 1 FROM session_entries c WHERE c.session_id = e.session_id
                  AND c.sequence = e.sequence + 1 AND c.parent_entry_id = e.id
                  AND c.parent_sequence = c.sequence - 1)
  AND NOT EXISTS (SELECT 1 FROM session_entries c WHERE c.parent_entry_id = e.id
                  AND +c.session_id = e.session_id
                  AND (c.parent_sequence IS NULL OR c.parent_sequence <> c.sequence - 1))
ORDER BY sequence
"""

UPSERT_HEAD = SQLITE.sql(shared_rows.UPSERT_HEAD)

# Branch points among the parents of the rows written after sequence ?2 (an import
# that continued from a saved position): each such parent's children are its
# linear child, found by sequence, and the others, in the branch index (as
# CHILDREN reads them), so the count costs what the new rows cost, not the chat.
BRANCHES_SINCE = f"""
WITH parents(id, seq) AS (
    SELECT DISTINCT parent_entry_id, parent_sequence FROM session_entries
    WHERE session_id = ?1 AND sequence > ?2 AND parent_entry_id IS NOT NULL
)
SELECT COUNT(*) FROM parents p WHERE (
    SELECT COUNT(*) FROM (
        SELECT kind, payload, context_visibility FROM session_entries
        WHERE session_id = ?1 AND sequence = p.seq + 1 AND parent_entry_id = p.id
        UNION ALL
        SELECT kind, payload, context_visibility FROM session_entries
        WHERE parent_entry_id = p.id AND +session_id = ?1 AND {BRANCH}
    ) c
    WHERE c.kind IN ('user.message', 'assistant.message') AND c.context_visibility = 'context'
      AND (instr(c.payload, '"local_command"') = 0
           OR json_extract(c.payload, '$.local_command') IS NULL)
) > 1
"""

# The first row written after sequence `base` whose parent is missing, foreign,
# not earlier, of a newer schema version than the row, or of one this
# sessionforest cannot read (no entry may have an ancestor newer than itself:
# see forest._checked for why the parent is enough). One indexed pass over
# the new rows after a bulk insert, instead of a set of every id in memory.
BAD_PARENT = f"""
SELECT c.id, c.parent_entry_id, p.session_id, p.sequence < c.sequence,
       p.semantic_schema_version, c.semantic_schema_version, c.sequence
FROM session_entries c LEFT JOIN session_entries p ON p.id = c.parent_entry_id
WHERE c.session_id = ? AND c.sequence > ? AND c.parent_entry_id IS NOT NULL
  AND (p.id IS NULL OR p.session_id <> c.session_id OR p.sequence >= c.sequence
       OR p.semantic_schema_version > c.semantic_schema_version
       OR p.semantic_schema_version NOT IN ({integrity.READABLE}))
ORDER BY c.sequence LIMIT 1
"""


def insert_entries(conn: sqlite3.Connection, rows: list[Row]) -> None:
    """Insert `rows` (ENTRY_COLUMNS' values, each parent stored before its child)
    and empty the list; each row's parent sequence is looked up as it goes in."""
    conn.executemany(BULK_ENTRY, rows)
    rows.clear()


# Branch points that re-did a turn: two or more context-visible user or
# assistant messages under one parent. Tool fan-out (an assistant's next
# tool call beside a tool result), hidden nodes, notifications and local
# commands a harness chains aside (`local_command`) never count. instr first:
# json_extract copies the whole payload, which a 60 MB message makes costly.
BRANCHES = """
SELECT COUNT(*) FROM (
    SELECT 1 FROM session_entries
    WHERE session_id = ? AND parent_entry_id IS NOT NULL
      AND kind IN ('user.message', 'assistant.message') AND context_visibility = 'context'
      AND (instr(payload, '"local_command"') = 0
           OR json_extract(payload, '$.local_command') IS NULL)
    GROUP BY parent_entry_id HAVING COUNT(*) > 1
)
"""
