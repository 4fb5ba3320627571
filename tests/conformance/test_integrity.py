"""`check`: damaged sessions are reported and quarantined; siblings keep working."""

from __future__ import annotations

import io
from typing import Any

import pytest

from conformance.backends import Harness, Refused
from sessionforest import (
    Forest,
    InvalidArgument,
    SessionDamaged,
    SessionQuarantined,
    UnknownSession,
    UnsupportedSchemaVersion,
)
from sessionforest.forest import AppendRequest


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


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


def _damage_orphan(harness: Harness, forest: Forest, sid: str) -> None:
    harness.add_entry(forest, sid, "o1", None, 1)
    harness.orphan_parent(forest, sid, "o2", 2)
    harness.point_head(forest, sid, "o2")


def _damage_cross_session(harness: Harness, forest: Forest, sid: str, other: str) -> None:
    foreign = forest.active_path(other)[0].id
    harness.cross_session_parent(forest, sid, "c1", foreign, 1)
    harness.point_head(forest, sid, "c1")


def _damage_cycle(harness: Harness, forest: Forest, sid: str) -> None:
    harness.cycle(forest, sid, "y1", "y2", 1)
    harness.point_head(forest, sid, "y2")


def _damage_head(harness: Harness, forest: Forest, sid: str) -> None:
    forest.append(sid, "user.message", user("fine entry"))
    harness.head_nowhere(forest, sid)


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
    forest: Forest, harness: Harness, healthy: str, damage: Any, code: str
) -> None:
    sid = forest.create_session(title="damaged")
    if damage is _damage_cross_session:
        damage(harness, forest, sid, healthy)
    else:
        damage(harness, forest, sid)
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


def test_a_repaired_session_is_released_by_the_next_check(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    good = forest.append(sid, "user.message", user("ok"))
    harness.update_row(forest, "session_heads", sid, active_entry_id="ghost")
    assert not forest.check().ok
    with pytest.raises(SessionQuarantined):
        forest.head(sid)
    harness.update_row(forest, "session_heads", sid, active_entry_id=good.id)
    assert forest.check().ok
    assert forest.head(sid) == good.id


# --- a session row that is gone ----------------------------------------------------


def entry_rows(harness: Harness, forest: Forest) -> list[dict[str, Any]]:
    return harness.dump(forest, "session_entries")["session_entries"]


@pytest.mark.needs("database_guards")
def test_a_session_row_cannot_be_deleted_or_renamed(
    forest: Forest, harness: Harness, healthy: str
) -> None:
    with pytest.raises(Refused, match="cannot be deleted"):
        harness.delete_row(forest, "sessions", healthy)
    with pytest.raises(Refused, match="cannot change"):
        harness.update_row(forest, "sessions", healthy, id="renamed")
    harness.update_row(forest, "sessions", healthy, title="still editable")
    assert forest.session(healthy).title == "still editable"
    assert len(forest.active_path(healthy)) == 3


def test_entries_whose_session_row_is_gone_are_reported(
    forest: Forest, harness: Harness, healthy: str
) -> None:
    sid = forest.create_session(title="doomed")
    forest.append(sid, "user.message", user("one"))
    forest.append(sid, "user.message", user("two"))
    harness.delete_session_row(forest, sid)
    report = forest.check()
    assert not report.ok
    assert [(p.session_id, p.code, p.entry_id) for p in report.problems] == [
        (sid, "missing-session", None)
    ]
    assert report.problems[0].detail == "the session row is gone but 2 entries remain"
    assert (report.sessions_checked, report.entries_checked) == (2, 5)
    assert report.quarantined == (sid,)
    assert report.to_json()["problems"][0]["code"] == "missing-session"
    # The missing row is the fence: reads and appends refuse, and a new session
    # with the same id cannot silently adopt the entries.
    with pytest.raises(UnknownSession):
        forest.active_path(sid)
    with pytest.raises(UnknownSession):
        forest.append(sid, "user.message", user("three"))
    with pytest.raises(SessionDamaged, match=f"forest repair {sid}"):
        forest.create_session(title="impostor", session_id=sid)
    assert len(entry_rows(harness, forest)) == 5
    assert forest.session(healthy).quarantine is None
    assert len(forest.active_path(healthy)) == 3


def test_a_head_row_left_by_a_deleted_empty_session_is_reported(
    forest: Forest, harness: Harness
) -> None:
    sid = forest.create_session()  # its head row (no head yet) comes with it
    heads = harness.dump(forest, "session_heads")["session_heads"]
    assert [h["active_entry_id"] for h in heads if h["session_id"] == sid] == [None]
    harness.delete_session_row(forest, sid)
    report = forest.check()
    assert [(p.code, p.detail) for p in report.problems] == [
        ("missing-session", "the session row is gone but its head row remains")
    ]
    with pytest.raises(SessionDamaged):
        forest.create_session(session_id=sid)


def test_entries_without_a_head_are_reported(
    forest: Forest, harness: Harness, healthy: str
) -> None:
    # Reads would show an empty session: every entry hidden.
    harness.delete_row(forest, "session_heads", healthy)
    assert forest.active_path(healthy) == []
    report = forest.check()
    assert [(p.code, p.entry_id, p.detail) for p in report.problems] == [
        ("missing-head", None, "3 entries but no head")
    ]
    with pytest.raises(SessionQuarantined, match="missing-head: 3 entries but no head"):
        forest.head(healthy)


# --- unreadable schema versions ------------------------------------------------------


def insert_version(
    harness: Harness, forest: Forest, sid: str, eid: str, parent: str | None, version: int
) -> None:
    """A row as a newer (or damaged) sessionforest left it, made the head."""
    seq = forest.session(sid).entry_count + 1
    harness.unreadable_version(forest, sid, eid, parent, seq, version, payload={"content": "?"})
    harness.update_row(forest, "session_heads", sid, active_entry_id=eid)


def test_check_flags_entries_of_an_unreadable_schema_version(
    forest: Forest, harness: Harness, healthy: str
) -> None:
    sid = forest.create_session()
    root = forest.append(sid, "user.message", user("fine"))
    insert_version(harness, forest, sid, "v99", root.id, 99)
    report = forest.check()
    assert [(p.session_id, p.code, p.entry_id) for p in report.problems] == [
        (sid, "unsupported-version", "v99")
    ]
    assert "99" in report.problems[0].detail and "readable: 1, 2" in report.problems[0].detail
    assert report.quarantined == (sid,)
    assert forest.session(healthy).quarantine is None


@pytest.mark.parametrize("below", ["head", "parent"])
def test_append_refuses_to_write_below_an_unreadable_entry(
    forest: Forest, harness: Harness, below: str
) -> None:
    sid = forest.create_session()
    root = forest.append(sid, "user.message", user("fine"))
    insert_version(harness, forest, sid, "v99", root.id, 99)
    if below == "parent":  # the head elsewhere; the append names the entry
        forest.move_head(sid, root.id)
    parent = "v99" if below == "parent" else None
    before = entry_rows(harness, forest)
    with pytest.raises(UnsupportedSchemaVersion) as err:
        forest.append(sid, "user.message", user("on top"), parent=parent)
    assert (err.value.entry_id, err.value.version, err.value.session_id) == ("v99", 99, sid)
    assert "refusing to append below" in str(err.value)
    with pytest.raises(UnsupportedSchemaVersion):
        forest.append_many(sid, [("user.message", user("a"), None)], parent=parent)
    assert entry_rows(harness, forest) == before


def test_only_an_ancestor_unreadable_is_fenced_off_by_check(
    forest: Forest, harness: Harness
) -> None:
    # Stores written before append refused it can hold a readable entry below an
    # unreadable one. Append checks only the parent (see forest._checked), so
    # `check` is what finds this and fences the session off.
    sid = forest.create_session()
    root = forest.append(sid, "user.message", user("fine"))
    insert_version(harness, forest, sid, "v99", root.id, 99)
    insert_version(harness, forest, sid, "child", "v99", 2)
    report = forest.check()
    assert [(p.code, p.entry_id) for p in report.problems] == [("unsupported-version", "v99")]
    with pytest.raises(SessionQuarantined, match="unsupported-version at v99"):
        forest.append(sid, "user.message", user("on top"))


@pytest.mark.parametrize("head", ["ghost", "foreign"])
def test_append_at_a_broken_head_writes_nothing(
    forest: Forest, harness: Harness, healthy: str, head: str
) -> None:
    # Before, the new entry named the missing (or foreign) head as its parent.
    sid = forest.create_session()
    forest.append(sid, "user.message", user("fine"))
    target = forest.head(healthy) if head == "foreign" else "ghost"
    if head == "foreign":
        harness.head_elsewhere(forest, sid, target)
    else:
        harness.head_nowhere(forest, sid, target)
    before = entry_rows(harness, forest)
    with pytest.raises(SessionDamaged, match=f"head {target}"):
        forest.append(sid, "user.message", user("lost"))
    assert entry_rows(harness, forest) == before


@pytest.mark.parametrize("bad", ["zzzz", "<script>", "2024-13-45T00:00:00Z", ""])
def test_created_at_must_be_a_time(forest: Forest, harness: Harness, bad: str) -> None:
    # Before: "zzzz" and "<script>" were stored, `check` said ok, exports then failed.
    before = harness.dump(forest, "sessions", "session_entries")
    with pytest.raises(InvalidArgument, match="created_at"):
        forest.create_session("t", created_at=bad)
    sid = forest.create_session("t", created_at="2024-05-01T10:00:00+02:00")
    assert forest.session(sid).created_at == "2024-05-01T08:00:00.000Z"  # the stored form
    with pytest.raises(InvalidArgument, match="created_at"):
        forest.append(sid, "user.message", user("x"), created_at=bad)
    [refused] = forest.append_group([AppendRequest(sid, "user.message", user("x"),
                                                   created_at=bad)])  # fmt: skip
    assert isinstance(refused, InvalidArgument)
    assert forest.entries_after(sid, 0, 10) == []
    after = harness.dump(forest, "session_entries")
    assert after == harness.dump(forest, "session_entries") and before is not None


def test_check_reports_a_stored_time_it_cannot_read(forest: Forest, harness: Harness) -> None:
    # As a writer that did not check left them (entries are immutable: inserted so).
    sid = forest.create_session("t")
    harness.add_entry(forest, sid, "bad", None, 1, created_at="zzzz")
    harness.point_head(forest, sid, "bad")
    harness.update_row(forest, "sessions", sid, created_at="<script>")
    report = forest.check()
    found = {(p.code, p.entry_id, p.detail) for p in report.problems}
    assert found == {
        ("bad-time", "bad", "the entry's created_at 'zzzz' is not an ISO 8601 time"),
        ("bad-time", None, "the session's created_at '<script>' is not an ISO 8601 time"),
    }
    assert not report.ok and report.quarantined == ()  # reported; the session still reads
    assert forest.append(sid, "user.message", user("more")).sequence == 2
    # Before: the yoagent export failed with an internal error (-32603 over RPC).
    with pytest.raises(SessionDamaged, match="created_at 'zzzz' is not an ISO 8601 time"):
        forest.export_yoagent(sid, io.StringIO())
