"""Tests of the SQLite backend itself: a real store file, never the backend parameter.

What every backend must do is in tests/conformance; what is here is how
SQLite does it (PRAGMAs, WAL, FTS5 and trigram tables, triggers, migrations,
files on disk), so these tests open the SQLite store directly.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest
from sessionforest.store.sqlite.search import catchup

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)  # a Wednesday, as in the search tests


@pytest.fixture
def forest(tmp_path: Path) -> Iterator[Forest]:
    store = Forest.open(tmp_path / "forest.db", clock=lambda: NOW)
    yield store
    store.close()


def text(body: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": body}]}


def rows(path: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(sql, args).fetchall()


def pending(path: Path) -> list[tuple[Any, ...]]:
    """What appends have left for the index, by session (search/catchup.py)."""
    return rows(path, "SELECT session_id, from_sequence FROM search_pending ORDER BY 1")


def indexed(path: Path) -> None:
    """Index what appends left pending, as a search from another process would first."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        catchup.catch_up(conn)
        conn.execute("COMMIT")


def raw_append(path: Path, sid: str, kind: str, body: str, *, head: bool = True) -> str:
    """An entry written with SQL only (below the head; the head moves to it unless
    `head` is False), for stores migrated only part of the way, which today's
    append (it maintains tables they lack) cannot write to."""
    with closing(sqlite3.connect(path)) as conn, conn:
        found = conn.execute(
            "SELECT (SELECT MAX(sequence) FROM session_entries WHERE session_id = ?), "
            "(SELECT active_entry_id FROM session_heads WHERE session_id = ?)",
            (sid, sid),
        ).fetchone()
        sequence = (found[0] or 0) + 1
        entry_id = f"{sid}-{sequence}"
        conn.execute(
            "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
            "semantic_schema_version, kind, payload, context_visibility, created_at) "
            "VALUES (?, ?, ?, ?, 2, ?, ?, 'context', '2026-09-30T15:00:00.000Z')",
            (entry_id, sid, found[1], sequence, kind, body),
        )
        if head:
            raw_move(conn, sid, entry_id)
    return entry_id


def raw_move(conn: sqlite3.Connection, sid: str, entry_id: str) -> None:
    conn.execute(
        "INSERT INTO session_heads(session_id, active_entry_id, updated_at) "
        "VALUES (?, ?, '2026-09-30T15:00:00.000Z') ON CONFLICT(session_id) "
        "DO UPDATE SET active_entry_id = excluded.active_entry_id",
        (sid, entry_id),
    )
