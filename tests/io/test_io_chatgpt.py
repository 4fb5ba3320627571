"""ChatGPT import against the raw samples: whole mapping trees, heads, hidden nodes, zips.

Expectations come from each conversation's `mapping` and `current_node` read
with plain json; the array form and the zip are built from the same samples.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from sessionforest import Forest
from sessionforest.io import jsonstream
from sessionforest.io.common import Ids

if TYPE_CHECKING:
    from conftest import Raw

CHATGPT = Path(__file__).resolve().parents[3] / "shared" / "data" / "chatgpt"
FILES = sorted(CHATGPT.glob("*.json"))
MULTI = CHATGPT / "thinking-multi-preamble.json"


def _conversation(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_conversation_keeps_its_whole_mapping(forest: Forest, raw: Raw, path: Path) -> None:
    conv = _conversation(path)
    report = forest.import_chats("chatgpt", path)
    [info] = raw.chats_from(forest, path)
    raw.assert_tree(forest, info, raw.chatgpt_tree(conv))
    assert (info.title, info.harness, info.source_id) == (conv["title"], "chatgpt", conv["id"])
    assert info.created_at == "1970-01-01T00:00:01.000Z"  # create_time 1
    assert report.skipped == []
    ids = Ids("chatgpt", conv["id"])
    for nid, node in conv["mapping"].items():
        entry = forest.entry(info.id, ids.entry(nid))
        message = node.get("message")
        hidden = message is None or (message.get("metadata") or {}).get(
            "is_visually_hidden_from_conversation"
        )
        if hidden or message["author"]["role"] == "tool" or message.get("recipient") != "all":
            assert entry.context_visibility == "hidden", nid


def test_the_current_node_path_is_the_active_branch(forest: Forest) -> None:
    conv = _conversation(MULTI)
    forest.import_chats("chatgpt", MULTI)
    chain, node = [], conv["current_node"]
    while node is not None:
        chain.append(node)
        node = conv["mapping"][node].get("parent")
    chain.reverse()
    ids = Ids("chatgpt", conv["id"])
    sid = ids.session
    assert [e.id for e in forest.active_path(sid)] == [ids.entry(n) for n in chain]
    # n8 has a dead-end tool leaf beside the answer: a branch point, not a re-done turn.
    assert len(forest.children(sid, ids.entry("n8"))) == 2
    assert "n9" not in chain and forest.branches(sid) == 0
    texts = [e.payload["content"][0]["text"] for e in forest.active_path(sid)
             if e.kind == "user.message"]  # fmt: skip
    assert texts == ["question 1", "question 2", "question 3"]


def test_an_array_of_conversations_and_a_zip_import_the_same(
    forest: Forest, tmp_path: Path
) -> None:
    # All four samples share the id "fixture": the 2nd..4th become their own chats.
    array = b"[" + b",\n".join(p.read_bytes() for p in FILES) + b"]"
    plain = tmp_path / "conversations.json"
    plain.write_bytes(array)
    first = forest.import_chats("chatgpt", plain)
    assert len(first.chats) == 4 and len({c.session_id for c in first.chats}) == 4
    assert first.entries == sum(len(_conversation(p)["mapping"]) for p in FILES)
    assert sum("already imported with other content" in n for n in first.notes) == 3

    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("chat.html", "<html></html>")
        z.writestr("export/conversations.json", array)
    before = sorted(tmp_path.rglob("*"))
    again = forest.import_chats("chatgpt", archive)
    assert sorted(tmp_path.rglob("*")) == before  # nothing was extracted to disk
    assert [c.session_id for c in again.chats] == [c.session_id for c in first.chats]
    assert (again.entries, again.unchanged) == (0, first.entries)


def test_a_zip_without_conversations_is_rejected(forest: Forest, tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("../../evil.json", "[]")
    [failure] = forest.import_chats("chatgpt", archive).failed
    assert (failure.path, failure.line) == (str(archive), None)
    assert failure.reason == "no conversations.json in this zip"


def test_one_bad_conversation_fails_alone_and_the_rest_are_imported(
    forest: Forest, tmp_path: Path, dump: Callable[[], dict]
) -> None:
    good = MULTI.read_text(encoding="utf-8")
    broken = json.loads(good)
    broken["id"] = "other"
    broken["mapping"]["n5"]["message"] = "not a message"
    later = json.loads(good)
    later["id"] = "later"
    path = tmp_path / "conversations.json"
    path.write_text("[\n" + good + ",\n" + json.dumps(broken) + ',\n{"id": 3},\n'
                    + json.dumps(later) + "\n]")  # fmt: skip
    second = good.count("\n") + 3  # the line conversation 2 starts on
    report = forest.import_chats("chatgpt", path)
    # Conversations 1 and 4 committed, each on its own; nothing of 2 or 3 was written.
    assert [c.source_id for c in report.chats] == ["fixture", "later"]
    assert [s.source_id for s in forest.sessions()] == ["fixture", "later"]
    assert [(f.line, f.reason) for f in report.failed] == [
        (second, "conversation 2 node n5: 'message' must be an object or null"),
        (second + 1, "conversation 3: it has no string 'id'"),
    ]
    assert report.failed[0].message.startswith(f"{path}:{second}: conversation 2 node n5: ")
    before = dump()
    again = forest.import_chats("chatgpt", path)
    assert len(again.failed) == 2 and again.entries == 0
    assert dump() == before

    report = forest.import_chats("chatgpt", path, skip_bad=True)
    assert report.failed == []
    assert [(s.line, s.reason) for s in report.skipped] == [
        (second, "conversation 2 node n5: 'message' must be an object or null"),
        (second + 1, "conversation 3: it has no string 'id'"),
    ]
    other = Ids("chatgpt", "other").session
    assert forest.session(other).entry_count == len(broken["mapping"]) - 1
    assert forest.entry(other, Ids("chatgpt", "other").entry("n6")).parent_id is None


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_array_elements_stream_in_bounded_pieces(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonstream, "CHUNK", chunk)
    doc = b' [ {"a": "x]\\"}"}, [1, {"b": "{"}],\n 7, {"c": "' + b"y" * 50 + b'"}, {"d": 1} ]\n'
    found = [(e.index, e.line, e.raw, e.error) for e in jsonstream.elements(io.BytesIO(doc), 40)]
    assert found == [
        (1, 1, b'{"a": "x]\\"}"}', None),
        (2, 1, b'[1, {"b": "{"}]', None),
        (3, 2, b"", "an element that is not an object"),
        (4, 2, b"", "longer than 3.8147e-05 MiB; not loaded"),
        (5, 2, b'{"d": 1}', None),
    ]
    with pytest.raises(jsonstream.NotAnArray):
        list(jsonstream.elements(io.BytesIO(b'{"a": 1}'), 40))
    ended = list(jsonstream.elements(io.BytesIO(b'[{"a": 1}, {"b"'), 40))
    assert [e.error for e in ended] == [None, "the file ends inside the array"]


def test_an_id_reused_with_other_content_becomes_its_own_chat_noted_once(
    forest: Forest, tmp_path: Path
) -> None:
    conv = _conversation(MULTI)
    del conv["current_node"]  # noted while the chat is written, so a retry must not repeat it
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conv]))
    forest.import_chats("chatgpt", path)
    conv["mapping"]["n5"]["message"]["content"]["thoughts"][0]["summary"] = "said otherwise"
    path.write_text(json.dumps([conv]))
    report = forest.import_chats("chatgpt", path)
    assert report.ok and len(report.chats) == 1
    alias = report.chats[0].source_id
    assert alias.startswith("fixture~") and report.notes == [
        f"{path}: conversation 1: id fixture is already imported with other content: "
        f"imported as {alias}",
        f"{path}: conversation 1: current_node missing: head at the last node",
    ]
