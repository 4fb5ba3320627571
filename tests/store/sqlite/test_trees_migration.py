"""The workspace_and_agent_trees migration on fresh and on older databases."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest
from sessionforest.store.sqlite import migrations

from .conftest import raw_append

NAME = "workspace_and_agent_trees"
NAMES = [m.name for m in migrations.MIGRATIONS]
V5_DB = Path(__file__).parent / "fixtures" / "v5.db"


def recorded(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM forest_migrations ORDER BY rowid")]


def columns(path: Path, table: str) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def assert_trees_ready(path: Path) -> None:
    assert columns(path, "workspaces") == [
        "id",
        "parent_id",
        "kind",
        "path",
        "branch",
        "created_at",
        "removed_at",
    ]
    assert columns(path, "agents") == [
        "id",
        "parent_id",
        "role",
        "session_id",
        "workspace_id",
        "policy",
        "created_at",
        "removed_at",
    ]


def test_it_is_appended_after_every_migration_released_before_it() -> None:
    assert NAME in NAMES
    assert NAMES.index(NAME) == NAMES.index("session_status_visibility_quarantine") + 1


def test_a_fresh_database_gets_both_tables(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    with Forest.open(path) as forest:
        repo = forest.add_repository("/r")
        assert forest.workspace(repo).kind == "repository"
    assert_trees_ready(path)
    assert recorded(path) == NAMES
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(NAMES)


def test_a_database_created_before_it_is_upgraded_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "older.db"
    released = NAMES.index(NAME)
    with monkeypatch.context() as m:
        m.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:released])
        with Forest.open(path) as forest:
            sid = forest.create_session(title="before trees")
        hello = '{"content": [{"type": "text", "text": "hello"}]}'
        first = raw_append(path, sid, "user.message", hello)
        raw_append(path, sid, "user.message", hello, head=False)
    assert recorded(path) == NAMES[:released]
    with closing(sqlite3.connect(path)) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        entries = conn.execute("SELECT * FROM session_entries ORDER BY rowid").fetchall()
        heads = conn.execute("SELECT * FROM session_heads").fetchall()
    assert not {"workspaces", "agents"} & tables

    with Forest.open(path) as forest:
        assert forest.head(sid) == first
        orch = forest.add_orchestrator(sid)
        assert forest.agent_for_session(sid) == forest.agent(orch)
    assert_trees_ready(path)
    after = recorded(path)
    # This open ran the new migration first, right after what the file already had.
    assert after[: released + 1] == [*NAMES[:released], NAME]
    assert after == NAMES
    with closing(sqlite3.connect(path)) as conn:
        # (entry_branch_index adds a column to entries, parent_sequence: NULL on old rows.)
        stored = conn.execute("SELECT * FROM session_entries ORDER BY rowid").fetchall()
        assert [r[:-1] for r in stored] == entries and {r[-1] for r in stored} == {None}
        # (session_paths adds two columns to heads, path_tip and path_length.)
        assert [r[:3] for r in conn.execute("SELECT * FROM session_heads")] == heads


def test_a_schema_version_5_database_reaches_the_trees(tmp_path: Path) -> None:
    path = tmp_path / "v5.db"
    shutil.copyfile(V5_DB, path)
    with Forest.open(path) as forest:
        sessions = [s.id for s in forest.sessions()]
        orch = forest.add_orchestrator(sessions[0])
        worker = forest.add_worker(orch, sessions[1], {"may": ["read"]})
        assert [i.node.id for i in forest.agent_tree(orch)] == [orch, worker]
    assert_trees_ready(path)
    assert recorded(path) == NAMES


def test_reopening_applies_nothing_more(tmp_path: Path) -> None:
    path = tmp_path / "again.db"
    Forest.open(path).close()
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        ran: list[Any] = migrations.migrate(conn)
    assert ran == []
    assert recorded(path) == NAMES
