"""Find lands on the hit: each chat found names the entry its snippet comes from
(`entry_id`, `sequence`) and whether that entry is on the chat's active branch."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sessionforest import Forest
from sessionforest.cli.main import cli

from .conftest import NOW, text

BUILD_FAILED = (
    Path(__file__).resolve().parents[4]
    / "shared/data/claude-code/real_projects/-Users-dain-workspace-coderabbit-review-helper"
    / "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"
)


def test_a_hit_names_the_entry_its_snippet_comes_from(forest: Forest) -> None:
    sid = forest.create_session("travel")
    forest.append(sid, "user.message", text("plan a trip to the coast"))
    said = forest.append(sid, "assistant.message", text("the pelican colony nests at the cape"))
    forest.append(sid, "user.message", text("and where do we sleep?"))
    [hit] = forest.search_chats("pelican", now=NOW).hits
    assert (hit.entry_id, hit.sequence, hit.active) == (said.id, said.sequence, True)
    assert "**pelican**" in hit.snippet
    assert hit.to_json()["entry_id"] == said.id and hit.to_json()["sequence"] == 2


def test_an_entry_left_on_another_branch_is_marked_off_the_active_branch(forest: Forest) -> None:
    sid = forest.create_session("retry")
    first = forest.append(sid, "user.message", text("write the parser"))
    gone = forest.append(sid, "assistant.message", text("a recursive descent walrus parser"))
    forest.move_head(sid, first.id)  # the turn is re-done: the walrus reply is off the path
    kept = forest.append(sid, "assistant.message", text("a table driven narwhal parser"))
    [off] = forest.search_chats("walrus", now=NOW).hits
    assert (off.entry_id, off.sequence, off.active) == (gone.id, 2, False)
    [on] = forest.search_chats("narwhal", now=NOW).hits
    assert (on.entry_id, on.sequence, on.active) == (kept.id, 3, True)


def test_a_chat_found_by_its_title_alone_names_no_entry(forest: Forest) -> None:
    sid = forest.create_session("Ocelot sightings")
    forest.append(sid, "user.message", text("count the cats we saw"))
    [hit] = forest.search_chats("ocelot", now=NOW).hits
    assert hit.session_id == sid and hit.digest_match and hit.entry_matches == 0
    assert (hit.entry_id, hit.sequence, hit.active) == (None, None, None)
    assert hit.to_json()["entry_id"] is None


def test_a_real_tool_result_is_landed_on(forest: Forest) -> None:
    """ "Failed to build" stands only in a Bash result of this real Claude Code chat:
    the hit opens at that tool result, on the active branch."""
    [chat] = forest.import_chats("claude-code", BUILD_FAILED).chats
    [hit] = [
        h for h in forest.search_chats('"Failed to build"').hits if h.session_id == chat.session_id
    ]
    assert hit.entry_id is not None and hit.sequence is not None and hit.active is True
    entry = forest.entry(chat.session_id, hit.entry_id)
    assert entry.sequence == hit.sequence and entry.kind == "tool.completed"
    assert "Failed to build" in str(entry.payload)


def test_forest_find_prints_the_entry_and_json_gives_it(tmp_path: Path) -> None:
    db = str(tmp_path / "forest.db")  # the CLI's own store (the backend runs above)
    forest = Forest.open(db)
    sid = forest.create_session("retry")
    first = forest.append(sid, "user.message", text("write the parser"))
    gone = forest.append(sid, "assistant.message", text("a recursive descent walrus parser"))
    forest.move_head(sid, first.id)
    forest.append(sid, "assistant.message", text("a table driven narwhal parser"))
    forest.close()
    out = CliRunner().invoke(cli, ["--db", db, "find", "walrus"])
    assert out.exit_code == 0, out.output
    assert f"     {sid}  entry 2 (off the active branch)  " in out.stdout
    out = CliRunner().invoke(cli, ["--db", db, "find", "narwhal", "--json"])
    [hit] = json.loads(out.stdout)["hits"]
    assert (hit["sequence"], hit["active"]) == (3, True) and hit["entry_id"] != gone.id
