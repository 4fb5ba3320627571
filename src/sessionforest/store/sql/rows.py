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


# What a chat list counts as a message: what someone said and the replies, not tool
# results, notifications or other hidden entries (one per content block for some
# harnesses). Each head row keeps its session's count (migration session_messages):
# an append adds what it added in the head update it makes anyway; an import, a
# restore and a repair count the rows they wrote (RECOUNT_SINCE).
MESSAGE_KINDS: Final = ("user.message", "assistant.message")
IS_MESSAGE: Final = (
    "kind IN ('user.message', 'assistant.message') AND context_visibility = 'context'"
)

# The head upsert of an append, adding the messages it appended.
APPEND_HEAD: Final = """
INSERT INTO session_heads(session_id, active_entry_id, updated_at, messages) VALUES (?, ?, ?, ?)
ON CONFLICT (session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id,
                                       updated_at = excluded.updated_at,
                                       messages = session_heads.messages + excluded.messages
"""

# The messages among a session's entries past a sequence (the (session_id, sequence)
# index: an import continuing a chat reads only its new rows), added to its count.
RECOUNT_SINCE: Final = f"""
UPDATE session_heads SET messages = messages + (
    SELECT COUNT(*) FROM session_entries
    WHERE session_id = ? AND sequence > ? AND {IS_MESSAGE}
) WHERE session_id = ?
"""

# Count a session's messages afresh (repair: whatever the head row held).
RECOUNT: Final = f"""
UPDATE session_heads SET messages = (
    SELECT COUNT(*) FROM session_entries WHERE session_id = ? AND {IS_MESSAGE}
) WHERE session_id = ?
"""


def messages_in(items: Sequence[Any]) -> int:
    """How many of `items` (anything with `kind` and `visibility`) a chat list counts."""
    return sum(1 for i in items if i.kind in MESSAGE_KINDS and i.visibility == "context")


def column_names(description: Sequence[Sequence[Any]] | None) -> tuple[str, ...]:
    """The column names of a cursor's `description` (both drivers': DB-API's first item)."""
    if description is None:
        raise RuntimeError("the statement returned no columns")
    return tuple(str(column[0]) for column in description)
