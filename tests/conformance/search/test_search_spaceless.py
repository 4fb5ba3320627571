"""Scripts written without spaces (Chinese, Japanese, Korean, Thai): a word is
found inside a clause, by recall and by find.

How the SQLite backend does it (its trigram tables) is pinned in
tests/store/sqlite/test_search_trigrams.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import Forest

from .conftest import NOW

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
    # Chats holding only one of them may follow (AND found fewer than asked for),
    # never before a chat holding both.
    assert both in found[:5] and latin not in found[:5] and cjk not in found[:5]
    found = [h.session_id for h in forest.search_chats("sqlite 数据库", now=NOW, limit=5).hits]
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


def test_a_cjk_title_and_summary_find_the_chat(
    forest: Forest, harness: Harness, make_chat: Any
) -> None:
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
    harness.update_row(forest, "sessions", titled, title="Performance")
    harness.update_row(forest, "sessions", summarised, title="缓存讨论")
    assert forest.search_chats("优化", now=NOW).hits == ()
    result = forest.search_chats("讨论", now=NOW)
    assert [h.session_id for h in result.hits] == [summarised]


@pytest.mark.parametrize(
    "query", ['数据" OR 库', "数据*", "NEAR(数据 库)", "数据库 -", '"数据库', "数据\x00库", "库^"]
)
def test_fts_syntax_in_a_cjk_query_is_only_text(forest: Forest, make_chat: Any, query: str) -> None:
    sid = make_chat("Chat", ["我们的数据库很慢"])
    forest.search_chats(query, now=NOW)  # never raises
    forest.search_session_entries(sid, query)
