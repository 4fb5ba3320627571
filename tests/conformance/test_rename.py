"""`Forest.rename`: the user's own title, kept when the chat's source is imported again.

The chat is a real Claude Code transcript, imported cut short and then whole
(the second import adds the rest and rewrites the harness's description of the
chat); the title the user set in between must come through it, in the list
and in find's hits.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionforest import Forest, InvalidArgument, UnknownSession
from sessionforest.ids import MAX_TITLE

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
REWIND = (
    DATA / "claude-code/real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
)


def _cut(tmp_path: Path, count: int | None) -> Path:
    target = tmp_path / REWIND.name
    lines = REWIND.read_text(encoding="utf-8").splitlines(keepends=True)
    target.write_text("".join(lines[:count]), encoding="utf-8")
    return target


def test_a_renamed_chat_keeps_its_title_through_a_reimport(forest: Forest, tmp_path: Path) -> None:
    [chat] = forest.import_chats("claude-code", _cut(tmp_path, 30)).chats
    imported_title = forest.session(chat.session_id).title
    info = forest.rename(chat.session_id, "  Quokka\tnotes \n")
    assert info.title == "Quokka notes" and info.id == chat.session_id  # folded to one line
    grown = forest.import_chats("claude-code", _cut(tmp_path, None))
    assert grown.entries > 0  # the import did run over the chat
    assert forest.session(chat.session_id).title == "Quokka notes" != imported_title
    listed = {s.id: s.title for s in forest.sessions()}
    assert listed[chat.session_id] == "Quokka notes"
    hits = forest.search_chats("quokka").hits
    assert [(h.session_id, h.title) for h in hits] == [(chat.session_id, "Quokka notes")]


def test_renaming_again_replaces_the_users_title(forest: Forest) -> None:
    sid = forest.create_session("first")
    forest.append(sid, "user.message", {"content": [{"type": "text", "text": "the lock again"}]})
    forest.rename(sid, "second")
    assert forest.rename(sid, "third").title == "third"
    assert forest.session(sid).title == "third"
    assert [h.session_id for h in forest.search_chats("third").hits] == [sid]
    assert forest.search_chats("second").hits == ()  # the index follows the title


def test_a_title_of_the_longest_length_is_kept_whole(forest: Forest) -> None:
    sid = forest.create_session()
    title = "w" * MAX_TITLE
    assert forest.rename(sid, title).title == title


@pytest.mark.parametrize(
    ("title", "said"),
    [
        ("", "empty"),
        (" \t\n ", "empty"),
        ("\x00\x1b", "empty"),
        ("x" * (MAX_TITLE + 1), f"{MAX_TITLE + 1} characters; a title holds at most {MAX_TITLE}"),
    ],
)
def test_an_empty_or_overlong_title_is_refused_and_nothing_changes(
    forest: Forest, title: str, said: str
) -> None:
    sid = forest.create_session("kept")
    with pytest.raises(InvalidArgument) as refused:
        forest.rename(sid, title)
    assert refused.value.argument == "title" and said in str(refused.value)
    assert forest.session(sid).title == "kept"


def test_an_unknown_session_is_named_with_the_ids_one_typo_away(forest: Forest) -> None:
    sid = forest.create_session("real", session_id="01k7aaaaaaaaaaaaaaaaaaaaaa")
    with pytest.raises(UnknownSession) as missing:
        forest.rename("01k7aaaaaaaaaaaaaaaaaaaaab", "new title")
    assert missing.value.session_id == "01k7aaaaaaaaaaaaaaaaaaaaab"
    assert [s["id"] for s in missing.value.suggestions] == [sid]
    assert forest.session(sid).title == "real"
