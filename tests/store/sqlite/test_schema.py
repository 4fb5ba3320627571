"""The SQLite schema itself: the three trees share no trigger and no foreign key.

That they behave independently is pinned for every backend in
tests/conformance/trees/test_trees_independence.py.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing

from sessionforest import Forest

TREE_TABLES = ("workspaces", "agents")
CONVERSATION_TABLES = ("sessions", "session_entries", "session_heads")


def test_no_trigger_or_foreign_key_links_the_trees(forest: Forest) -> None:
    lead, sub = forest.create_session(title="lead"), forest.create_session(title="sub")
    task = forest.add_task_worktree(forest.add_repository("/r"), "/r-task")
    forest.add_worker(forest.add_orchestrator(lead, workspace_id=task), sub, {"may": ["edit"]})
    with closing(sqlite3.connect(forest.path)) as conn:
        triggers = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall()
        for table in (*TREE_TABLES, *CONVERSATION_TABLES):
            assert conn.execute(f"PRAGMA foreign_key_list({table})").fetchall() == []
    for name, sql in triggers:
        assert not any(t in sql for t in TREE_TABLES), name
