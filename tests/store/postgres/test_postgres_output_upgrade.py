"""A PostgreSQL store from before the tool field held a harness's printed output
(0015_search_harness_output) gains it for the notifications it holds.

The old store runs every migration but 0015 and is written by the writer of
before (no notification is tool text). Reopened by today's code, the backend's
tool fill works the noted sessions off; its entry rows and document frequencies
are then exactly a fresh import's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from conformance.backends.postgres import new_schema_url
from sessionforest import Forest, tooltext
from sessionforest.store.postgres import rows, schema

AIDER = Path(__file__).resolve().parents[4] / "shared" / "data" / "aider" / "chat-history.md"
LINES = slice(8301, 8359)  # three runs, the last failing with litellm's error
ERROR = "LLM Provider NOT provided"


def aider_slice(tmp_path: Path) -> Path:
    lines = AIDER.read_text(encoding="utf-8").splitlines(keepends=True)[LINES]
    path = tmp_path / ".aider.chat.history.md"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _indexed(url: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    with psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute(
            "SELECT sequence, kind, text, tool, spaceless FROM session_entries "
            "ORDER BY created_at, sequence, kind"
        ).fetchall()
        terms = conn.execute(
            "SELECT term, docs FROM search_terms WHERE docs <> 0 ORDER BY term"
        ).fetchall()
    return found, terms


def test_an_upgraded_store_finds_what_aider_printed(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = aider_slice(tmp_path)
    names = [m.name for m in schema.MIGRATIONS]
    with monkeypatch.context() as m:
        m.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[: names.index("search_harness_output")])
        kinds = tuple(k for k in tooltext.TOOL_KINDS if k != "provider.notification")
        m.setattr(tooltext, "TOOL_KINDS", kinds)
        m.setattr(rows, "TOOL_KINDS", kinds)
        with Forest.open(pg_url) as old:
            chats = old.import_chats("aider", history).chats
            assert old.search_chats(ERROR).hits == ()  # really the index of before
    failed = chats[-1].session_id
    with Forest.open(pg_url) as forest:
        assert "search_harness_output" in forest.migrated
        assert forest.backlog().index_pending > 0
        assert forest.search_chats(ERROR).hits[0].session_id == failed
        [hit, *_] = forest.search_session_entries(failed, ERROR)
        assert hit.kind == "provider.notification"
        assert forest.backlog().index_pending == 0
    fresh_url = new_schema_url()
    with Forest.open(fresh_url) as fresh:
        fresh.import_chats("aider", history)
    assert _indexed(pg_url) == _indexed(fresh_url)
