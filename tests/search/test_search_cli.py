"""`forest recall`, `forest find`, `forest end` and `forest archive` through CliRunner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from sessionforest import Forest
from sessionforest.cli.main import cli

NOW = "2026-09-30T15:00:00Z"


class Cli:
    def __init__(self, db: Path) -> None:
        self.db = db
        self.runner = CliRunner()

    def run(self, *args: str) -> Result:
        return self.runner.invoke(cli, ["--db", str(self.db), *args])

    def ok(self, *args: str) -> str:
        result = self.run(*args)
        assert result.exit_code == 0, (result.stderr, result.exception)
        return result.stdout

    def json(self, *args: str) -> Any:
        return orjson.loads(self.ok(*args, "--json"))


@pytest.fixture
def cli_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    monkeypatch.delenv("FOREST_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return Cli(tmp_path / "forest.db")


@pytest.fixture
def chats(cli_store: Cli) -> dict[str, str]:
    ids = {}
    with Forest.open(cli_store.db) as forest:
        for name, harness, words, at in [
            ("Kanji flashcards", "claude", "build a kanji deck", "2026-09-27T15:00:00.000Z"),
            ("Sidecar crash", "codex", "the sidecar exits with EOF", "2026-09-20T15:00:00.000Z"),
        ]:
            sid = forest.create_session(name, harness, created_at=at)
            forest.append(
                sid,
                "user.message",
                {"content": [{"type": "text", "text": words}]},
                created_at=at,
                stamp=None,
            )
            ids[name.split()[0].lower()] = sid
    return ids


def test_recall_json_shape(cli_store: Cli, chats: dict[str, str]) -> None:
    doc = cli_store.json("recall", chats["kanji"], "kanji")
    assert doc["session_id"] == chats["kanji"] and doc["query"] == "kanji"
    [hit] = doc["hits"]
    assert set(hit) == {
        "entry_id",
        "session_id",
        "sequence",
        "kind",
        "snippet",
        "created_at",
        "on_active_branch",
        "score",
    }
    assert (hit["kind"], hit["sequence"], hit["on_active_branch"]) == ("user.message", 1, True)
    assert hit["snippet"] == "build a **kanji** deck"
    # Scoped: the other chat's words are not found here.
    assert cli_store.json("recall", chats["kanji"], "sidecar")["hits"] == []


def test_recall_text_is_the_card(cli_store: Cli, chats: dict[str, str]) -> None:
    out = cli_store.ok("recall", chats["kanji"], "kanji")
    assert out.splitlines()[0] == 'recall "kanji" in this chat: 1 hit'
    assert "build a **kanji** deck" in out


def test_find_json_shape(cli_store: Cli, chats: dict[str, str]) -> None:
    doc = cli_store.json("find", "kanji deck", "--now", NOW)
    assert doc["confident"] is True and doc["reason"] == "only-hit"
    assert doc["unknown_terms"] == [] and doc["window"] is None
    [hit] = doc["hits"]
    assert {
        "session_id",
        "title",
        "score",
        "status",
        "snippet",
        "harness",
        "updated_at",
        "created_at",
        "matched_terms",
    } <= set(hit)
    assert (hit["session_id"], hit["title"], hit["status"]) == (
        chats["kanji"],
        "Kanji flashcards",
        "active",
    )


def test_find_with_now_harness_and_window(cli_store: Cli, chats: dict[str, str]) -> None:
    # The sidecar chat ran on Sunday 2026-09-20: in the calendar week before
    # last, so "last week" (Monday 21st .. Monday 28th) does not hold it.
    doc = cli_store.json("find", "sidecar last week", "--now", NOW)
    assert doc["window"] == {
        "phrase": "last week",
        "start": "2026-09-21T00:00:00.000Z",
        "end": "2026-09-28T00:00:00.000Z",
    }
    assert doc["hits"] == doc["outside_window"]
    assert [h["session_id"] for h in doc["outside_window"]] == [chats["sidecar"]]
    doc = cli_store.json("find", "sidecar on 2026-09-20", "--now", NOW)
    assert [h["session_id"] for h in doc["hits"]] == [chats["sidecar"]]
    doc = cli_store.json("find", "kanji last week", "--now", NOW)  # Sunday the 27th
    assert [h["session_id"] for h in doc["hits"]] == [chats["kanji"]]
    doc = cli_store.json("find", "sidecar 3 days ago", "--now", NOW)
    assert doc["hits"] == doc["outside_window"]  # none inside the window
    assert cli_store.json("find", "sidecar", "--harness", "claude", "--now", NOW)["hits"] == []
    doc = cli_store.json("find", "sidecar blorp", "--harness", "codex")
    assert doc["unknown_terms"] == ["blorp"] and doc["harness"] == ["codex"]


def test_find_text_output(cli_store: Cli, chats: dict[str, str]) -> None:
    out = cli_store.ok("find", "kanji", "--now", NOW)
    lines = out.splitlines()
    assert lines[0] == 'find "kanji": confident (the only chat that matches)'
    assert lines[1].startswith("  1. Kanji flashcards  claude  2026-09-27 15:00")
    assert chats["kanji"] in lines[2]
    assert "no chats found" in cli_store.ok("find", "nothingmatches")


def test_find_text_lists_the_matches_it_says_are_listed_apart(
    cli_store: Cli, chats: dict[str, str]
) -> None:
    out = cli_store.ok("find", "sidecar last week", "--now", NOW)
    lines = out.splitlines()
    assert "matches from any time are listed apart" in lines[0]
    assert "  no chat matched last week; from any time:" in lines
    at = lines.index("  no chat matched last week; from any time:")
    assert lines[at + 1].startswith("  1. Sidecar crash  codex  2026-09-20 15:00")
    assert chats["sidecar"] in lines[at + 2] and "**sidecar**" in lines[at + 2]
    assert "no chats found" not in out


@pytest.mark.parametrize("command", ["find", "recall"])
@pytest.mark.parametrize("limit", ["0", "-1"])
def test_limit_below_one_is_refused(
    cli_store: Cli, chats: dict[str, str], command: str, limit: str
) -> None:
    args = ("find", "kanji") if command == "find" else ("recall", chats["kanji"], "kanji")
    result = cli_store.run(*args, "--limit", limit)
    assert result.exit_code == 2, result.output
    assert "--limit" in result.stderr and ">=1" in result.stderr
    assert len(cli_store.json(*args, "--limit", "1")["hits"]) == 1


def test_find_excludes_hyphenated_words_and_says_so(cli_store: Cli, chats: dict[str, str]) -> None:
    out = cli_store.ok("find", "kanji OR sidecar -eof", "--now", NOW)
    assert "  excluding chats with: eof" in out.splitlines()
    assert chats["kanji"] in out and chats["sidecar"] not in out
    doc = cli_store.json("find", "sidecar -eof", "--now", NOW)
    assert doc["hits"] == [] and doc["excluded_terms"] == ["eof"]


def test_find_help_documents_the_time_grammar(cli_store: Cli) -> None:
    out = cli_store.ok("find", "--help")
    for phrase in (
        "last week",
        "the previous calendar week",
        "2025-10-03",
        "in 2024",
        "an hour ago",
    ):
        assert phrase in out


def test_end_and_archive_mark_chats_that_stay_findable(
    cli_store: Cli, chats: dict[str, str]
) -> None:
    assert cli_store.ok("end", chats["kanji"]).strip() == f"{chats['kanji']} ended"
    archived = cli_store.json("archive", chats["sidecar"])
    assert (archived["id"], archived["status"]) == (chats["sidecar"], "archived")
    statuses = {h["title"]: h["status"] for h in cli_store.json("find", "kanji OR sidecar")["hits"]}
    assert statuses == {"Kanji flashcards": "ended", "Sidecar crash": "archived"}
    assert cli_store.json("recall", chats["kanji"], "deck")["hits"] != []
    assert "[ended]" in cli_store.ok("find", "kanji")


def test_errors_exit_with_one_line(cli_store: Cli, chats: dict[str, str]) -> None:
    for args, code in [
        (("recall", "missing", "x"), 3),
        (("end", "missing"), 3),
        (("archive", "missing"), 3),
        (("find", "x", "--now", "not-a-time"), 2),
    ]:
        result = cli_store.run(*args)
        assert result.exit_code == code, (args, result.output)
        assert len(result.stderr.splitlines()) == 1
        assert result.stderr.startswith("error: ")
