"""append, seek, checkpoint, seek-checkpoint, log, tree and tips through the CLI.

The `branched` fixture gives a session with two tips and a checkpoint to draw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
import pytest

from sessionforest.cli.main import cli

if TYPE_CHECKING:
    from conftest import ForestCli

ENTRY_FIELDS = {
    "id",
    "parent_id",
    "sequence",
    "kind",
    "payload",
    "context_visibility",
    "created_at",
}
NODE_FIELDS = {"id", "parent_id", "sequence", "kind", "context_visibility", "active"}


def _blocks(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        ("user.message", _blocks("T")),
        ("assistant.message", _blocks("T")),
        ("system.message", _blocks("T")),
        ("checkpoint", {"label": "T", "summary": "T"}),
        ("compaction", {"summary": "T"}),
        ("branch.summary", {"summary": "T"}),
    ],
)
def test_text_builds_the_natural_payload_of_each_kind(
    forest: ForestCli, session: str, kind: str, payload: dict[str, Any]
) -> None:
    created = forest.json("append", session, "--kind", kind, "--text", "T")
    [entry] = forest.json("log", session)
    assert entry["id"] == created["id"]
    assert (entry["kind"], entry["payload"]) == (kind, payload)


def test_payload_parent_and_visibility(forest: ForestCli, branched: dict[str, str]) -> None:
    sid = branched["session"]
    call = {"call_id": "c1", "name": "grep", "input": {"pattern": "lock"}}
    # "2" is a sequence number: the new entry branches off "hi", not off the head.
    eid = forest.ok(
        "append", sid, "-k", "tool.started", "-p", orjson.dumps(call).decode(), "--parent", "2"
    ).strip()
    shown = forest.ok(
        "append", sid, "-k", "user.message", "-t", "see", "--visibility", "hidden"
    ).strip()
    path = forest.json("log", sid)
    assert [e["id"] for e in path] == [branched["hello"], branched["hi"], eid, shown]
    assert path[2]["payload"] == call
    assert path[2]["context_visibility"] == "hidden"  # the kind's default
    assert path[3]["context_visibility"] == "hidden"  # the option's


def test_payload_can_come_from_stdin(forest: ForestCli, session: str) -> None:
    forest.ok("append", session, "-k", "compaction", "-p", "-", input='{"summary": "short"}')
    assert forest.json("log", session)[0]["payload"] == {"summary": "short"}


def test_log_text_shows_sequence_kind_label_and_preview(
    forest: ForestCli, branched: dict[str, str]
) -> None:
    long_text = "word " * 40
    forest.ok("append", branched["session"], "-k", "assistant.message", "-t", long_text)
    lines = forest.ok("log", branched["session"]).splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["1", "user.message"],
        ["2", "assistant.message"],
        ["3", "checkpoint"],
        ["5", "user.message"],
        ["6", "assistant.message"],
    ]
    assert lines[2].endswith("[start] greeted")
    assert lines[-1].endswith("…")
    assert len(lines[-1]) < len(long_text)


def test_log_json_has_the_stable_field_names(forest: ForestCli, branched: dict[str, str]) -> None:
    path = forest.json("log", branched["session"])
    assert [e["id"] for e in path] == [branched[k] for k in ("hello", "hi", "start", "second")]
    for entry in path:
        assert entry.keys() >= ENTRY_FIELDS
    assert path[0]["parent_id"] is None
    assert [e["sequence"] for e in path] == [1, 2, 3, 5]
    assert path[2]["payload"] == {"label": "start", "summary": "greeted"}


def test_log_limit_shows_the_last_entries_of_the_path(
    forest: ForestCli, branched: dict[str, str]
) -> None:
    want = [branched[k] for k in ("start", "second")]
    assert [e["id"] for e in forest.json("log", branched["session"], "--limit", "2")] == want
    lines = forest.ok("log", branched["session"], "--limit", "2").splitlines()
    assert [line.split()[0] for line in lines] == ["3", "5"]


def test_tree_draws_every_branch_with_head_and_label(
    forest: ForestCli, branched: dict[str, str]
) -> None:
    assert forest.ok("tree", branched["session"]).splitlines() == [
        "* 1 user.message  hello",
        "* 2 assistant.message  hi",
        "* 3 checkpoint [start]  greeted",
        "  ├── 4 user.message  first",
        "* └── 5 user.message  second  <- head",
    ]


def test_tree_on_a_terminal_is_bold_on_the_active_path(
    forest: ForestCli, branched: dict[str, str]
) -> None:
    result = forest.runner.invoke(
        cli, ["--db", str(forest.db), "tree", branched["session"]], color=True
    )
    lines = result.stdout.splitlines()
    assert [line.startswith("\x1b[1m* ") for line in lines] == [True, True, True, False, True]
    assert lines[3] == "  ├── 4 user.message  first"  # inactive: no escape codes at all
    assert "\x1b[22m" not in result.stdout  # nothing switches the bold off again


def test_tree_json_structure(forest: ForestCli, branched: dict[str, str]) -> None:
    doc = forest.json("tree", branched["session"])
    assert list(doc) == ["head", "active_path", "tips", "checkpoints", "nodes", "divergence"]
    assert doc["divergence"] == "unknown"  # the session has no directory
    assert doc["head"] == branched["second"]
    assert doc["active_path"] == [branched[k] for k in ("hello", "hi", "start", "second")]
    assert doc["tips"] == [branched["first"], branched["second"]]
    assert doc["checkpoints"] == [{"id": branched["start"], "label": "start"}]
    assert [set(node) for node in doc["nodes"]] == [NODE_FIELDS] * 5
    active = {n["id"] for n in doc["nodes"] if n["active"]}
    assert active == set(doc["active_path"])
    first = next(n for n in doc["nodes"] if n["id"] == branched["first"])
    assert first == {
        "id": branched["first"],
        "parent_id": branched["start"],
        "sequence": 4,
        "kind": "user.message",
        "context_visibility": "context",
        "active": False,
    }


def test_tips_text_and_json(forest: ForestCli, branched: dict[str, str]) -> None:
    lines = forest.ok("tips", branched["session"]).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"  {branched['first']}")
    assert lines[1].startswith(f"* {branched['second']}")
    assert lines[1].endswith("<- head")
    tips = forest.json("tips", branched["session"])
    assert [(t["id"], t["active"]) for t in tips] == [
        (branched["first"], False),
        (branched["second"], True),
    ]
    assert tips[0].keys() >= ENTRY_FIELDS


def test_seek_by_id_and_by_sequence_number(forest: ForestCli, branched: dict[str, str]) -> None:
    sid = branched["session"]
    assert forest.ok("seek", sid, branched["first"]).strip() == branched["first"]
    assert forest.json("tree", sid)["head"] == branched["first"]
    hi = forest.json("seek", sid, "2")
    assert hi["id"] == branched["hi"]
    logged = forest.json("log", sid)[-1]
    del logged["diverged"]
    assert hi == logged  # --json answers with the new head entry, as `log` shows it
    assert [e["id"] for e in forest.json("log", sid)] == [branched["hello"], branched["hi"]]
    # Seeking is only a head move: both branches are still there.
    assert forest.json("tree", sid)["tips"] == [branched["first"], branched["second"]]


def test_seek_with_expect_head(forest: ForestCli, branched: dict[str, str]) -> None:
    sid = branched["session"]
    forest.ok("seek", sid, "1", "--expect-head", branched["second"])
    line = forest.fail(4, "seek", sid, "2", "--expect-head", branched["second"])
    assert "moved" in line
    assert forest.json("tree", sid)["head"] == branched["hello"]


def test_checkpoint_prints_its_id_and_seek_checkpoint_takes_the_latest(
    forest: ForestCli, branched: dict[str, str]
) -> None:
    sid = branched["session"]
    again = forest.json("checkpoint", sid, "start")["id"]
    forest.ok("append", sid, "-k", "user.message", "-t", "later")
    assert forest.json("seek-checkpoint", sid, "start")["id"] == again
    path = forest.json("log", sid)
    assert path[-1]["id"] == again
    assert path[-1]["payload"] == {"label": "start", "summary": "start"}


def test_expect_head_on_append(forest: ForestCli, session: str) -> None:
    # '' stands for "the session is still empty".
    first = forest.ok("append", session, "-k", "user.message", "-t", "a", "--expect-head", "")
    forest.fail(4, "append", session, "-k", "user.message", "-t", "b", "--expect-head", "")
    forest.ok("append", session, "-k", "user.message", "-t", "b", "--expect-head", first.strip())
    assert len(forest.json("log", session)) == 2


def test_an_empty_session_draws_as_no_entries(forest: ForestCli, session: str) -> None:
    assert forest.ok("tree", session).strip() == "(no entries)"
    assert forest.ok("log", session).strip() == "(no entries)"
    assert forest.ok("tips", session) == ""
    assert forest.json("tree", session) == {
        "head": None,
        "active_path": [],
        "tips": [],
        "checkpoints": [],
        "nodes": [],
        "divergence": "unknown",
    }


def test_writes_answer_json_with_the_entry_a_script_needs_next(
    forest: ForestCli, session: str
) -> None:
    def logged() -> list[dict[str, Any]]:
        return [
            {k: v for k, v in e.items() if k != "diverged"} for e in forest.json("log", session)
        ]

    first = forest.json("append", session, "-k", "user.message", "-t", "one")
    assert first == logged()[-1]  # the full entry, exactly as `log --json` shows it
    assert (first["sequence"], first["parent_id"], first["payload"]) == (
        1,
        None,
        {"content": [{"type": "text", "text": "one"}]},
    )
    # Its id is the new head: the next write can insist on it.
    second = forest.json(
        "append", session, "-k", "assistant.message", "-t", "two", "--expect-head", first["id"]
    )
    assert second["parent_id"] == first["id"]
    mark = forest.json("checkpoint", session, "done", "--summary", "both said")
    assert (mark["kind"], mark["payload"]) == (
        "checkpoint",
        {"label": "done", "summary": "both said"},
    )
    assert mark == logged()[-1]
    back = forest.json("seek", session, first["id"])
    assert back == first
    assert forest.json("seek-checkpoint", session, "done") == mark
