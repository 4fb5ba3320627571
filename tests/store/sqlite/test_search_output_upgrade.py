"""A store from before the tool field held a harness's printed output
(0031_search_harness_output) gains it for the notifications it holds.

Aider's output blocks (a provider.notification with an `output`) hold what its
runs printed, errors included. The old store is made by every migration but
0031 with the tool pass of before (no notification in it); reopened by today's
code, those sessions wait in search_tool_pending, the catch-up fills them, and
the index then holds exactly what a fresh import of the same chats holds.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from sessionforest import Forest, tooltext
from sessionforest.store.sqlite import migrations
from sessionforest.store.sqlite.search import catchup

AIDER = Path(__file__).resolve().parents[4] / "shared" / "data" / "aider" / "chat-history.md"
# Three runs of the real history, the last one failing with litellm's error.
LINES = slice(8301, 8359)
ERROR = "LLM Provider NOT provided"


def aider_slice(tmp_path: Path) -> Path:
    lines = AIDER.read_text(encoding="utf-8").splitlines(keepends=True)[LINES]
    assert lines[0].startswith("# aider chat started") and ERROR in "".join(lines)
    path = tmp_path / ".aider.chat.history.md"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _rows(path: Path) -> list[tuple[int, str | None, str | None]]:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(
            "SELECT rowid, text, tool FROM session_entry_fts ORDER BY rowid"
        ).fetchall()


def test_an_upgraded_store_finds_what_aider_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = aider_slice(tmp_path)
    path = tmp_path / "old.db"
    names = [m.name for m in migrations.MIGRATIONS]
    with monkeypatch.context() as m:
        at = names.index("search_harness_output")
        m.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:at])
        # The tool pass of before: no notification is tool text.
        kinds = tuple(k for k in tooltext.TOOL_KINDS if k != "provider.notification")
        m.setattr(tooltext, "TOOL_KINDS", kinds)
        old_rows = catchup._tool_rows().replace(
            "OR (kind = 'provider.notification' AND instr(payload, '\"output\"') > 0)", ""
        )
        assert old_rows != catchup._tool_rows()
        m.setattr(catchup, "_tool_rows", lambda: old_rows)
        with Forest.open(path) as old:
            chats = old.import_chats("aider", history).chats
            assert old.search_chats(ERROR).hits == ()  # really the index of before
    failed = chats[-1].session_id
    with Forest.open(path) as forest:
        assert "search_harness_output" in forest.migrated
        assert forest.backlog().index_pending > 0
        assert forest.search_chats(ERROR).hits[0].session_id == failed
        [hit, *_] = forest.search_session_entries(failed, ERROR)
        assert hit.kind == "provider.notification"
        assert forest.backlog().index_pending == 0
    fresh = tmp_path / "fresh.db"
    with Forest.open(fresh) as forest:
        forest.import_chats("aider", history)
        forest.search_chats("anything")  # caught up
    assert _rows(path) == _rows(fresh)
