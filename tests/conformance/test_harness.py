"""The registry and each backend's harness do what the conformance tests rely on.

A harness method that silently did nothing would make the tests built on it
pass without proving anything (an empty statement trace, a dump that never
changes, damage that damages nothing); each is checked here on every backend.
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from datetime import UTC, datetime
from typing import Any

import pytest

from conformance.backends import BACKENDS, Backend, Capabilities, Harness, Refused, parameters
from sessionforest import Forest

ALL = Capabilities(processes=True, database_guards=True, statement_trace=True)
NONE = Capabilities(processes=False, database_guards=False, statement_trace=False)


def user(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


# --- the registry ----------------------------------------------------------------------


def test_every_capability_must_be_stated_by_every_backend() -> None:
    assert [f.name for f in fields(Capabilities) if f.default is not MISSING] == []
    with pytest.raises(TypeError):
        Capabilities(processes=True)  # type: ignore[call-arg]
    assert BACKENDS and all(isinstance(b.capabilities, Capabilities) for b in BACKENDS)
    assert len({b.name for b in BACKENDS}) == len(BACKENDS)


def test_a_test_needing_a_capability_is_left_out_for_a_backend_without_it() -> None:
    full = Backend("full", BACKENDS[0].harness, ALL)
    bare = Backend("bare", BACKENDS[0].harness, NONE)
    params, left_out = parameters(["processes", "statement_trace"], [full, bare])
    assert [p.id for p in params] == ["full"]
    assert left_out == ["bare lacks processes, statement_trace"]
    params, left_out = parameters([], [full, bare])
    assert [p.id for p in params] == ["full", "bare"] and left_out == []


def test_a_backend_that_cannot_run_here_is_skipped_with_its_reason() -> None:
    down = Backend("down", BACKENDS[0].harness, ALL, unavailable=lambda: "no server answers")
    [param], left_out = parameters([], [down])
    assert left_out == []
    [mark] = param.marks
    assert mark.name == "skip" and mark.kwargs["reason"] == "down: no server answers"


def test_an_unknown_capability_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown capabilities: teleport"):
        ALL.lacking(["teleport"])


# --- opening -----------------------------------------------------------------------------


def test_another_handle_and_a_reopen_see_the_same_store(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session("shared")
    other = harness.another(forest)
    entry = forest.append(sid, "user.message", user("seen elsewhere"))
    assert other.head(sid) == entry.id
    assert harness.location(other) == harness.location(forest)
    again = harness.reopen(other)
    assert again.head(sid) == entry.id
    fresh = harness.fresh()
    assert harness.location(fresh) != harness.location(forest) and fresh.sessions() == []


def test_the_clock_and_options_reach_the_store(harness: Harness) -> None:
    forest = harness.fresh(clock=lambda: datetime(2020, 2, 29, tzinfo=UTC), durability="full")
    sid = forest.create_session()
    assert forest.session(sid).created_at == "2020-02-29T00:00:00.000Z"


# --- reading behind the API ----------------------------------------------------------------


def test_dump_holds_every_forest_table_and_shows_every_write(
    forest: Forest, harness: Harness
) -> None:
    empty = harness.dump(forest)
    assert {"sessions", "session_entries", "session_heads", "workspaces", "agents"} <= set(empty)
    sid = forest.create_session("t")
    forest.append(sid, "user.message", user("one"))
    after = harness.dump(forest)
    assert after != empty and after == harness.dump(forest)
    [row] = after["session_entries"]
    assert (row["session_id"], row["sequence"]) == (sid, 1)
    assert harness.dump(forest, "sessions") == {"sessions": after["sessions"]}


@pytest.mark.needs("statement_trace")
def test_the_statement_trace_sees_reads_and_writes_and_nothing_after(
    forest: Forest, harness: Harness
) -> None:
    sid = forest.create_session()
    with harness.statements(forest) as seen:
        forest.head(sid)
        reads = len(seen)
        forest.append(sid, "user.message", user("x"))
    assert reads >= 1 and len(seen) > reads
    done = len(seen)
    forest.head(sid)
    assert len(seen) == done


def test_changes_count_writes_and_not_reads(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    before = harness.changes(forest)
    forest.entries(sid)
    forest.search_chats("anything")
    assert harness.changes(forest) == before
    forest.append(sid, "user.message", user("x"))
    assert harness.changes(forest) > before


# --- writing behind the API ------------------------------------------------------------------


def test_rows_go_in_change_and_go_out_as_asked(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session("before")
    harness.update_row(forest, "sessions", sid, title="after")
    assert forest.session(sid).title == "after"
    harness.update_row(forest, "sessions", "nobody", title="x")  # no such row: nothing
    harness.add_entry(forest, sid, "e1", None, 1, payload=user("raw"))
    harness.point_head(forest, sid, "e1")
    assert forest.entry(sid, "e1").payload == user("raw") and forest.head(sid) == "e1"
    harness.point_head(forest, sid, "elsewhere")
    assert forest.session(sid).head == "elsewhere"
    harness.delete_row(forest, "session_heads", sid)
    assert forest.session(sid).head is None
    harness.set_quarantine(forest, sid, "by hand")
    assert forest.session(sid).quarantine == "by hand"


def test_a_session_row_deleted_past_the_guard_leaves_the_guard(
    forest: Forest, harness: Harness
) -> None:
    gone, kept = forest.create_session("gone"), forest.create_session("kept")
    harness.delete_session_row(forest, gone)
    assert [s.id for s in forest.sessions()] == [kept]
    harness.delete_session_row(forest, kept)  # twice in one store: the guard came back
    assert forest.sessions() == []


@pytest.mark.needs("database_guards")
def test_the_guard_still_refuses_after_a_deletion_past_it(forest: Forest, harness: Harness) -> None:
    gone, kept = forest.create_session("gone"), forest.create_session("kept")
    harness.delete_session_row(forest, gone)
    with pytest.raises(Refused, match="cannot be deleted"):
        harness.delete_row(forest, "sessions", kept)


def test_bulk_knobs_take_effect(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    default = harness.bulk_batch
    assert default > 2
    harness.tune_bulk(monkeypatch, batch=2, recent=4)
    assert harness.bulk_batch == 2
    monkeypatch.undo()
    assert harness.bulk_batch == default


# --- named damage: each is the problem `check` names it by ---------------------------------------


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        ("orphan_parent", "orphan-parent"),
        ("cross_session_parent", "cross-session-parent"),
        ("cycle", "cycle"),
        ("unreadable_version", "unsupported-version"),
        ("head_nowhere", "invalid-head"),
        ("head_elsewhere", "invalid-head"),
        ("delete_session_row", "missing-session"),
    ],
)
def test_each_damage_is_what_check_finds(
    forest: Forest, harness: Harness, damage: str, code: str
) -> None:
    other = forest.create_session()
    foreign = forest.append(other, "user.message", user("elsewhere")).id
    sid = forest.create_session()
    root = forest.append(sid, "user.message", user("root")).id
    calls: dict[str, Any] = {
        "orphan_parent": lambda: harness.orphan_parent(forest, sid, "x", 2),
        "cross_session_parent": lambda: harness.cross_session_parent(forest, sid, "x", foreign, 2),
        "cycle": lambda: harness.cycle(forest, sid, "x", "y", 2),
        "unreadable_version": lambda: harness.unreadable_version(forest, sid, "x", root, 2),
        "head_nowhere": lambda: harness.head_nowhere(forest, sid),
        "head_elsewhere": lambda: harness.head_elsewhere(forest, sid, foreign),
        "delete_session_row": lambda: harness.delete_session_row(forest, sid),
    }
    assert forest.check().ok
    calls[damage]()
    report = forest.check()
    assert {(p.session_id, p.code) for p in report.problems} == {(sid, code)}
