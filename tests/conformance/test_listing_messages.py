"""A listed chat's message count: what was said and the replies, every branch.

The count is kept in the session's head row (migration session_messages): an
append adds what it appended, an import, a restore and a repair count the rows
they wrote. Whatever wrote the entries, the listed count must equal counting
them one by one: user and assistant messages in context, not tool calls,
tool results, notifications or other hidden entries. Real Claude Code
transcripts supply chats whose entries hold no message at all (a file of
metadata only), which the chat list hides.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from conformance.backends.harness import Harness
from sessionforest import Forest
from sessionforest.forest import AppendRequest

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "claude-code" / "real_projects"
# Four entries, none of them a message (the file holds metadata and a summary only).
NO_MESSAGES = DATA / "-experiments-ideas" / "a95fea4a-b88a-4e49-ac07-4cc323d8700c.jsonl"
# A chat with tool calls, results and hidden entries between its messages.
BUILD_FAILED = (
    DATA
    / "-Users-dain-workspace-coderabbit-review-helper"
    / "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"
)
WORDS = {"content": [{"type": "text", "text": "the lock again"}]}


def counted(forest: Forest, session_id: str) -> int:
    """The messages of a session, counted entry by entry."""
    entries = forest.entries_after(session_id, 0, 100_000)
    return sum(
        1
        for e in entries
        if e.kind in ("user.message", "assistant.message") and e.context_visibility == "context"
    )


def listed(forest: Forest, session_id: str) -> int:
    [row] = [s for s in forest.sessions(include_hidden=True) if s.id == session_id]
    assert row.messages == forest.session(session_id).messages
    [counts] = forest.chat_counts([session_id])
    assert counts.messages == row.messages
    return row.messages


def test_appends_count_only_messages_in_context(forest: Forest) -> None:
    sid = forest.create_session("counted")
    assert listed(forest, sid) == 0
    first = forest.append(sid, "user.message", WORDS)
    forest.append(sid, "provider.notification", {"provider": "hook", "event": "ran"})
    forest.append_many(
        sid,
        [
            ("assistant.message", WORDS, None),
            ("tool.started", {"call_id": "c1", "name": "Bash", "input": {"command": "ls"}}, None),
            ("tool.completed", {"call_id": "c1", "output": "a.txt"}, None),
            ("assistant.message", WORDS, "hidden"),
        ],
    )
    # A branch below the first message counts too: the list counts every branch.
    forest.append(sid, "assistant.message", WORDS, parent=first.id)
    other = forest.create_session("other")
    done = forest.append_group(
        [
            AppendRequest(sid, "user.message", WORDS),
            AppendRequest(other, "user.message", WORDS),
            AppendRequest("no-such-session", "user.message", WORDS),
        ]
    )
    assert not isinstance(done[0], Exception) and isinstance(done[2], Exception)
    assert listed(forest, sid) == counted(forest, sid) == 4
    assert listed(forest, other) == 1


def test_imports_and_restores_count_what_they_wrote(forest: Forest, tmp_path: Path) -> None:
    [none] = forest.import_chats("claude-code", NO_MESSAGES).chats
    assert forest.session(none.session_id).entry_count == 4
    assert listed(forest, none.session_id) == 0
    # Imported cut short, then whole: the second import continues the chat.
    lines = BUILD_FAILED.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / BUILD_FAILED.name
    cut.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    [chat] = forest.import_chats("claude-code", cut).chats
    sid = chat.session_id
    half = listed(forest, sid)
    assert 0 < half == counted(forest, sid)
    cut.write_text("".join(lines), encoding="utf-8")
    assert forest.import_chats("claude-code", cut).entries > 0
    assert listed(forest, sid) == counted(forest, sid) > half
    assert forest.session(sid).entry_count > counted(forest, sid)  # tool noise not counted
    # A native export read back into another store: the restore counts its rows.
    out = io.StringIO()
    forest.export_jsonl(sid, out)
    native = tmp_path / "chat.jsonl"
    native.write_text(out.getvalue(), encoding="utf-8")
    with Forest.open(tmp_path / "restored.db") as restored:
        restored.import_native(native)
        assert listed(restored, sid) == counted(forest, sid)


def test_a_repaired_head_counts_afresh(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    forest.append(sid, "user.message", WORDS)
    forest.append(sid, "assistant.message", WORDS)
    forest.append(sid, "checkpoint", {"label": "a", "summary": "b"})
    harness.update_row(forest, "session_heads", sid, messages=99)
    harness.head_nowhere(forest, sid)
    assert forest.repair(sid).actions  # the head re-linked
    assert forest.session(sid).head is not None
    assert listed(forest, sid) == 2


@pytest.mark.parametrize("visibility", ["hidden", "context"])
def test_a_chat_of_notifications_only_has_no_messages(forest: Forest, visibility: str) -> None:
    sid = forest.create_session()
    event = {"provider": "claude-code", "event": "session started"}
    forest.append(sid, "provider.notification", event, visibility=visibility)
    assert forest.session(sid).entry_count == 1
    assert listed(forest, sid) == 0
