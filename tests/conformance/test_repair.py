"""`repair`: re-link what can be re-linked, never touch an entry, release only when clean.

Every store here is damaged with raw SQL behind the forest's back (dropping
the trigger that guards what is damaged), as a buggy tool or disk might.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessionforest import Forest, RepairReport, SessionQuarantined, UnknownSession
from sessionforest.rules.integrity import RECOVERED_TITLE


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def raw(forest: Forest, sql: str, *args: Any) -> None:
    conn = sqlite3.connect(forest.path)
    conn.execute(sql, args)
    conn.commit()
    conn.close()


def rows(forest: Forest, table: str = "session_entries") -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(forest.path)
    found = conn.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
    conn.close()
    return found


def insert(
    forest: Forest, sid: str, eid: str, parent: str | None, seq: int, version: int = 2
) -> None:
    raw(
        forest,
        "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
        "semantic_schema_version, kind, payload, context_visibility, created_at) "
        "VALUES (?, ?, ?, ?, ?, 'user.message', "
        '\'{"content":[{"type":"text","text":"x"}]}\', \'context\', \'2025-01-02T00:00:00.000Z\')',
        eid,
        sid,
        parent,
        seq,
        version,
    )


def set_head(forest: Forest, sid: str, head: str | None) -> None:
    raw(forest, "UPDATE session_heads SET active_entry_id = ? WHERE session_id = ?", head, sid)


def delete_session_row(forest: Forest, sid: str) -> None:
    raw(forest, "DROP TRIGGER IF EXISTS sessions_no_delete")
    raw(forest, "DELETE FROM sessions WHERE id = ?", sid)


def repaired(forest: Forest, sid: str) -> RepairReport:
    """Repair, asserting the one promise every case shares: no entry was touched."""
    before = rows(forest)
    report = forest.repair(sid)
    assert rows(forest) == before
    return report


@pytest.fixture
def branched(forest: Forest) -> dict[str, Any]:
    """root -> a -> b (tip), and root -> c (the newest entry, another tip); head at b."""
    sid = forest.create_session(title="branched")
    ids: dict[str, Any] = {"sid": sid}
    ids["root"] = forest.append(sid, "user.message", user("root")).id
    ids["a"] = forest.append(sid, "user.message", user("a")).id
    ids["b"] = forest.append(sid, "user.message", user("b")).id
    ids["c"] = forest.append(sid, "user.message", user("c"), parent=ids["root"]).id
    forest.move_head(sid, ids["b"])
    return ids


def test_a_deleted_session_row_is_recreated_and_released(forest: Forest, branched: Any) -> None:
    sid = branched["sid"]
    delete_session_row(forest, sid)
    assert not forest.check().ok
    report = repaired(forest, sid)
    assert [a.code for a in report.actions] == ["recreated-session-row"]
    assert "title, harness, directory, status and import source" in report.actions[0].detail
    assert (report.ok, report.released, report.quarantine, report.unrepaired) == (
        True,
        True,
        None,
        (),
    )
    info = forest.session(sid)
    assert (info.title, info.cwd, info.quarantine, info.head) == (
        RECOVERED_TITLE,
        None,
        None,
        branched["b"],
    )
    assert info.created_at == forest.entries(sid)[0].created_at
    assert [e.id for e in forest.active_path(sid)] == [branched[k] for k in ("root", "a", "b")]
    forest.append(sid, "user.message", user("back in business"))
    assert forest.check().ok


def test_a_recreated_row_with_a_broken_head_gets_both_fixed(forest: Forest, branched: Any) -> None:
    sid = branched["sid"]
    set_head(forest, sid, "ghost")
    delete_session_row(forest, sid)
    report = repaired(forest, sid)
    assert [a.code for a in report.actions] == ["recreated-session-row", "moved-head"]
    assert report.released and forest.head(sid) == branched["c"]


@pytest.mark.parametrize("broken", ["ghost", "foreign"])
def test_a_broken_head_moves_to_the_newest_intact_entry(
    forest: Forest, branched: Any, broken: str
) -> None:
    sid = branched["sid"]
    other = forest.create_session()
    foreign = forest.append(other, "user.message", user("elsewhere")).id
    target = "ghost" if broken == "ghost" else foreign
    set_head(forest, sid, target)
    forest.check()
    with pytest.raises(SessionQuarantined):
        forest.head(sid)
    report = repaired(forest, sid)
    assert [a.code for a in report.actions] == ["moved-head"]
    detail = report.actions[0].detail
    assert target in detail and branched["c"] in detail and "sequence 4" in detail
    if broken == "foreign":
        assert f"an entry of session {other}" in detail
    assert report.released and report.ok
    assert forest.head(sid) == branched["c"]  # the newest entry, on another branch than b
    assert forest.head(other) == foreign


def test_entries_without_a_head_get_one(forest: Forest, branched: Any) -> None:
    sid = branched["sid"]
    raw(forest, "DELETE FROM session_heads WHERE session_id = ?", sid)
    report = repaired(forest, sid)
    assert [a.code for a in report.actions] == ["set-head"]
    assert "had entries but no head" in report.actions[0].detail
    assert forest.head(sid) == branched["c"]
    assert not report.released  # check never ran: nothing was fenced off to release


def test_a_dangling_head_of_an_empty_session_is_cleared(forest: Forest) -> None:
    sid = forest.create_session()
    raw(forest, "INSERT INTO session_heads VALUES (?, 'ghost', 't')", sid)
    report = repaired(forest, sid)
    assert [a.code for a in report.actions] == ["cleared-head"]
    assert forest.head(sid) is None and report.ok


def test_the_head_skips_entries_whose_path_is_broken(forest: Forest, branched: Any) -> None:
    # Newer than every intact entry, but below a missing parent / inside a cycle /
    # below an unreadable entry: none of them may become the head.
    sid = branched["sid"]
    insert(forest, sid, "orphan", "vanished", 5)
    insert(forest, sid, "below-orphan", "orphan", 6)
    insert(forest, sid, "future", branched["c"], 7, version=99)
    insert(forest, sid, "below-future", "future", 8)
    insert(forest, sid, "loop1", "loop2", 9)
    insert(forest, sid, "loop2", "loop1", 10)
    set_head(forest, sid, "ghost")
    report = repaired(forest, sid)
    assert [a.code for a in report.actions] == ["moved-head"]
    assert forest.session(sid).head == branched["c"]
    # The entries themselves stay as they were, and so does the quarantine.
    assert [(u.problem.code, u.problem.entry_id) for u in report.unrepaired] == [
        ("orphan-parent", "orphan"),
        ("unsupported-version", "future"),
        ("cycle", "loop1"),
    ]
    assert not report.ok and not report.released
    assert report.quarantine == "orphan-parent at orphan: parent vanished does not exist"
    with pytest.raises(SessionQuarantined):
        forest.head(sid)


@pytest.mark.parametrize(
    ("damage", "code", "why"),
    [
        ("orphan", "orphan-parent", "parent is gone"),
        ("cross", "cross-session-parent", "belongs to another session"),
        ("cycle", "cycle", "own parent links"),
        ("gap", "sequence-gap", "removed or renumbered"),
        ("version", "unsupported-version", "newer sessionforest"),
    ],
)
def test_damage_stored_in_entries_is_reported_with_why_and_stays_quarantined(
    forest: Forest, branched: Any, damage: str, code: str, why: str
) -> None:
    sid = branched["sid"]
    other = forest.create_session()
    foreign = forest.append(other, "user.message", user("elsewhere")).id
    if damage == "orphan":
        insert(forest, sid, "x", "vanished", 5)
    elif damage == "cross":
        insert(forest, sid, "x", foreign, 5)
    elif damage == "cycle":
        insert(forest, sid, "x", "y", 5)
        insert(forest, sid, "y", "x", 6)
    elif damage == "gap":
        insert(forest, sid, "x", branched["c"], 9)
    else:
        insert(forest, sid, "x", branched["c"], 5, version=99)
    heads_before = rows(forest, "session_heads")
    report = repaired(forest, sid)
    assert report.actions == ()  # the head (b) is valid: nothing to re-link
    assert rows(forest, "session_heads") == heads_before
    assert [u.problem.code for u in report.unrepaired] == [code]
    assert why in report.unrepaired[0].why
    if damage != "version":
        assert "entries are immutable" in report.unrepaired[0].why
    # Repair's own fresh check quarantines it, whether or not `check` ran before.
    assert report.quarantine is not None and report.quarantine.startswith(code)
    assert not report.released
    with pytest.raises(SessionQuarantined):
        forest.active_path(sid)
    # The active branch root -> a -> b is healthy, but the session stays fenced
    # off: `check` would quarantine it again, and listing it meets the damage.
    assert not forest.check().ok
    assert forest.session(other).quarantine is None


def test_a_head_with_no_intact_entry_to_move_to_is_left_and_explained(forest: Forest) -> None:
    sid = forest.create_session()
    insert(forest, sid, "x", "vanished", 1)
    raw(forest, "INSERT INTO session_heads VALUES (?, 'ghost', 't')", sid)
    report = repaired(forest, sid)
    assert report.actions == ()
    assert rows(forest, "session_heads")[0][1] == "ghost"
    left = {u.problem.code: u.why for u in report.unrepaired}
    assert set(left) == {"orphan-parent", "invalid-head"}
    assert "no entry of this session has an intact path" in left["invalid-head"]


def test_a_healthy_session_needs_nothing_and_a_hand_fixed_one_is_released(
    forest: Forest, branched: Any
) -> None:
    sid = branched["sid"]
    heads = rows(forest, "session_heads")
    report = repaired(forest, sid)
    assert (report.actions, report.unrepaired, report.released, report.ok) == ((), (), False, True)
    assert rows(forest, "session_heads") == heads
    raw(forest, "UPDATE sessions SET quarantine = 'fixed by hand since' WHERE id = ?", sid)
    assert repaired(forest, sid).released
    assert forest.session(sid).quarantine is None


def test_repair_judges_only_its_session(forest: Forest, branched: Any) -> None:
    sid = branched["sid"]
    other = forest.create_session()
    insert(forest, other, "x", "vanished", 1)
    raw(forest, "INSERT INTO session_heads VALUES (?, 'x', 't')", other)
    set_head(forest, sid, "ghost")
    forest.check()
    report = repaired(forest, sid)
    assert report.released and report.ok
    assert forest.session(other).quarantine is not None


def test_an_unknown_session_is_refused(forest: Forest) -> None:
    with pytest.raises(UnknownSession):
        forest.repair("nobody")


def test_the_report_as_json(forest: Forest, branched: Any) -> None:
    sid = branched["sid"]
    insert(forest, sid, "x", "vanished", 5)
    set_head(forest, sid, "ghost")
    doc = repaired(forest, sid).to_json()
    assert doc["ok"] is False and doc["released"] is False
    assert doc["session_id"] == sid
    assert doc["actions"][0]["code"] == "moved-head"
    assert doc["unrepaired"][0]["code"] == "orphan-parent"
    assert doc["unrepaired"][0]["entry_id"] == "x"
    assert "immutable" in doc["unrepaired"][0]["why"]
    assert doc["quarantine"].startswith("orphan-parent at x")


# --- a property over random trees and random damage ----------------------------------

DAMAGE = ["row", "ghost-head", "foreign-head", "no-head", "orphan", "future"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parents=st.lists(st.integers(0, 50), min_size=1, max_size=12),
    damage=st.lists(st.sampled_from(DAMAGE), min_size=1, max_size=3, unique=True),
)
def test_repair_never_touches_an_entry_and_ok_means_readable(
    forest: Forest, parents: list[int], damage: list[str]
) -> None:
    sid = forest.create_session()
    other = forest.create_session()
    foreign = forest.append(other, "user.message", user("elsewhere")).id
    ids: list[str] = []
    for pick in parents:  # each entry below a random earlier one (or a new root)
        parent = ids[pick % len(ids)] if ids and pick < 40 else None
        ids.append(forest.append(sid, "user.message", user("x"), parent=parent).id)
    seq = len(ids)
    for kind in damage:
        if kind == "orphan":
            seq += 1
            insert(forest, sid, f"{sid}-orphan", "vanished", seq)
        elif kind == "future":
            seq += 1
            insert(forest, sid, f"{sid}-future", ids[-1], seq, version=99)
        elif kind == "ghost-head":
            set_head(forest, sid, "ghost")
        elif kind == "foreign-head":
            set_head(forest, sid, foreign)
        elif kind == "no-head":
            raw(forest, "DELETE FROM session_heads WHERE session_id = ?", sid)
    if "row" in damage:
        delete_session_row(forest, sid)
    report = repaired(forest, sid)  # asserts every entry row is as it was
    fresh = [p for p in forest.check(quarantine=False).problems if p.session_id == sid]
    assert [u.problem for u in report.unrepaired] == fresh
    # Only damage stored in entries outlives a repair.
    assert report.ok == (not {"orphan", "future"} & set(damage))
    if report.ok:
        assert forest.session(sid).quarantine is None
        path = forest.active_path(sid)
        assert path[0].parent_id is None and path[-1].id == forest.head(sid)
    else:
        assert forest.session(sid).quarantine == report.quarantine is not None
    assert forest.session(other).quarantine is None
