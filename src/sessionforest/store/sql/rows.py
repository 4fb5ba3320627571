"""Row statements both backends write with, in the shared form (store/sql/dialect.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

ENTRY_COLUMNS: Final = (
    "id, session_id, parent_entry_id, sequence, semantic_schema_version, kind, payload, "
    "context_visibility, created_at, stamp"
)

# Every column a session row is written with (an import sets them all) ...
SESSION_COLUMNS: Final = (
    "id", "title", "harness", "cwd", "created_at", "status", "visibility",
    "origin_cwd", "source_format", "source_path", "source_id", "summary", "git_branch",
    "git_commit", "git_repository", "origin_project",
)  # fmt: skip
# ... and the ones a chat created in place sets: the rest keep their defaults, so the
# statement also runs against the schema of any released store (migration tests
# write with it before upgrading one).
NEW_SESSION_COLUMNS: Final = ("id", "title", "harness", "cwd", "created_at", "visibility")


def _insert_into_sessions(columns: tuple[str, ...]) -> str:
    marks = ", ".join("?" for _ in columns)
    return f"INSERT INTO sessions({', '.join(columns)}) VALUES ({marks})"


INSERT_SESSION: Final = _insert_into_sessions(SESSION_COLUMNS)
INSERT_NEW_SESSION: Final = _insert_into_sessions(NEW_SESSION_COLUMNS)

# A head move is not activity: a chat's `updated_at` (its place in a listing by activity)
# stays the time of its newest entry; only a session without a head row takes `now`.
MOVE_HEAD: Final = """
INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, ?)
ON CONFLICT (session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id
"""

UPSERT_HEAD: Final = """
INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, ?)
ON CONFLICT (session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id,
                                       updated_at = excluded.updated_at
"""


def column_names(description: Sequence[Sequence[Any]] | None) -> tuple[str, ...]:
    """The column names of a cursor's `description` (both drivers': DB-API's first item)."""
    if description is None:
        raise RuntimeError("the statement returned no columns")
    return tuple(str(column[0]) for column in description)
