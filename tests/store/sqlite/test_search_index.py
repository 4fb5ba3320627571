"""The index stays in step with the store: caught up (in one transaction) before
a search reads, never holding a row of an append that failed, backfilled by its
migration, digests updated as chats change."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest, HeadMoved, StoreIOError
from sessionforest.kinds import CONVERSATIONAL_KINDS, LEGACY_KINDS
from sessionforest.store.sqlite import migrations, paths
from sessionforest.store.sqlite.search import catchup, schema

from .conftest import indexed

V5_DB = Path(__file__).parent / "fixtures" / "v5.db"


def text(body: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": body}]}


def fts_rows(path: Path) -> list[tuple[str, str]]:
    indexed(path)
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(
            "SELECT session_id, text FROM session_entry_fts ORDER BY rowid"
        ).fetchall()


def digest(path: Path, sid: str) -> tuple[str, str, str, str]:
    indexed(path)
    with closing(sqlite3.connect(path)) as conn:
        row = conn.execute(
            "SELECT title, first_message, first_reply, summary FROM chat_digest_fts "
            "WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = ?)",
            (sid,),
        ).fetchone()
    return tuple(row)  # type: ignore[return-value]


def test_indexed_kinds_are_the_conversational_kinds_and_their_legacy_names() -> None:
    legacy = {old for old, new in LEGACY_KINDS.items() if new in CONVERSATIONAL_KINDS}
    assert set(schema.INDEXED_KINDS) == CONVERSATIONAL_KINDS | legacy


def test_a_failed_append_leaves_no_index_row(
    forest: Forest, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = forest.create_session("t")
    forest.append(sid, "user.message", text("first words"))
    before = fts_rows(forest.path)
    # Fail the append after its entry row (and so the pending trigger) was written.
    monkeypatch.setattr(paths, "APPEND_HEAD", "INSERT INTO no_such_table VALUES (?, ?, ?, ?, ?, ?)")
    with pytest.raises(StoreIOError, match="no_such_table"):
        forest.append(sid, "user.message", text("quince jelly"))
    monkeypatch.undo()
    assert fts_rows(forest.path) == before
    assert forest.search_session_entries(sid, "quince") == []
    with pytest.raises(HeadMoved):
        forest.append(sid, "user.message", text("quince"), expect_head=None)
    assert fts_rows(forest.path) == before


def test_a_rolled_back_raw_insert_leaves_no_index_row(forest: Forest) -> None:
    sid = forest.create_session("t")
    with closing(sqlite3.connect(forest.path, isolation_level=None)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
            "semantic_schema_version, kind, payload, context_visibility, created_at) "
            "VALUES ('x', ?, NULL, 1, 2, 'user.message', ?, 'context', 't')",
            (sid, '{"content": [{"type": "text", "text": "gooseberry"}]}'),
        )
        assert conn.execute("SELECT * FROM search_pending").fetchall() == [(sid, 1)]
        # Caught up inside the writer's transaction, the row is indexed there...
        catchup.catch_up(conn)
        assert conn.execute("SELECT count(*) FROM session_entry_fts").fetchone() == (1,)
        conn.execute("ROLLBACK")
    # ...and rolls back with it, the pending note included.
    with closing(sqlite3.connect(forest.path)) as conn:
        assert conn.execute("SELECT count(*) FROM search_pending").fetchone() == (0,)
    assert fts_rows(forest.path) == []


def test_conversation_text_is_the_first_field_and_tool_text_the_second(forest: Forest) -> None:
    sid = forest.create_session("t")
    forest.append(sid, "system.message", text("system prompt words"))
    forest.append(
        sid,
        "user.message",
        {
            "content": [
                text("look at")["content"][0],
                {"type": "image", "media_type": "p", "url": "u"},
                {"type": "text", "text": "this picture"},
            ]
        },
    )
    forest.append(
        sid,
        "assistant.message",
        {
            "content": [
                {"type": "thinking", "thinking": "secret plan"},
                {"type": "tool_call", "id": "c1", "name": "grep", "input": {"q": "needle"}},
            ]
        },
    )
    forest.append(sid, "tool.started", {"call_id": "c1", "name": "grep", "input": {}})
    forest.append(sid, "tool.completed", {"call_id": "c1", "output": "needle found"})
    forest.append(
        sid,
        "worker.result",
        {"worker_session_id": "w", "status": "succeeded", "summary": "worker summary"},
    )
    forest.checkpoint(sid, "release", "shipped it")
    forest.append(sid, "compaction", {"summary": "compacted summary"})
    forest.append(sid, "branch.summary", {"summary": "branch summary"})
    indexed(forest.path)
    with closing(sqlite3.connect(forest.path)) as conn:
        rows = conn.execute("SELECT text, tool FROM session_entry_fts ORDER BY rowid").fetchall()
    assert rows == [
        ("look at\nthis picture", None),
        ("", "grep\nneedle"),  # a tool-call-only reply: no words, its call in the tool field
        (None, "grep"),
        (None, "needle found"),
        ("worker summary", None),
        ("release shipped it", None),
        ("compacted summary", None),
        ("branch summary", None),
    ]
    for absent in ("system", "secret", "prompt", "plan"):
        assert forest.search_session_entries(sid, absent) == []
    # What the tools said is found too (tooltext.py), in the tool field only.
    assert [h.kind for h in forest.search_session_entries(sid, "needle")] == [
        "tool.completed",
        "assistant.message",
    ]


def test_a_damaged_payload_is_stored_but_not_indexed(forest: Forest) -> None:
    sid = forest.create_session("t")
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        conn.execute(
            "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
            "semantic_schema_version, kind, payload, context_visibility, created_at) "
            "VALUES ('bad', ?, NULL, 1, 2, 'user.message', '{\"content\": [', 'context', 't')",
            (sid,),
        )
    assert fts_rows(forest.path) == []


def test_digest_follows_title_opening_exchange_and_latest_summary(forest: Forest) -> None:
    sid = forest.create_session("first title")
    assert digest(forest.path, sid) == ("first title", "", "", "")
    forest.append(sid, "assistant.message", {"content": []})  # no text: not the first reply
    forest.append(sid, "user.message", text("the opening question"))
    forest.append(sid, "assistant.message", text("the first reply"))
    forest.append(sid, "user.message", text("a later question"))
    forest.append(sid, "assistant.message", text("a later reply"))
    forest.checkpoint(sid, "one", "first summary")
    forest.append(sid, "compaction", {"summary": "latest summary"})
    assert digest(forest.path, sid) == (
        "first title",
        "the opening question",
        "the first reply",
        "latest summary",
    )
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        conn.execute("UPDATE sessions SET title = 'renamed chat' WHERE id = ?", (sid,))
    assert digest(forest.path, sid)[0] == "renamed chat"
    result = forest.search_chats("renamed")
    assert [h.session_id for h in result.hits] == [sid]
    assert result.hits[0].digest_match


def _before_search_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store migrated up to (not including) the search index migration."""
    names = [m.name for m in migrations.MIGRATIONS]
    cut = names.index("session_search_index")
    path = tmp_path / "old.db"
    with monkeypatch.context() as m:
        m.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:cut])
        with closing(sqlite3.connect(path, isolation_level=None)) as conn:
            migrations.migrate(conn)
    return path


def test_the_migration_indexes_entries_that_already_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _before_search_index(tmp_path, monkeypatch)
    with closing(sqlite3.connect(path)) as conn, conn:
        assert (
            conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'session_entry_fts'").fetchone()
            is None
        )
        conn.execute(
            "INSERT INTO sessions(id, title, harness, created_at) "
            "VALUES ('old', 'Tomato blight', 'codex', '2026-01-01T00:00:00.000Z')"
        )
        rows = [
            (
                "e1",
                None,
                1,
                "user.message",
                '{"content":[{"type":"text","text":"leaves have spots"}]}',
            ),
            (
                "e2",
                "e1",
                2,
                "assistant.message",
                '{"content":[{"type":"text","text":"copper spray"}]}',
            ),
            ("e3", "e2", 3, "compaction", '{"summary":"fungal blight treated"}'),
            ("e4", "e3", 4, "tool.started", '{"call_id":"c","name":"fungicide","input":{}}'),
        ]
        conn.executemany(
            "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
            "semantic_schema_version, kind, payload, context_visibility, created_at) "
            "VALUES (?, 'old', ?, ?, 2, ?, ?, 'context', '2026-01-01T00:00:00.000Z')",
            rows,
        )
        conn.execute("INSERT INTO session_heads VALUES ('old', 'e4', 't')")
    with Forest.open(path) as forest:
        assert [h.entry_id for h in forest.search_session_entries("old", "spray")] == ["e2"]
        # A tool call is found by its tool field (0026_search_tool_text fills it).
        assert [h.entry_id for h in forest.search_session_entries("old", "fungicide")] == ["e4"]
        assert digest(path, "old") == (
            "Tomato blight",
            "leaves have spots",
            "copper spray",
            "fungal blight treated",
        )
        assert [h.session_id for h in forest.search_chats("fungal").hits] == ["old"]
        # The backfill also records when each chat was active.
        march = datetime(2026, 3, 1, tzinfo=UTC)
        assert [h.session_id for h in forest.search_chats("fungal in january", now=march).hits] == [
            "old"
        ]
        february = forest.search_chats("fungal in february", now=march)
        assert february.hits == february.outside_window  # none inside the window
        # Triggers are live after the backfill: the next chat is indexed too.
        sid = forest.create_session("after")
        forest.append(sid, "user.message", text("leaves again"))
        assert {h.session_id for h in forest.search_chats("leaves").hits} == {"old", sid}
        assert forest.search_chats("leaves").hits[0].session_id == sid


def test_the_legacy_v5_history_is_searchable_after_migrating(tmp_path: Path) -> None:
    path = tmp_path / "v5.db"
    shutil.copyfile(V5_DB, path)
    with Forest.open(path) as forest:
        # v1 payloads ({"text": ...}) and v2 content blocks are both indexed.
        [hit] = forest.search_session_entries("legacy-linear", "date")
        assert hit.kind == "user.message" and "**date**" in hit.snippet
        assert forest.search_session_entries("legacy-orphan", "date") == []
        assert "forest-native" in {h.session_id for h in forest.search_chats("README").hits}


def test_the_project_migration_backfills_existing_digests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    project = tmp_path / "work" / "coderabbit-review-helper"
    project.mkdir(parents=True)
    # Every migration but this one (later ones change what today's appends write).
    before = [m for m in migrations.MIGRATIONS if m.name != "chat_digest_project"]
    with monkeypatch.context() as m:
        m.setattr(migrations, "MIGRATIONS", before)
        old = Forest.open(path)
        sid = old.create_session("Review tool", "claude", cwd=project)
        old.append(sid, "user.message", text("hello"), stamp=None)
        old.close()
    now = datetime(2026, 9, 30, tzinfo=UTC)
    with closing(sqlite3.connect(path)) as conn:
        [(title,)] = conn.execute("SELECT title FROM chat_digest_fts").fetchall()
    assert title == "Review tool"
    forest = Forest.open(path)
    try:
        with closing(sqlite3.connect(path)) as conn:
            [(title,)] = conn.execute("SELECT title FROM chat_digest_fts").fetchall()
        assert title == "Review tool\nwork coderabbit-review-helper"
        assert [h.session_id for h in forest.search_chats("coderabbit", now=now).hits] == [sid]
        # Binding a chat afterwards gives it its project words (they follow cwd).
        later = tmp_path / "kestrel-app"
        later.mkdir()
        other = forest.create_session("Plain", "claude")
        forest.append(other, "user.message", text("hello"), stamp=None)
        assert forest.search_chats("kestrel", now=now).hits == ()
        forest.bind(other, later)
        assert [h.session_id for h in forest.search_chats("kestrel", now=now).hits] == [other]
    finally:
        forest.close()
