"""`repair`: re-link what can be re-linked, never touch an entry, release only when clean.

Every store here is damaged behind the forest's back (past the database's
guards, through the harness), as a buggy tool or disk might.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.backends import Harness
from sessionforest import Forest, RepairReport, SessionQuarantined, UnknownSession

T = "2025-01-02T00:00:00.000Z"
# What a recreated session row is called, on every backend.
RECOVERED_TITLE = "(recovered session)"


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def rows(harness: Harness, forest: Forest, table: str = "session_entries") -> list[dict[str, Any]]:
    return harness.dump(forest, table)[table]


def insert(
    harness: Harness,
    forest: Forest,
    sid: str,
    eid: str,
    parent: str | None,
    seq: int,
    version: int = 2,
) -> None:
    harness.add_entry(forest, sid, eid, parent, seq, version=version, created_at=T)


def set_head(harness: Harness, forest: Forest, sid: str, head: str | None) -> None:
    harness.update_row(forest, "session_heads", sid, active_entry_id=head)


def repaired(harness: Harness, forest: Forest, sid: str) -> RepairReport:
    """Repair, asserting the one promise every case shares: no entry was touched."""
    before = rows(harness, forest)
    report = forest.repair(sid)
    assert rows(harness, forest) == before
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


def test_a_deleted_session_row_is_recreated_and_released(
    forest: Forest, harness: Harness, branched: Any
) -> None:
    sid = branched["sid"]
    harness.delete_session_row(forest, sid)
    assert not forest.check().ok
    report = repaired(harness, forest, sid)
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


def test_a_recreated_row_with_a_broken_head_gets_both_fixed(
    forest: Forest, harness: Harness, branched: Any
) -> None:
    sid = branched["sid"]
    set_head(harness, forest, sid, "ghost")
    harness.delete_session_row(forest, sid)
    report = repaired(harness, forest, sid)
    assert [a.code for a in report.actions] == ["recreated-session-row", "moved-head"]
    assert report.released and forest.head(sid) == branched["c"]


@pytest.mark.parametrize("broken", ["ghost", "foreign"])
def test_a_broken_head_moves_to_the_newest_intact_entry(
    forest: Forest, harness: Harness, branched: Any, broken: str
) -> None:
    sid = branched["sid"]
    other = forest.create_session()
    foreign = forest.append(other, "user.message", user("elsewhere")).id
    target = "ghost" if broken == "ghost" else foreign
    set_head(harness, forest, sid, target)
    forest.check()
    with pytest.raises(SessionQuarantined):
        forest.head(sid)
    report = repaired(harness, forest, sid)
    assert [a.code for a in report.actions] == ["moved-head"]
    detail = report.actions[0].detail
    assert target in detail and branched["c"] in detail and "sequence 4" in detail
    if broken == "foreign":
        assert f"an entry of session {other}" in detail
    assert report.released and report.ok
    assert forest.head(sid) == branched["c"]  # the newest entry, on another branch than b
    assert forest.head(other) == foreign


def test_entries_without_a_head_get_one(forest: Forest, harness: Harness, branched: Any) -> None:
    sid = branched["sid"]
    harness.delete_row(forest, "session_heads", sid)
    report = repaired(harness, forest, sid)
    assert [a.code for a in report.actions] == ["set-head"]
    assert "had entries but no head" in report.actions[0].detail
    assert forest.head(sid) == branched["c"]
    assert not report.released  # check never ran: nothing was fenced off to release


def test_a_dangling_head_of_an_empty_session_is_cleared(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    set_head(harness, forest, sid, "ghost")  # its head row came with the session
    report = repaired(harness, forest, sid)
    assert [a.code for a in report.actions] == ["cleared-head"]
    assert forest.head(sid) is None and report.ok


def test_the_head_skips_entries_whose_path_is_broken(
    forest: Forest, harness: Harness, branched: Any
) -> None:
    # Newer than every intact entry, but below a missing parent / inside a cycle /
    # below an unreadable entry: none of them may become the head.
    sid = branched["sid"]
    insert(harness, forest, sid, "orphan", "vanished", 5)
    insert(harness, forest, sid, "below-orphan", "orphan", 6)
    insert(harness, forest, sid, "future", branched["c"], 7, version=99)
    insert(harness, forest, sid, "below-future", "future", 8)
    insert(harness, forest, sid, "loop1", "loop2", 9)
    insert(harness, forest, sid, "loop2", "loop1", 10)
    set_head(harness, forest, sid, "ghost")
    report = repaired(harness, forest, sid)
    assert [a.code for a in report.actions] == ["moved-head"]
    assert forest.session(sid).head == branched["c"]
    # The entries themselves stay as they were, and so does the quarantine.
    assert [(u.code, u.entry_id) for u in report.unrepaired] == [
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
    forest: Forest, harness: Harness, branched: Any, damage: str, code: str, why: str
) -> None:
    sid = branched["sid"]
    other = forest.create_session()
    foreign = forest.append(other, "user.message", user("elsewhere")).id
    if damage == "orphan":
        insert(harness, forest, sid, "x", "vanished", 5)
    elif damage == "cross":
        insert(harness, forest, sid, "x", foreign, 5)
    elif damage == "cycle":
        insert(harness, forest, sid, "x", "y", 5)
        insert(harness, forest, sid, "y", "x", 6)
    elif damage == "gap":
        insert(harness, forest, sid, "x", branched["c"], 9)
    else:
        insert(harness, forest, sid, "x", branched["c"], 5, version=99)
    heads_before = rows(harness, forest, "session_heads")
    report = repaired(harness, forest, sid)
    assert report.actions == ()  # the head (b) is valid: nothing to re-link
    assert rows(harness, forest, "session_heads") == heads_before
    assert [u.code for u in report.unrepaired] == [code]
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


def test_a_head_with_no_intact_entry_to_move_to_is_left_and_explained(
    forest: Forest, harness: Harness
) -> None:
    sid = forest.create_session()
    insert(harness, forest, sid, "x", "vanished", 1)
    set_head(harness, forest, sid, "ghost")  # its head row came with the session
    report = repaired(harness, forest, sid)
    assert report.actions == ()
    assert rows(harness, forest, "session_heads")[0]["active_entry_id"] == "ghost"
    left = {u.code: u.why for u in report.unrepaired}
    assert set(left) == {"orphan-parent", "invalid-head"}
    assert "no entry of this session has an intact path" in left["invalid-head"]


def test_a_healthy_session_needs_nothing_and_a_hand_fixed_one_is_released(
    forest: Forest, harness: Harness, branched: Any
) -> None:
    sid = branched["sid"]
    heads = rows(harness, forest, "session_heads")
    report = repaired(harness, forest, sid)
    assert (report.actions, report.unrepaired, report.released, report.ok) == ((), (), False, True)
    assert rows(harness, forest, "session_heads") == heads
    harness.set_quarantine(forest, sid, "fixed by hand since")
    assert repaired(harness, forest, sid).released
    assert forest.session(sid).quarantine is None


def test_repair_judges_only_its_session(forest: Forest, harness: Harness, branched: Any) -> None:
    sid = branched["sid"]
    other = forest.create_session()
    insert(harness, forest, other, "x", "vanished", 1)
    harness.point_head(forest, other, "x")
    set_head(harness, forest, sid, "ghost")
    forest.check()
    report = repaired(harness, forest, sid)
    assert report.released and report.ok
    assert forest.session(other).quarantine is not None


def test_an_unknown_session_is_refused(forest: Forest) -> None:
    with pytest.raises(UnknownSession):
        forest.repair("nobody")


def test_the_report_as_json(forest: Forest, harness: Harness, branched: Any) -> None:
    sid = branched["sid"]
    insert(harness, forest, sid, "x", "vanished", 5)
    set_head(harness, forest, sid, "ghost")
    doc = repaired(harness, forest, sid).to_json()
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
    forest: Forest, harness: Harness, parents: list[int], damage: list[str]
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
            insert(harness, forest, sid, f"{sid}-orphan", "vanished", seq)
        elif kind == "future":
            seq += 1
            insert(harness, forest, sid, f"{sid}-future", ids[-1], seq, version=99)
        elif kind == "ghost-head":
            set_head(harness, forest, sid, "ghost")
        elif kind == "foreign-head":
            set_head(harness, forest, sid, foreign)
        elif kind == "no-head":
            harness.delete_row(forest, "session_heads", sid)
    if "row" in damage:
        harness.delete_session_row(forest, sid)
    report = repaired(harness, forest, sid)  # asserts every entry row is as it was
    fresh = [p for p in forest.check(quarantine=False).problems if p.session_id == sid]
    assert [(u.session_id, u.code, u.entry_id, u.detail) for u in report.unrepaired] == [
        (p.session_id, p.code, p.entry_id, p.detail) for p in fresh
    ]
    # Only damage stored in entries outlives a repair.
    assert report.ok == (not {"orphan", "future"} & set(damage))
    if report.ok:
        assert forest.session(sid).quarantine is None
        path = forest.active_path(sid)
        assert path[0].parent_id is None and path[-1].id == forest.head(sid)
    else:
        assert forest.session(sid).quarantine == report.quarantine is not None
    assert forest.session(other).quarantine is None
