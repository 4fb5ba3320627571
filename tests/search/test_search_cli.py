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
    doc = cli_store.json("find", "sidecar last week", "--now", NOW)
    assert [h["session_id"] for h in doc["hits"]] == [chats["sidecar"]]
    assert doc["window"] == {
        "phrase": "last week",
        "start": "2026-09-16T15:00:00.000Z",
        "end": "2026-09-30T15:00:00.000Z",
    }
    assert cli_store.json("find", "sidecar 3 days ago", "--now", NOW)["hits"] == []
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
