"""Every command takes a unique id prefix wherever it takes an id, as git takes a short hash.

An ambiguous prefix exits 3 listing the candidates (sessions with their titles);
a miss exits 3 and suggests the ids one typo away.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import pytest

from sessionforest import Forest as Store

if TYPE_CHECKING:
    from conftest import ForestCli

# Read commands: the same output whether named by full id or by prefix.
READS = [
    ["log"],
    ["log", "--json"],
    ["tree"],
    ["tips"],
    ["status"],
    ["export"],
    ["export", "--format", "yoagent"],
    ["recall", "{sid}", "hello"],
]


def _args(template: list[str], sid: str) -> list[str]:
    args = [a.format(sid=sid) for a in template]
    return args if "{sid}" in template else [args[0], sid, *args[1:]]


@pytest.mark.parametrize("template", READS, ids=lambda t: " ".join(t))
def test_reads_take_a_session_prefix(
    forest: ForestCli, branched: dict[str, str], template: list[str]
) -> None:
    sid = branched["session"]
    by_prefix = forest.ok(*_args(template, sid[:6]))
    assert by_prefix == forest.ok(*_args(template, sid))
    assert by_prefix.strip()


def test_writes_take_a_session_prefix(
    forest: ForestCli, branched: dict[str, str], tmp_path: Path
) -> None:
    sid = branched["session"]
    short = sid[:6]
    appended = forest.json("append", short, "-k", "user.message", "-t", "more")
    assert appended["session_id"] == sid
    assert forest.json("seek", short, "1")["id"] == branched["hello"]
    label = forest.json("checkpoint", short, "here")
    assert forest.json("seek-checkpoint", short, "here")["id"] == label["id"]
    assert forest.json("end", short)["status"] == "ended"
    assert forest.json("archive", short)["status"] == "archived"
    gasp = forest.json("export", "gasp", short, str(tmp_path / "gasp"))
    assert sid in gasp["relative"]  # the default run id is the full session id


def test_entries_take_an_id_prefix_everywhere(forest: ForestCli, branched: dict[str, str]) -> None:
    sid = branched["session"]
    ids = [branched[k] for k in ("hello", "hi", "start", "first", "second")]

    def shortest(entry_id: str) -> str:
        return next(
            entry_id[:n]
            for n in range(1, 27)
            if sum(other.startswith(entry_id[:n]) for other in ids) == 1
            and not entry_id[:n].isdigit()
        )

    assert forest.ok("seek", sid, shortest(branched["first"])).strip() == branched["first"]
    child = forest.json(
        "append",
        sid,
        "-k",
        "user.message",
        "-t",
        "below hi",
        "--parent",
        shortest(branched["hi"]),
        "--expect-head",
        shortest(branched["first"]),
    )
    assert child["parent_id"] == branched["hi"]
    status = forest.json("status", sid, "--entry", shortest(branched["start"]))
    assert status["entry"] == branched["start"]


@pytest.fixture
def twins(forest: ForestCli) -> tuple[str, str]:
    a, b = "01k7aaaaaaaaaaaaaaaaaaaaaa", "01k7abbbbbbbbbbbbbbbbbbbbb"
    with Store.open(forest.db) as store:
        store.create_session("Fix the lock", session_id=a)
        store.create_session("Plan the migration", session_id=b)
    return a, b


def test_an_ambiguous_prefix_exits_3_listing_candidates_and_titles(
    forest: ForestCli, twins: tuple[str, str]
) -> None:
    a, b = twins
    line = forest.fail(3, "log", "01k7a")
    assert "ambiguous" in line
    assert f'{a} ("Fix the lock")' in line
    assert f'{b} ("Plan the migration")' in line
    assert forest.ok("log", "01k7aa") == forest.ok("log", a)


def test_a_miss_says_did_you_mean(forest: ForestCli, twins: tuple[str, str]) -> None:
    a, _ = twins
    typo = a[:-1] + "b"  # a full id, one character off
    line = forest.fail(3, "log", typo)
    assert line == f'error: unknown session: {typo}; did you mean {a} ("Fix the lock")?'
    assert "did you mean" not in forest.fail(3, "log", "zzzzzzzz")


def test_an_entry_miss_in_a_prefixed_session_names_both(
    forest: ForestCli, branched: dict[str, str]
) -> None:
    sid = branched["session"]
    result = forest.run("seek", sid[:6], "zzzzzz", "--json")
    assert result.exit_code == 3
    error = orjson.loads(result.stdout)["error"]
    assert (error["type"], error["entry_id"], error["session_id"]) == (
        "UnknownEntry",
        "zzzzzz",
        sid,
    )
