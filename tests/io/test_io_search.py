"""After importing every sample, `forest find` and `forest recall` reach all three formats.

Each query word is first checked against the raw file, so a hit shows the
imported text is searchable, not merely that the index returned something.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from sessionforest.cli.main import cli
from sessionforest.io.common import Ids

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
REWIND = (
    DATA / "claude-code/real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
)
PI = DATA / "pi/before-compaction.jsonl"
CHATGPT = DATA / "chatgpt/thinking-summaries.json"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = tmp_path_factory.mktemp("search") / "forest.db"
    runner = CliRunner()

    def invoke(*args: str) -> Any:
        result = runner.invoke(cli, ["--db", str(db), *args, "--json"])
        assert result.exit_code == 0, (result.stderr, result.exception)
        return orjson.loads(result.stdout)

    invoke("import", "claude-code", str(DATA / "claude-code"))
    invoke("import", "pi", str(DATA / "pi"))
    invoke("import", "chatgpt", str(CHATGPT))
    return invoke


@pytest.mark.parametrize(
    ("path", "fmt", "source_id", "query"),
    [
        (REWIND, "claude-code", REWIND.stem, "dev-docs"),
        (PI, "pi", "ffae836b-9420-4060-ac13-7745215f90ff", "AgentSession"),
        (CHATGPT, "chatgpt", "fixture", "answer 2"),
    ],
    ids=["claude-code", "pi", "chatgpt"],
)
def test_find_and_recall_reach_every_format(
    run: Any, path: Path, fmt: str, source_id: str, query: str
) -> None:
    assert query.encode() in path.read_bytes()
    sid = Ids(fmt, source_id).session
    found = run("find", query)
    assert sid in [hit["session_id"] for hit in found["hits"]]
    recalled = run("recall", sid, query)
    assert recalled["hits"] and all(h["session_id"] == sid for h in recalled["hits"])
    assert any(query.split()[0].lower() in h["snippet"].lower() for h in recalled["hits"])


def test_worker_chats_are_searchable_but_not_listed(run: Any) -> None:
    listed = {s["id"] for s in run("sessions")}
    every = run("sessions", "--all")
    workers = [s for s in every if s["visibility"] == "hidden"]
    assert workers and not listed & {s["id"] for s in workers}
    assert {s["source"]["format"] for s in every} == {"claude-code", "pi", "chatgpt"}
