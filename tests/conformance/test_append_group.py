"""Group commit: several appends in one transaction, each still all or nothing."""

from __future__ import annotations

import pytest

from sessionforest import Forest, HeadMoved, InvalidPayload, UnknownSession
from sessionforest.forest import AppendRequest

TEXT = {"content": [{"type": "text", "text": "hello"}]}


def test_a_failing_append_leaves_the_others_committed(forest: Forest) -> None:
    a, b = forest.create_session(), forest.create_session()
    first = forest.append(a, "user.message", TEXT)
    results = forest.append_group(
        [
            AppendRequest(a, "user.message", TEXT),
            AppendRequest(b, "user.message", {"content": [{"type": "text", "text": 3}]}),
            AppendRequest(b, "user.message", TEXT, expect_head="01elsewhere"),
            AppendRequest(a[:-1] + ("y" if a.endswith("x") else "x"), "user.message", TEXT),
            AppendRequest(b, "user.message", TEXT, expect_head=None),
            AppendRequest(a, "assistant.message", TEXT),
        ]
    )
    kinds = [type(r).__name__ for r in results]
    assert kinds == ["Entry", "InvalidPayload", "HeadMoved", "UnknownSession", "Entry", "Entry"]
    assert isinstance(results[1], InvalidPayload) and results[1].field == "content[0].text"
    assert isinstance(results[2], HeadMoved) and isinstance(results[3], UnknownSession)
    assert results[3].suggestions  # a near miss names the ids one typo away, as append does
    stored_a = forest.entries(a)
    assert [e.sequence for e in stored_a] == [1, 2, 3]
    assert [e.parent_id for e in stored_a] == [None, first.id, stored_a[1].id]
    assert forest.head(a) == stored_a[2].id == results[5].id  # type: ignore[union-attr]
    assert [e.id for e in forest.entries(b)] == [results[4].id]  # type: ignore[union-attr]
    assert forest.entry(a, results[0].id) == results[0]  # type: ignore[union-attr]


def test_a_store_error_raises_for_all(tmp_path: object) -> None:
    from pathlib import Path

    db = Path(str(tmp_path)) / "s.db"
    with Forest.open(db) as forest:
        sid = forest.create_session()
    with Forest.open(db, readonly=True) as reader, pytest.raises(Exception) as err:
        reader.append_group([AppendRequest(sid, "user.message", TEXT)])
    assert type(err.value).__name__ == "StoreReadOnly"
