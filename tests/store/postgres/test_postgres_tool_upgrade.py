"""A PostgreSQL store from before the tool field (0010_search_tool_text) gains it for every entry.

The old store is made by the migrations up to 0009 and rows written as an
older writer (or another program) writes them: no text given, the released
trigger computes it. Reopened by today's code, the catch-up fills the tool
field of what it holds; then its entry rows and document frequencies are
exactly a fresh import's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from conformance.backends.postgres import new_schema_url
from sessionforest import Forest
from sessionforest.store.postgres import schema

BUILD_FAILED = (
    Path(__file__).resolve().parents[4]
    / "shared"
    / "data"
    / "claude-code"
    / "real_projects"
    / "-Users-dain-workspace-coderabbit-review-helper"
    / "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"
)
ENTRIES = (
    "SELECT id, session_id, parent_entry_id, sequence, semantic_schema_version, kind, payload, "
    "context_visibility, created_at FROM session_entries ORDER BY session_id, sequence"
)


def _indexed(url: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT sequence, kind, text, tool, spaceless FROM session_entries "
            "ORDER BY session_id, sequence"
        ).fetchall()
        terms = conn.execute(
            "SELECT term, docs FROM search_terms WHERE docs <> 0 ORDER BY term"
        ).fetchall()
    return rows, terms


def test_an_upgraded_store_finds_what_the_tools_said(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Today's import, read back as the rows an older writer would have sent.
    fresh_url = new_schema_url()
    with Forest.open(fresh_url) as fresh:
        [made] = fresh.import_chats("claude-code", BUILD_FAILED).chats
        sid = made.session_id
    with psycopg.connect(fresh_url, autocommit=True) as conn:
        session = conn.execute(
            "SELECT id, title, harness, created_at FROM sessions WHERE id = %s", (sid,)
        ).fetchone()
        entries = conn.execute(ENTRIES).fetchall()
        head = conn.execute("SELECT active_entry_id FROM session_heads").fetchone()
    names = [m.name for m in schema.MIGRATIONS]
    with monkeypatch.context() as m:
        m.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[: names.index("search_tool_text")])
        Forest.open(pg_url).close()
    with psycopg.connect(pg_url) as conn:
        columns = [
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = 'session_entries'"
            )
        ]
        assert "tool" not in columns  # really the schema of before
        conn.execute(
            "INSERT INTO sessions(id, title, harness, created_at) VALUES (%s, %s, %s, %s)", session
        )
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
                "semantic_schema_version, kind, payload, context_visibility, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                entries,
            )
        conn.execute(
            "INSERT INTO session_heads(session_id, active_entry_id, updated_at) "
            "VALUES (%s, %s, 't')",
            (sid, head[0] if head else None),
        )
    with Forest.open(pg_url) as forest:
        assert "search_tool_text" in forest.migrated
        assert forest.backlog().index_pending > 0
        for query in ("build_wheel", "hatchling.build", "Failed to build"):
            assert [h.session_id for h in forest.search_chats(query).hits] == [sid]
            assert forest.search_session_entries(sid, query)[0].kind == "tool.completed"
        assert forest.backlog().index_pending == 0
    (old_rows, old_terms), (new_rows, new_terms) = _indexed(pg_url), _indexed(fresh_url)
    # A text-less reply is NULL from the released trigger and "" from a writer:
    # the same no-words, as before this migration.
    assert [(*r[:2], r[2] or None, *r[3:]) for r in old_rows] == [
        (*r[:2], r[2] or None, *r[3:]) for r in new_rows
    ]
    assert old_terms == new_terms
