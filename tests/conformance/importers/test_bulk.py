"""The importers' bulk writer: one transaction per chat, explicit ids, idempotent rows.

Driven directly with hand-made rows, so every rule is pinned without a file
format in between.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import EntryConflict, Forest, ImportRejected, InvalidPayload, SessionDamaged
from sessionforest.model import ChatSpec, SessionSource

Dump = Callable[[], dict[str, list[tuple[Any, ...]]]]
T = "2025-01-01T00:00:00.000Z"


def spec(id: str = "chat", source_id: str = "s1") -> ChatSpec:
    return ChatSpec(id, "t", "test", T, "test", "/tmp/src", source_id)


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def write(forest: Forest, rows: list[tuple[str, str | None, str]], head: str | None = None) -> Any:
    with forest.bulk_chat(spec(), Path("/tmp/src")) as chat:
        for entry, parent, kind in rows:
            chat.add(entry, parent, kind, text(entry), T, None, 1)
        chat.head = head or (rows[-1][0] if rows else None)
    return chat.result


def test_rows_land_in_order_with_their_ids_and_a_head(forest: Forest) -> None:
    result = write(forest, [("a", None, "user.message"), ("b", "a", "assistant.message")])
    assert (result.created, result.added, result.entries, result.head) == (True, 2, 2, "b")
    assert [(e.id, e.parent_id, e.sequence) for e in forest.entries("chat")] == [
        ("a", None, 1),
        ("b", "a", 2),
    ]
    assert forest.head("chat") == "b" and forest.session("chat").source == SessionSource(
        "test", "/tmp/src", "s1"
    )


def test_writing_again_is_idempotent_and_new_rows_continue_the_sequence(forest: Forest) -> None:
    write(forest, [("a", None, "user.message")])
    forest.append("chat", "assistant.message", text("typed"), stamp=None)
    again = write(forest, [("a", None, "user.message"), ("c", "a", "user.message")])
    assert (again.created, again.added, again.unchanged, again.entries) == (False, 1, 1, 3)
    assert [e.sequence for e in forest.entries("chat")] == [1, 2, 3]


def test_a_conflicting_row_fails_the_whole_chat(forest: Forest, dump: Dump) -> None:
    write(forest, [("a", None, "user.message"), ("b", "a", "assistant.message")])
    before = dump()
    earlier = "was imported before with a different"
    with pytest.raises(EntryConflict, match=f"the record {earlier} kind "
                       r"\(assistant.message then, user.message now\)"):  # fmt: skip
        write(forest, [("a", None, "user.message"), ("z", "a", "user.message"),
                       ("b", "a", "user.message")])  # fmt: skip
    assert dump() == before
    with pytest.raises(EntryConflict, match=f"the record {earlier} parent:"):
        write(forest, [("a", None, "user.message"), ("b", None, "assistant.message")])
    content = pytest.raises(EntryConflict, match=f"^/tmp/src:7: uuid u-a {earlier} content:")
    with content, forest.bulk_chat(spec(), Path("/tmp/src")) as chat:
        chat.add("a", None, "user.message", text("changed"), T, None, 7, "uuid u-a")
    assert content.excinfo.value.source_id == "uuid u-a"
    assert content.excinfo.value.entry_id == "a"
    assert dump() == before


def test_a_record_repeated_with_other_content_names_both_lines(
    forest: Forest, harness: Harness, dump: Dump, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing was stored before: the message must not say so, and names the source id."""
    before = dump()
    with pytest.raises(EntryConflict) as queued, forest.bulk_chat(spec(), Path("/f")) as chat:
        chat.add("x", None, "user.message", text("first"), T, None, 3, "uuid 5f3e")
        chat.add("x", None, "user.message", text("second"), T, None, 9, "uuid 5f3e")
    assert str(queued.value) == (
        "/f:9: uuid 5f3e is also on line 3, with a different content; "
        "nothing of this chat was imported"
    )
    # Written to the (uncommitted) table already, by an earlier batch of this import.
    harness.tune_bulk(monkeypatch, batch=2)
    with pytest.raises(EntryConflict) as written, forest.bulk_chat(spec(), Path("/f")) as chat:
        chat.add("x", None, "user.message", text("first"), T, None, 3, "uuid 5f3e")
        chat.add("y", "x", "assistant.message", text("reply"), T, None, 4, "uuid 77aa")
        chat.add("x", None, "user.message", text("first"), T, "hidden", 12, "uuid 5f3e")
        chat.flush()
    assert str(written.value) == (
        "/f:12: uuid 5f3e is also on line 3, with a different visibility "
        "(context there, hidden here); nothing of this chat was imported"
    )
    assert "already" not in str(written.value) and "imported before" not in str(written.value)
    assert dump() == before


def test_a_failure_after_many_batches_leaves_the_store_as_it_was(
    forest: Forest, harness: Harness, dump: Dump
) -> None:
    forest.create_session("other", "test")
    before = dump()
    rows = [
        (f"e{i}", f"e{i - 1}" if i else None, "user.message") for i in range(3 * harness.bulk_batch)
    ]
    with pytest.raises(InvalidPayload), forest.bulk_chat(spec(), Path("/tmp/src")) as chat:
        for entry, parent, kind in rows:
            chat.add(entry, parent, kind, text(entry), T)
        chat.add("bad", "e0", "user.message", {"content": []}, T)
    assert dump() == before


def test_seen_means_met_in_this_import_not_merely_stored(
    forest: Forest, harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness.tune_bulk(monkeypatch, recent=8)  # most ids are then asked of the store
    rows = [(f"e{i}", f"e{i - 1}" if i else None, "user.message") for i in range(50)]
    write(forest, rows)
    with forest.bulk_chat(spec(), Path("/tmp/src")) as chat:
        assert not chat.seen("e3")  # stored, but this import has not met it yet
        for entry, parent, kind in rows[:40]:
            chat.add(entry, parent, kind, text(entry), T)
        chat.flush()
        assert chat.seen("e3") and chat.seen("e39") and not chat.seen("e45")
        assert not chat.seen("nowhere")
        chat.head = "e39"
    assert forest.head("chat") == "e39"


def test_a_first_import_finds_what_it_wrote_and_forgot_and_nothing_else(
    forest: Forest, harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A chat with nothing stored before: ids fall out of memory (recent=8) and are
    # answered by the filter of forgotten ids, asking the store only for those it may hold.
    harness.tune_bulk(monkeypatch, recent=8)
    rows = [(f"e{i}", f"e{i - 1}" if i else None, "user.message") for i in range(60)]
    with forest.bulk_chat(spec(), Path("/tmp/src")) as chat:
        for entry, parent, kind in rows:
            assert not chat.seen(entry)
            chat.add(entry, parent, kind, text(entry), T)
        chat.flush()
        assert all(chat.seen(entry) for entry, _, _ in rows)  # forgotten long ago, or recent
        assert not any(chat.seen(f"x{i}") for i in range(200))
        chat.add("e0", None, "user.message", text("e0"), T)  # met again: the same entry
        chat.head = "e59"
    assert len(forest.entries("chat")) == 60 and forest.head("chat") == "e59"


def test_foreign_ids_and_foreign_sessions_are_refused(forest: Forest) -> None:
    sid = forest.create_session("typed by hand")
    typed = forest.append(sid, "user.message", text("hi"), stamp=None)
    belongs = f"a record maps to entry id {typed.id}, which belongs to session {sid}"
    with pytest.raises(ImportRejected, match=belongs):
        write(forest, [(typed.id, None, "user.message")])
    other = pytest.raises(ImportRejected, match="exists and was not imported from test s2")
    with other, forest.bulk_chat(spec(id=sid, source_id="s2"), Path("/tmp/src")):
        pass


def test_branches_count_redone_turns_not_tool_fan_out(forest: Forest) -> None:
    with forest.bulk_chat(spec(), Path("/tmp/src")) as chat:
        chat.add("u", None, "user.message", text("go"), T)
        call = {"content": [{"type": "tool_call", "id": "c1", "name": "ls", "input": {}}]}
        chat.add("a1", "u", "assistant.message", call, T)
        chat.add("a2", "a1", "assistant.message", text("and"), T)  # the next tool call ...
        chat.add("r1", "a1", "tool.completed", {"call_id": "c1", "output": "x"}, T)  # ... fans out
        chat.add("u2", "a2", "user.message", text("first try"), T)
        chat.add("u3", "a2", "user.message", text("second try"), T)  # re-done: a branch
        chat.add("h", "u", "assistant.message", text("aside"), T, "hidden")  # hidden: no turn
        note = {"provider": "x", "event": {}}
        chat.add("n", "u2", "provider.notification", note, T)
        chat.add("a3", "u2", "assistant.message", text("answer"), T)  # one turn beside a note
        chat.head = "u3"
    assert chat.result is not None and chat.result.branches == 1 == forest.branches("chat")


def test_no_row_goes_below_a_stored_entry_this_version_cannot_read(
    forest: Forest, harness: Harness, dump: Dump
) -> None:
    write(forest, [("a", None, "user.message")])
    # As a newer sessionforest left it.
    harness.unreadable_version(forest, "chat", "future", "a", 2, payload={}, created_at=T)
    before = dump()
    with pytest.raises(ImportRejected) as err:
        write(forest, [("a", None, "user.message"), ("b", "future", "assistant.message")])
    assert err.value.entry_id == "b"
    assert "stored entry future, whose semantic schema version 99" in err.value.reason
    assert dump() == before


def test_a_chat_whose_session_row_was_deleted_is_not_silently_adopted(
    forest: Forest, harness: Harness, dump: Dump
) -> None:
    write(forest, [("a", None, "user.message"), ("b", "a", "assistant.message")])
    harness.delete_session_row(forest, "chat")
    before = dump()
    # Before, the new row started its sequence at 1 again and failed on a raw
    # UNIQUE error; now the import names the damage and the way out.
    with pytest.raises(SessionDamaged, match="forest repair chat"):
        write(forest, [("a", None, "user.message"), ("c", "b", "user.message")])
    assert dump() == before
    assert forest.repair("chat").ok
    assert [e.id for e in forest.active_path("chat")] == ["a", "b"]
