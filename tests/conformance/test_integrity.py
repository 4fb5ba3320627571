"""`check`: damaged sessions are reported and quarantined; siblings keep working."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from sessionforest import Forest, SessionDamaged, SessionQuarantined


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def raw(forest: Forest, sql: str, *args: Any) -> None:
    """Damage the store behind the forest's back, as a buggy tool or disk might."""
    conn = sqlite3.connect(forest.path)
    conn.execute(sql, args)
    conn.commit()
    conn.close()


def insert(forest: Forest, sid: str, eid: str, parent: str | None, seq: int) -> None:
    raw(
        forest,
        "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
        "semantic_schema_version, kind, payload, context_visibility, created_at) "
        "VALUES (?, ?, ?, ?, 2, 'user.message', "
        '\'{"content":[{"type":"text","text":"x"}]}\', \'context\', \'t\')',
        eid,
        sid,
        parent,
        seq,
    )


@pytest.fixture
def healthy(forest: Forest) -> str:
    sid = forest.create_session(title="healthy")
    for i in range(3):
        forest.append(sid, "user.message", user(str(i)))
    return sid


def test_a_healthy_store_checks_ok(forest: Forest, healthy: str) -> None:
    report = forest.check()
    assert report.ok
    assert (report.sessions_checked, report.entries_checked) == (1, 3)


def _damage_orphan(forest: Forest, sid: str) -> None:
    insert(forest, sid, "o1", None, 1)
    insert(forest, sid, "o2", "vanished", 2)
    raw(forest, "INSERT INTO session_heads VALUES (?, 'o2', 't')", sid)


def _damage_cross_session(forest: Forest, sid: str, other: str) -> None:
    foreign = forest.active_path(other)[0].id
    insert(forest, sid, "c1", foreign, 1)
    raw(forest, "INSERT INTO session_heads VALUES (?, 'c1', 't')", sid)


def _damage_cycle(forest: Forest, sid: str) -> None:
    insert(forest, sid, "y1", "y2", 1)
    insert(forest, sid, "y2", "y1", 2)
    raw(forest, "INSERT INTO session_heads VALUES (?, 'y2', 't')", sid)


def _damage_head(forest: Forest, sid: str) -> None:
    forest.append(sid, "user.message", user("fine entry"))
    raw(forest, "UPDATE session_heads SET active_entry_id = 'ghost' WHERE session_id = ?", sid)


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        (_damage_orphan, "orphan-parent"),
        (_damage_cross_session, "cross-session-parent"),
        (_damage_cycle, "cycle"),
        (_damage_head, "invalid-head"),
    ],
)
def test_damage_is_reported_and_quarantined_without_affecting_siblings(
    forest: Forest, healthy: str, damage: Any, code: str
) -> None:
    sid = forest.create_session(title="damaged")
    if damage is _damage_cross_session:
        damage(forest, sid, healthy)
    else:
        damage(forest, sid)
    # Before check, traversal already refuses the broken tree instead of looping or lying.
    with pytest.raises(SessionDamaged):
        forest.active_path(sid)
    report = forest.check()
    assert not report.ok
    assert {p.code for p in report.problems} == {code}
    assert {p.session_id for p in report.problems} == {sid}
    assert report.quarantined == (sid,)
    for read in (forest.active_path, forest.entries, forest.head, forest.tips):
        with pytest.raises(SessionQuarantined) as err:
            read(sid)
        assert err.value.session_id == sid and code in err.value.reason
    with pytest.raises(SessionQuarantined):
        forest.append(sid, "user.message", user("more"))
    # The sibling is untouched: readable and appendable.
    assert len(forest.active_path(healthy)) == 3
    forest.append(healthy, "user.message", user("still fine"))
    assert forest.session(healthy).quarantine is None


def test_a_repaired_session_is_released_by_the_next_check(forest: Forest) -> None:
    sid = forest.create_session()
    good = forest.append(sid, "user.message", user("ok"))
    raw(forest, "UPDATE session_heads SET active_entry_id = 'ghost' WHERE session_id = ?", sid)
    assert not forest.check().ok
    with pytest.raises(SessionQuarantined):
        forest.head(sid)
    raw(forest, "UPDATE session_heads SET active_entry_id = ? WHERE session_id = ?", good.id, sid)
    assert forest.check().ok
    assert forest.head(sid) == good.id
