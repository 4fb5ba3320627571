"""The trigram tables behind search in scripts written without spaces.

What is found is pinned for every backend in
tests/conformance/search/test_search_spaceless.py; here is what the SQLite
backend writes to `session_entry_grams` and `chat_digest_grams`, and when.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson
import pytest

from sessionforest import Forest, StoreIOError
from sessionforest.scripts import spaceless
from sessionforest.store.sqlite import migrations, paths
from sessionforest.store.sqlite.search import grams
from sessionforest.store.sqlite.search.grams import excerpt

from .conftest import NOW, indexed, raw_append


def text(body: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": body}]}


def chat(forest: Forest, title: str, messages: list[str]) -> str:
    """A chat whose messages alternate user/assistant."""
    sid = forest.create_session(title, "codex")
    for i, body in enumerate(messages):
        kind = "user.message" if i % 2 == 0 else "assistant.message"
        forest.append(sid, kind, text(body), stamp=None)
    return sid


def grams_rows(path: Path) -> list[tuple[int, str]]:
    indexed(path)
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT rowid, text FROM session_entry_grams ORDER BY rowid").fetchall()


def test_only_text_in_spaceless_scripts_is_indexed_by_trigrams(forest: Forest) -> None:
    sid = forest.create_session("plain title")
    forest.append(sid, "user.message", text("plain ascii text"))
    forest.append(sid, "user.message", text("Latin with “quotes” — café"))
    forest.append(sid, "user.message", text("one word of 中文 inside"))
    forest.append(
        sid,
        "assistant.message",
        {"content": [{"type": "thinking", "thinking": "想一想"}, {"type": "text", "text": "ok"}]},
    )
    assert [t for _, t in grams_rows(forest.path)] == ["one word of 中文 inside  "]
    indexed(forest.path)
    with closing(sqlite3.connect(forest.path)) as conn:
        assert conn.execute("SELECT count(*) FROM chat_digest_grams").fetchone() == (0,)


def test_json_escaped_text_is_indexed_too(forest: Forest) -> None:
    sid = forest.create_session("t")
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        conn.execute(
            "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
            "semantic_schema_version, kind, payload, context_visibility, created_at) "
            "VALUES ('e', ?, NULL, 1, 2, 'user.message', ?, 'context', 't')",
            (sid, '{"content": [{"type": "text", "text": "\\u6570\\u636e\\u5e93\\u5f88\\u6162"}]}'),
        )
    assert [t for _, t in grams_rows(forest.path)] == ["数据库很慢  "]
    assert [h.entry_id for h in forest.search_session_entries(sid, "数据")] == ["e"]


def test_a_failed_append_leaves_no_trigram_row_and_a_committed_one_is_found_at_once(
    forest: Forest, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = forest.create_session("t")
    with Forest.open(forest.path) as other:
        forest.append(sid, "user.message", text("第一条消息"))
        assert [h.sequence for h in other.search_session_entries(sid, "消息")] == [1]
        before = grams_rows(forest.path)
        monkeypatch.setattr(
            paths, "APPEND_HEAD", "INSERT INTO no_such_table VALUES (?, ?, ?, ?, ?, ?)"
        )
        with pytest.raises(StoreIOError):
            forest.append(sid, "user.message", text("失败的追加"))
        monkeypatch.undo()
        assert grams_rows(forest.path) == before
        assert other.search_session_entries(sid, "追加") == []
        assert other.search_chats("追加", now=NOW).hits == ()


def test_the_migration_indexes_cjk_entries_already_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [m.name for m in migrations.MIGRATIONS]
    path = tmp_path / "old.db"
    with monkeypatch.context() as m:
        m.setattr(
            migrations, "MIGRATIONS", migrations.MIGRATIONS[: names.index("session_gram_index")]
        )
        with Forest.open(path, clock=lambda: NOW) as old:
            sid = old.create_session("数据库迁移")
        raw_append(path, sid, "user.message", orjson.dumps(text("我们的数据库很慢")).decode())
        raw_append(path, sid, "assistant.message", orjson.dumps(text("plain reply")).decode())
    with Forest.open(path, clock=lambda: NOW) as new:
        assert [h.sequence for h in new.search_session_entries(sid, "数据库")] == [1]
        result = new.search_chats("迁移", now=NOW)
        assert [h.session_id for h in result.hits] == [sid] and result.hits[0].digest_match
        assert [t for _, t in grams_rows(path)] == ["我们的数据库很慢  "]


def test_a_renamed_chat_gets_a_trigram_digest_of_its_title_and_opening(forest: Forest) -> None:
    # Split from the conformance test of CJK titles: the digest row it leaves.
    sid = forest.create_session("Later")
    forest.append(sid, "user.message", text("x"))
    forest.append(sid, "assistant.message", text("y"))
    forest.append(sid, "compaction", {"summary": "讨论了缓存策略"})
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        conn.execute("UPDATE sessions SET title = '缓存讨论' WHERE id = ?", (sid,))
    indexed(forest.path)
    with closing(sqlite3.connect(forest.path)) as conn:
        row = conn.execute(
            "SELECT title, first_message, first_reply, summary FROM chat_digest_grams "
            "WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = ?)",
            (sid,),
        ).fetchone()
    assert row == ("缓存讨论  ", "x  ", "y  ", "讨论了缓存策略  ")


def test_a_common_short_word_is_found_by_reading_rows(
    forest: Forest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past MAX_GRAM_STARTS listed trigrams, the word is looked for with instr().
    sid = chat(forest, "Chat", ["数据库很慢", "数据表", "数据集"])
    chat(forest, "Other", ["没有关系"])
    monkeypatch.setattr(grams, "MAX_GRAM_STARTS", 1)
    result = forest.search_chats("数据", now=NOW)
    assert [h.session_id for h in result.hits] == [sid]
    assert result.hits[0].entry_matches == 3
    both = forest.search_chats("数据 慢", now=NOW)
    assert [h.session_id for h in both.hits] == [sid]


def test_scripts_and_excerpts() -> None:
    assert spaceless("数据") and spaceless("カナ") and spaceless("한글") and spaceless("ไทย")
    assert not spaceless("plain — “café” ✅ Ελληνικά")
    assert excerpt("我们的数据库很慢  ", ["数据库"]) == "我们的**数据库**很慢"
    assert excerpt("use SQLite here", ["sqlite"]) == "use **SQLite** here"
    long = "前" * 100 + "数据库" + "后" * 100
    cut = excerpt(long, ["数据库"], width=20)
    assert cut.startswith("…") and cut.endswith("…") and "**数据库**" in cut
    assert len(cut.replace("**", "")) == 22
