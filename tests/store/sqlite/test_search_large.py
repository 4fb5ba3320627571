"""Payloads over 1 MiB are indexed from Python, to the same text the triggers would give.

`entry_text` is checked against TEXT_OF run by SQLite on the same payloads;
each writer (append, append_many, the importers' bulk writer, native JSONL)
is checked to index a large entry so search finds it and the chat digest
opens with it, as a small one is.
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessionforest import Forest
from sessionforest.store.sqlite.search import large, schema
from sessionforest.store.sqlite.search.schema import GRAM_PAD

BIG = large.LARGE_PAYLOAD + 1000
PAYLOADS: list[tuple[str, Any]] = [
    ("user.message", {"content": [{"type": "text", "text": "hello"}]}),
    (
        "user.message",
        {
            "content": [
                {"type": "text", "text": "a"},
                {"type": "image", "url": "u"},
                {"type": "text", "text": "b"},
            ]
        },
    ),
    ("assistant.message", {"content": []}),
    (
        "assistant.message",
        {"content": [{"type": "tool_call", "id": "1", "name": "x", "input": {"text": "not this"}}]},
    ),
    ("user.prompt", {"text": "legacy flat text"}),
    ("user.message", {"content": "a string", "text": "the fallback"}),
    ("user.message", {"content": {"a": {"type": "text", "text": "in an object"}}}),
    (
        "user.message",
        {
            "content": [
                {"type": "text", "text": 5},
                {"type": "text", "text": None},
                {"type": "text", "text": 1.5},
                {"type": "text", "text": True},
                {"type": "text", "text": ""},
            ]
        },
    ),
    ("checkpoint", {"label": "same", "summary": "same"}),
    ("checkpoint", {"label": "l", "summary": "s"}),
    ("checkpoint", {"label": "only"}),
    ("compaction", {"summary": "compacted", "first_kept_entry_id": None}),
    ("branch.summary", {"summary": None}),
    ("worker.result", {"summary": "done"}),
]


def _sql_text(kind: str, payload: Any) -> Any:
    with sqlite3.connect(":memory:") as conn:
        expr = schema.TEXT_OF.format(k="?1", p="?2")
        return conn.execute(f"SELECT {expr}", (kind, orjson.dumps(payload).decode())).fetchone()[0]


@pytest.mark.parametrize(("kind", "payload"), PAYLOADS)
def test_entry_text_is_what_the_triggers_index(kind: str, payload: Any) -> None:
    assert large.entry_text(kind, payload) == _sql_text(kind, payload)


# No NUL: SQLite's JSON functions cut a string at one ("ab\u0000cd" -> "ab"), where
# the Python path keeps the whole text, so a large entry can only be found by more.
_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=8,
)
_block = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "thinking"])},
    optional={"text": st.one_of(_text, st.integers(-5, 5), st.none())},
)


@settings(max_examples=200, deadline=None)
@given(blocks=st.lists(_block, max_size=4), flat=st.one_of(st.none(), _text))
def test_entry_text_matches_sql_for_any_blocks(blocks: list[dict[str, Any]], flat: Any) -> None:
    payload: dict[str, Any] = {"content": blocks}
    if flat is not None:
        payload["text"] = flat
    assert large.entry_text("user.message", payload) == _sql_text("user.message", payload)


def _message(word: str) -> dict[str, Any]:
    filler = " ".join(f"filler{i % 997}" for i in range(BIG // 10))
    return {"content": [{"type": "text", "text": f"{word} opens this\n{filler}\nand {word}"}]}


def _indexed(forest: Forest, session_id: str, word: str) -> tuple[int, str]:
    """(hits for `word` in the session, the digest's first message)."""
    hits = forest.search_session_entries(session_id, word)
    with sqlite3.connect(forest.path) as conn:
        first = conn.execute(
            "SELECT first_message FROM chat_digest_fts WHERE rowid = "
            "(SELECT num FROM search_sessions WHERE session_id = ?)",
            (session_id,),
        ).fetchone()[0]
        stored = conn.execute(
            f"SELECT count(*) FROM session_entry_fts WHERE session_id = ? "
            f"AND text = (SELECT {schema.TEXT_OF.format(k='e.kind', p='e.payload')} "
            "FROM session_entries e WHERE e.session_id = ? AND e.sequence = 1)",
            (session_id, session_id),
        ).fetchone()[0]
    assert stored == 1, "the index holds exactly the text TEXT_OF gives"
    return len(hits), first


def test_append_and_append_many_index_a_large_message(forest: Forest) -> None:
    one = forest.create_session("one")
    message = _message("zanzibar")
    forest.append(one, "user.message", message, stamp=None)
    assert _indexed(forest, one, "zanzibar") == (1, message["content"][0]["text"][:2000])
    many = forest.create_session("many")
    forest.append_many(many, [("user.message", _message("quixotic"), None)])
    hits, first = _indexed(forest, many, "quixotic")
    assert hits == 1 and first.startswith("quixotic opens this") and len(first) == 2000


def test_an_import_indexes_a_large_message_like_a_small_one(forest: Forest, tmp_path: Path) -> None:
    record = {"type": "user", "uuid": "u1", "parentUuid": None,
              "timestamp": "2025-01-01T00:00:00Z", "sessionId": "big",
              "message": {"role": "user", "content": _message("xylophone")["content"]}}  # fmt: skip
    answer = {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
    reply = {"type": "assistant", "uuid": "a1", "parentUuid": "u1",
             "timestamp": "2025-01-01T00:00:01Z", "message": answer}  # fmt: skip
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps(reply) + "\n")
    [chat] = forest.import_chats("claude-code", path).chats
    hits, first = _indexed(forest, chat.session_id, "xylophone")
    assert hits == 1 and first.startswith("xylophone opens this")
    assert forest.search_chats("xylophone").hits[0].session_id == chat.session_id

    native = tmp_path / "native.jsonl"
    with native.open("w") as out:
        forest.export_jsonl(chat.session_id, out)
    other = Forest.open(tmp_path / "other.db")
    sid = other.import_jsonl(native)
    assert _indexed(other, sid, "xylophone") == (hits, first)
    out = io.StringIO()
    other.export_jsonl(sid, out)
    assert out.getvalue() == native.read_text()
    other.close()


def test_a_large_message_in_a_spaceless_script_reaches_the_trigram_index(
    forest: Forest,
) -> None:
    sid = forest.create_session("cjk")
    clause = "我们的数据库很慢，"
    text = clause * (BIG // len(clause.encode()) + 1)
    forest.append(sid, "user.message", {"content": [{"type": "text", "text": text}]}, stamp=None)
    summary = {"summary": "总结：" + text, "first_kept_entry_id": None}
    forest.append(sid, "compaction", summary, stamp=None)
    hits = forest.search_session_entries(sid, "数据库")
    assert sorted(h.sequence for h in hits) == [1, 2]
    with sqlite3.connect(forest.path) as conn:
        rows = conn.execute("SELECT text FROM session_entry_grams ORDER BY rowid").fetchall()
        digest = conn.execute("SELECT first_message, summary FROM chat_digest_grams").fetchall()
    assert [r[0] for r in rows] == [text + GRAM_PAD, "总结：" + text + GRAM_PAD]
    assert digest == [(text[:2000] + GRAM_PAD, "总结：" + text + GRAM_PAD)]
