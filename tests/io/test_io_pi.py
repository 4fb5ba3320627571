"""pi import: the real v1 samples against their raw lines, and a hand-made v3 tree file.

v1 compactions name the first kept entry by index (header = 0); the test reads
that index from the raw file and checks the entry it lands on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from sessionforest import Forest, UnknownCheckpoint
from sessionforest.io.common import Ids

if TYPE_CHECKING:
    from conftest import Raw

PI = Path(__file__).resolve().parents[3] / "shared" / "data" / "pi"
BEFORE = PI / "before-compaction.jsonl"


@pytest.mark.parametrize("path", sorted(PI.glob("*.jsonl")), ids=lambda p: p.name)
def test_each_v1_file_is_one_linear_chat(forest: Forest, raw: Raw, path: Path) -> None:
    report = forest.import_chats("pi", path)
    [info] = raw.chats_from(forest, path)
    header = raw.lines(path)[0][1]
    raw.assert_tree(forest, info, raw.pi_tree(path))
    assert (info.source_id, info.origin_cwd, info.harness) == (header["id"], header["cwd"], "pi")
    assert info.cwd is None
    assert report.skipped == [] and report.branches == 0


def test_the_two_compactions_keep_from_the_entries_their_index_names(
    forest: Forest, raw: Raw
) -> None:
    forest.import_chats("pi", BEFORE)
    entries = [rec for _, rec in raw.lines(BEFORE)]  # index 0 is the header, as in pi
    compactions = [(i, e) for i, e in enumerate(entries) if e["type"] == "compaction"]
    assert [e["firstKeptEntryIndex"] for _, e in compactions] == [293, 551]
    ids = Ids("pi", entries[0]["id"])
    sid = ids.session
    for index, raw_compaction in compactions:
        entry = forest.entry(sid, ids.entry(f"#{index}"))
        assert entry.kind == "compaction"
        assert entry.payload["summary"] == raw_compaction["summary"]
        assert entry.payload["tokens_before"] == raw_compaction["tokensBefore"]
        kept_index = raw_compaction["firstKeptEntryIndex"]
        assert entry.payload["first_kept_entry_id"] == ids.entry(f"#{kept_index}")
        kept = forest.entry(sid, entry.payload["first_kept_entry_id"])
        message = entries[kept_index]["message"]
        assert (
            kept.kind == {"user": "user.message", "assistant": "assistant.message"}[message["role"]]
        )
        assert kept.payload["content"][0].get("text") == message["content"][0].get("text")
    # Both compactions and the entries they keep lie on the active branch, in order,
    # so projecting it can apply them (first_kept before its compaction).
    path = [e.id for e in forest.active_path(sid)]
    for index, raw_compaction in compactions:
        kept = path.index(ids.entry(f"#{raw_compaction['firstKeptEntryIndex']}"))
        assert kept < path.index(ids.entry(f"#{index}"))


def test_model_and_thinking_changes_and_shell_runs_map_to_kinds(forest: Forest, raw: Raw) -> None:
    forest.import_chats("pi", BEFORE)
    entries = [rec for _, rec in raw.lines(BEFORE)]
    ids = Ids("pi", entries[0]["id"])
    for index, rec in enumerate(entries[1:], 1):
        stored = forest.entry(ids.session, ids.entry(f"#{index}"))
        if rec["type"] == "model_change":
            assert stored.kind == "model.changed"
            assert stored.payload == {"model": rec["modelId"], "provider": rec["provider"]}
        elif rec["type"] == "thinking_level_change":
            assert (stored.kind, stored.context_visibility) == ("provider.notification", "hidden")
            assert stored.payload["event"]["thinkingLevel"] == rec["thinkingLevel"]
        elif rec["type"] == "message" and rec["message"]["role"] == "bashExecution":
            assert stored.kind == "user.message"
            assert stored.payload["content"][0]["text"].startswith(
                f"Ran `{rec['message']['command']}`"
            )
        elif rec["type"] == "message" and rec["message"]["role"] == "toolResult":
            assert stored.payload["call_id"] == rec["message"]["toolCallId"]


def _v3(tmp_path: Path, *entries: dict) -> Path:
    header = {"type": "session", "version": 3, "id": "s-v3", "timestamp": "2026-01-02T03:04:05Z",
              "cwd": "/tmp/project"}  # fmt: skip
    path = tmp_path / "v3.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in (header, *entries)) + "\n")
    return path


def _message(id: str, parent: str | None, role: str, text: str) -> dict:
    return {"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-02T03:04:06Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}]}}  # fmt: skip


def test_a_v3_tree_keeps_branches_labels_and_summaries(
    forest: Forest, raw: Raw, tmp_path: Path
) -> None:
    path = _v3(
        tmp_path,
        _message("u1", None, "user", "plan it"),
        _message("a1", "u1", "assistant", "a plan"),
        {"type": "label", "id": "l1", "parentId": "a1", "targetId": "a1", "label": "draft"},
        _message("u2", "a1", "user", "make it a library"),
        {"type": "label", "id": "l2", "parentId": "u2", "targetId": "u1", "label": "start"},
        {"type": "label", "id": "l3", "parentId": "l2", "targetId": "a1", "label": "final"},
        {"type": "label", "id": "l4", "parentId": "l3", "targetId": "u1", "label": None},
        _message("u3", "a1", "user", "make it a service"),
        {"type": "branch_summary", "id": "b1", "parentId": "u3", "fromId": "u2",
         "summary": "tried a library"},
        {"type": "session_info", "id": "i1", "parentId": "b1", "name": "  Planning  "},
        {"type": "compaction", "id": "c1", "parentId": "i1", "summary": "planned",
         "firstKeptEntryId": "u3", "tokensBefore": 10},
        _message("a3", "c1", "assistant", "a service plan"),
    )  # fmt: skip
    report = forest.import_chats("pi", path)
    lines = [rec for _, rec in raw.lines(path)][1:]
    parents = {e["id"]: e["parentId"] for e in lines}
    # The latest label of a1 ("final", set by l3) is a checkpoint beside a1;
    # u1's label was cleared by l4, so it gets none.
    parents["l3#checkpoint"] = "a1"
    ids = Ids("pi", "s-v3")
    sid = ids.session
    raw.assert_tree(forest, forest.session(sid), raw.Tree(parents, lines[-1]["id"]))
    assert forest.session(sid).title == "Planning"
    [checkpoint] = forest.checkpoints(sid)
    assert checkpoint.payload == {"label": "final", "summary": "final"}
    assert forest.seek_checkpoint(sid, "final").parent_id == ids.entry("a1")
    with pytest.raises(UnknownCheckpoint):
        forest.seek_checkpoint(sid, "draft")
    summary = forest.entry(sid, ids.entry("b1"))
    assert (summary.kind, summary.payload["from_entry_id"]) == ("branch.summary", ids.entry("u2"))
    compaction = forest.entry(sid, ids.entry("c1"))
    assert compaction.payload["first_kept_entry_id"] == ids.entry("u3")
    assert report.branches == 1  # u2 and u3 both answer a1: a re-done turn


def test_an_unknown_parent_becomes_a_root_and_a_bad_header_rejects_the_file(
    forest: Forest, tmp_path: Path
) -> None:
    path = _v3(tmp_path, _message("u1", "gone", "user", "hello"))
    report = forest.import_chats("pi", path)
    assert forest.entry(Ids("pi", "s-v3").session, Ids("pi", "s-v3").entry("u1")).parent_id is None
    assert report.notes == [
        f"{path}: line 2: parent gone is not earlier in the file: imported as a root"
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_message("u1", None, "user", "no header")) + "\n")
    [failure] = forest.import_chats("pi", bad).failed
    assert (failure.path, failure.line) == (str(bad), 1)
    assert failure.reason.startswith("the first line must be a pi session header")


def test_a_chat_opening_with_a_slash_command_is_titled_by_the_request_after_it(
    forest: Forest,
) -> None:
    """large-session.jsonl's first user turn is `/mode` (the user switching pi's
    mode): the title is the request that follows it."""
    [chat] = forest.import_chats("pi", PI / "large-session.jsonl").chats
    title = forest.session(chat.session_id).title
    assert title.startswith("read packages/coding-agent/docs/theme.md in full, then theme.ts")
    assert len(title) <= 80 and title.endswith("…")
