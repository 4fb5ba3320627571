"""A store from before the tool field (0026_search_tool_text) gains it for every entry it holds.

The store is made by the index of before: every migration but 0026 and 0031
(which notes rows in 0026's table; the later ones hold columns today's
importer writes) and a catch-up that neither fills nor knows the tool field.
Reopened by today's code, its entries wait in search_tool_pending and the same
catch-up works them off; the index then holds exactly what a fresh import of
the same chat holds.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from sessionforest import Forest
from sessionforest.store.sqlite import migrations
from sessionforest.store.sqlite.search import catchup

BUILD_FAILED = (
    Path(__file__).resolve().parents[4]
    / "shared"
    / "data"
    / "claude-code"
    / "real_projects"
    / "-Users-dain-workspace-coderabbit-review-helper"
    / "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"
)


def _rows(path: Path) -> list[tuple[int, str | None, str | None]]:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(
            "SELECT rowid, text, tool FROM session_entry_fts ORDER BY rowid"
        ).fetchall()


def _old_store(path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as m:
        # Every migration but this one (and 0031, which notes rows in its table):
        # today's import needs the later ones' columns.
        skipped = {"search_tool_text", "search_harness_output"}
        m.setattr(
            migrations,
            "MIGRATIONS",
            tuple(x for x in migrations.MIGRATIONS if x.name not in skipped),
        )
        # The catch-up of before: the feed triggers only.
        m.setattr(catchup, "ANY_PENDING", "SELECT 1 FROM search_pending LIMIT 1")
        m.setattr(catchup, "TOOL_COUNT", "SELECT 0")
        m.setattr(catchup, "_backfill", lambda conn, limit: False)
        m.setattr(catchup, "_tool_fields", lambda conn, sid, start, end: None)
        with Forest.open(path) as old:
            [made] = old.import_chats("claude-code", BUILD_FAILED).chats
    with closing(sqlite3.connect(path)) as conn:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(session_entry_fts)")]
    assert columns == ["text", "session_id"]  # really the index of before
    return made.session_id


def test_an_upgraded_store_finds_what_the_tools_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    sid = _old_store(path, monkeypatch)
    with Forest.open(path) as forest:
        assert "search_tool_text" in forest.migrated
        assert forest.backlog().index_pending > 0  # the held entries wait for their tool field
        for query in ("build_wheel", "hatchling.build", "Failed to build"):
            assert [h.session_id for h in forest.search_chats(query).hits] == [sid]
            assert forest.search_session_entries(sid, query)[0].kind == "tool.completed"
        assert forest.backlog().index_pending == 0
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM search_tool_pending").fetchone() == (0,)
    fresh = tmp_path / "fresh.db"
    with Forest.open(fresh) as forest:
        forest.import_chats("claude-code", BUILD_FAILED)
        forest.search_chats("anything")  # caught up
    assert _rows(path) == _rows(fresh)


def test_the_backfill_is_worked_off_in_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    _old_store(path, monkeypatch)
    with Forest.open(path) as forest:
        db = forest._backend.store.derived  # the background thread's own call
        chunks = 0
        while db.index_some(100):
            chunks += 1
        assert chunks >= 2
        assert forest.backlog().index_pending == 0
    fresh = tmp_path / "fresh.db"
    with Forest.open(fresh) as forest:
        forest.import_chats("claude-code", BUILD_FAILED)
        forest.search_chats("anything")
    assert _rows(path) == _rows(fresh)
