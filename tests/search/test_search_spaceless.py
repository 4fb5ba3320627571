"""Scripts written without spaces (Chinese, Japanese, Korean, Thai): a word is
found inside a clause, by recall and by find, through the trigram index."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest, StoreIOError
from sessionforest.scripts import spaceless
from sessionforest.store.sqlite import forest as forest_module
from sessionforest.store.sqlite import migrations
from sessionforest.store.sqlite.search import grams
from sessionforest.store.sqlite.search.grams import excerpt

from .conftest import NOW, text

CLAUSES = [
    # (clause, a word in it, where)
    ("数据库很慢，查询要十秒", "数据库", "start"),
    ("我们的数据库很慢", "数据库", "middle"),
    ("昨天我们换了数据库", "数据库", "end"),
    ("先看看索引有没有建好", "索引", "two characters, middle"),
    ("请检查一下索引", "索引", "two characters, end"),
    ("服务器太慢", "慢", "one character, end"),
    ("今日はデータベースが遅いです", "データベース", "katakana, middle"),
    ("設定ファイルを変更した", "設定", "kanji, two characters, start"),
    ("データを保存する前に確認して", "確認", "kanji inside kana"),
    ("데이터베이스가 너무 느려요", "데이터베이스", "Korean noun with its particle"),
    ("서버 로그에서 버그를 찾았어요", "버그", "Korean, two syllables"),
    ("ฐานข้อมูลช้ามาก", "ข้อมูล", "Thai, middle"),
]


def grams_rows(path: Path) -> list[tuple[int, str]]:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT rowid, text FROM session_entry_grams ORDER BY rowid").fetchall()


@pytest.mark.parametrize(("clause", "word", "where"), CLAUSES)
def test_a_word_inside_a_clause_is_found_by_recall_and_find(
    forest: Forest, make_chat: Any, clause: str, word: str, where: str
) -> None:
    make_chat("Other", ["an unrelated chat about gardening", "天气很好"])
    sid = make_chat("Chat", ["opening words", "ok", clause, "done"])
    [hit] = forest.search_session_entries(sid, word)
    assert hit.sequence == 3, where
    assert f"**{word}**" in hit.snippet
    result = forest.search_chats(word, now=NOW)
    assert [h.session_id for h in result.hits] == [sid], where
    assert result.terms == (word,) and result.unknown_terms == ()
    assert f"**{word}**" in result.hits[0].snippet
    assert result.confident  # the only chat holding it, in one entry


def test_a_word_that_occurs_nowhere_is_unknown(forest: Forest, make_chat: Any) -> None:
    make_chat("Chat", ["我们的数据库很慢"])
    result = forest.search_chats("缓存", now=NOW)
    assert result.hits == () and result.unknown_terms == ("缓存",)
    # Every trigram of 据库很 exists, but not in that order: matched nowhere.
    assert forest.search_chats("库很据", now=NOW).hits == ()


def test_a_query_mixing_latin_and_cjk_needs_both_in_one_chat(
    forest: Forest, make_chat: Any
) -> None:
    both = make_chat("Both", ["我们用 SQLite 做存储，但是数据库很慢"])
    latin = make_chat("Latin", ["sqlite is fast enough"])
    cjk = make_chat("CJK", ["数据库很快"])
    for other in range(4):  # enough chats that AND is not relaxed to OR
        make_chat(f"Pad {other}", [f"sqlite 数据库 pad{other}"])
    result = forest.search_chats("sqlite 数据库", now=NOW)
    assert result.mode == "and"
    found = [h.session_id for h in result.hits]
    assert both in found and latin not in found and cjk not in found
    hit = next(h for h in result.hits if h.session_id == both)
    assert set(hit.matched_terms) == {"sqlite", "数据库"}


def test_latin_words_written_inside_cjk_text_are_found(forest: Forest, make_chat: Any) -> None:
    # The word index sees "用sqlite做存储的时候要注意锁" as one token.
    sid = make_chat("Chat", ["用SQLite做存储的时候要注意锁", "这个bug很奇怪"])
    result = forest.search_chats("sqlite", now=NOW)
    assert [h.session_id for h in result.hits] == [sid]
    assert "**SQLite**" in result.hits[0].snippet
    [hit] = forest.search_session_entries(sid, "bug")
    assert hit.snippet == "这个**bug**很奇怪"


def test_a_cjk_title_and_summary_find_the_chat(forest: Forest, make_chat: Any) -> None:
    titled = make_chat("数据库性能优化", ["please help", "sure"])
    summarised = make_chat("Later", ["x", "y"])
    forest.append(summarised, "compaction", {"summary": "讨论了缓存策略"})
    result = forest.search_chats("性能", now=NOW)
    assert [h.session_id for h in result.hits] == [titled]
    assert result.hits[0].digest_match and "**性能**" in result.hits[0].snippet
    result = forest.search_chats("缓存", now=NOW)
    assert [h.session_id for h in result.hits] == [summarised]
    # Renamed to Latin the title no longer holds the word; a Latin chat
    # renamed to CJK gets a trigram digest holding its opening too.
    with closing(sqlite3.connect(forest.path)) as conn, conn:
        conn.execute("UPDATE sessions SET title = 'Performance' WHERE id = ?", (titled,))
        conn.execute("UPDATE sessions SET title = '缓存讨论' WHERE id = ?", (summarised,))
    assert forest.search_chats("优化", now=NOW).hits == ()
    result = forest.search_chats("讨论", now=NOW)
    assert [h.session_id for h in result.hits] == [summarised]
    with closing(sqlite3.connect(forest.path)) as conn:
        row = conn.execute(
            "SELECT title, first_message, first_reply, summary FROM chat_digest_grams "
            "WHERE rowid = (SELECT num FROM search_sessions WHERE session_id = ?)",
            (summarised,),
        ).fetchone()
    assert row == ("缓存讨论  ", "x  ", "y  ", "讨论了缓存策略  ")


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
            forest_module, "UPSERT_HEAD", "INSERT INTO no_such_table VALUES (?, ?, ?)"
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
    names = [name for name, _ in migrations.MIGRATIONS]
    path = tmp_path / "old.db"
    with monkeypatch.context() as m:
        m.setattr(
            migrations, "MIGRATIONS", migrations.MIGRATIONS[: names.index("session_gram_index")]
        )
        with Forest.open(path, clock=lambda: NOW) as old:
            sid = old.create_session("数据库迁移")
            old.append(sid, "user.message", text("我们的数据库很慢"))
            old.append(sid, "assistant.message", text("plain reply"))
    with Forest.open(path, clock=lambda: NOW) as new:
        assert [h.sequence for h in new.search_session_entries(sid, "数据库")] == [1]
        result = new.search_chats("迁移", now=NOW)
        assert [h.session_id for h in result.hits] == [sid] and result.hits[0].digest_match
        assert [t for _, t in grams_rows(path)] == ["我们的数据库很慢  "]


def test_a_common_short_word_is_found_by_reading_rows(
    forest: Forest, make_chat: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past MAX_GRAM_STARTS listed trigrams, the word is looked for with instr().
    sid = make_chat("Chat", ["数据库很慢", "数据表", "数据集"])
    make_chat("Other", ["没有关系"])
    monkeypatch.setattr(grams, "MAX_GRAM_STARTS", 1)
    result = forest.search_chats("数据", now=NOW)
    assert [h.session_id for h in result.hits] == [sid]
    assert result.hits[0].entry_matches == 3
    both = forest.search_chats("数据 慢", now=NOW)
    assert [h.session_id for h in both.hits] == [sid]


@pytest.mark.parametrize(
    "query", ['数据" OR 库', "数据*", "NEAR(数据 库)", "数据库 -", '"数据库', "数据\x00库", "库^"]
)
def test_fts_syntax_in_a_cjk_query_is_only_text(forest: Forest, make_chat: Any, query: str) -> None:
    sid = make_chat("Chat", ["我们的数据库很慢"])
    forest.search_chats(query, now=NOW)  # never raises
    forest.search_session_entries(sid, query)


def test_scripts_and_excerpts() -> None:
    assert spaceless("数据") and spaceless("カナ") and spaceless("한글") and spaceless("ไทย")
    assert not spaceless("plain — “café” ✅ Ελληνικά")
    assert excerpt("我们的数据库很慢  ", ["数据库"]) == "我们的**数据库**很慢"
    assert excerpt("use SQLite here", ["sqlite"]) == "use **SQLite** here"
    long = "前" * 100 + "数据库" + "后" * 100
    cut = excerpt(long, ["数据库"], width=20)
    assert cut.startswith("…") and cut.endswith("…") and "**数据库**" in cut
    assert len(cut.replace("**", "")) == 22
