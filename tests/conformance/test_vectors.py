"""The VectorStore contract (the semantic leg's entry vectors), on every backend.

An append embeds nothing and only leaves its chat pending; `pending` hands out
the searchable text of what has no vector, `put` stores vectors and marks them
done, a chat stops being pending only when nothing of it is left (an entry
appended in between keeps it pending), `load` returns what was stored since a
mark, and another model starts over. Then the leg itself: a search by meaning
and the backfill through the facade, with the real model.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from sessionforest import Forest

MODEL = "test-model"
NOW = datetime(2026, 9, 30, 12, tzinfo=UTC)


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def vectors_of(forest: Forest) -> Any:
    store = forest._backend.vectors
    assert store is not None
    forest.search_chats("x", now=NOW)  # the full-text index catches up (SQLite notes then)
    return store


def blob(i: int) -> bytes:
    return bytes([i]) * 8


def test_an_append_leaves_its_chat_pending_and_put_settles_it(forest: Forest) -> None:
    a = forest.create_session("a", "codex")
    forest.append(a, "user.message", user("first words"), stamp=None)
    forest.append(a, "tool.started", {"call_id": "c1", "name": "ls", "input": {}}, stamp=None)
    forest.append(a, "assistant.message", user("second words"), stamp=None)
    store = vectors_of(forest)
    assert store.waiting() == 1
    pending = store.pending(MODEL, 10)
    assert [text for _, text in pending.rows] == ["first words", "second words"]
    keys = [key for key, _ in pending.rows]
    assert len({key >> 32 for key in keys}) == 1 and keys == sorted(keys)
    store.put(MODEL, [(keys[0], blob(1))], keys[:1])
    assert store.waiting() == 1  # the second entry is still without a vector
    assert [text for _, text in store.pending(MODEL, 10).rows] == ["second words"]
    forest.append(a, "user.message", user("third words"), stamp=None)
    store = vectors_of(forest)
    store.put(MODEL, [(keys[1], blob(2))], keys[1:])
    assert store.waiting() == 1  # appended in between: not lost
    [(third, text)] = store.pending(MODEL, 10).rows
    assert text == "third words"
    store.put(MODEL, [(third, blob(3))], [third])
    assert store.waiting() == 0
    assert store.pending(MODEL, 10).rows == []
    mark, rows = store.load(MODEL, 0)
    assert rows == [(keys[0], blob(1)), (keys[1], blob(2)), (third, blob(3))]
    assert store.load(MODEL, mark) == (mark, [])
    # A load in chunks: the first ones, then from the mark of the last one returned.
    first_mark, first = store.load(MODEL, 0, 2)
    assert first == rows[:2]
    assert store.load(MODEL, first_mark, 2) == (mark, rows[2:])
    assert store.load("another-model", 0) == (0, [])


def test_a_limit_splits_the_work_and_another_model_starts_over(forest: Forest) -> None:
    for n in range(3):
        sid = forest.create_session(f"chat {n}", "codex")
        for i in range(3):
            forest.append(sid, "user.message", user(f"line {n}.{i}"), stamp=None)
    store = vectors_of(forest)
    done = 0
    while True:
        pending = store.pending(MODEL, 4)
        if not pending.rows:
            store.put(MODEL, [], [], pending.idle)
            break
        assert len(pending.rows) <= 4
        store.put(MODEL, [(k, blob(1)) for k, _ in pending.rows], [k for k, _ in pending.rows])
        done += len(pending.rows)
    assert done == 9 and store.waiting() == 0
    assert len(store.load(MODEL, 0)[1]) == 9
    # Another model: every chat is pending for it; its first put drops every
    # vector of the old one and notes every chat again.
    assert len(store.pending("other", 100).rows) == 9
    store.put("other", [], [])
    assert store.load(MODEL, 0) == (0, []) and store.waiting() == 3
    assert len(store.pending("other", 100).rows) == 9


@pytest.mark.semantic
def test_the_leg_finds_by_meaning_and_backfills_on_every_backend(forest: Forest) -> None:
    garden = forest.create_session("Greenhouse", "codex")
    forest.append(garden, "user.message", user("my tomatoes wilt every afternoon"), stamp=None)
    audio = forest.create_session("Bluetooth", "codex")
    forest.append(audio, "user.message", user("sound comes late in my headphones"), stamp=None)
    assert forest.semantic
    found = forest.search_chats("vegetables drooping", now=NOW)
    assert found.hits[0].session_id == garden and not found.confident
    assert forest.index_semantic() == (0, 0)
