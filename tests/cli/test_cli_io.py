"""`forest export` and `forest import jsonl`: exact round trips, all-or-nothing imports.

Round trips compare the export of both stores byte for byte.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from sessionforest import Forest as Store
from sessionforest.demo import build_demo

if TYPE_CHECKING:
    from conftest import ForestCli


def test_export_import_round_trips_byte_for_byte(
    forest: ForestCli, fresh: ForestCli, branched: dict[str, str], tmp_path: Path
) -> None:
    sid = branched["session"]
    forest.ok("append", sid, "-k", "user.message", "-t", 'ünïcödé ✓ "quoted"\nnew line')
    forest.ok("seek", sid, "4")  # leave the head off the newest branch
    exported = forest.ok("export", sid)
    assert len(exported.splitlines()) == 1 + 6
    dump = tmp_path / "session.jsonl"
    dump.write_text(exported, encoding="utf-8")
    assert fresh.ok("import", "jsonl", str(dump)).strip() == sid
    assert fresh.ok("export", sid).encode() == exported.encode()
    assert fresh.json("tree", sid) == forest.json("tree", sid)


def test_export_round_trips_the_demo(forest: ForestCli, fresh: ForestCli, tmp_path: Path) -> None:
    with Store.open(forest.db) as store:
        sid = build_demo(store)
    out = tmp_path / "demo.jsonl"
    forest.ok("export", sid, "-o", str(out))
    assert fresh.json("import", "jsonl", str(out))["id"] == sid
    assert fresh.ok("export", sid).encode() == out.read_bytes()


def test_export_to_a_file_matches_stdout(
    forest: ForestCli, branched: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "out.jsonl"
    result = forest.run("export", branched["session"], "-o", str(out))
    assert result.exit_code == 0
    assert result.stdout == ""
    assert f"exported 5 entries to {out}" in result.stderr
    assert out.read_text(encoding="utf-8") == forest.ok("export", branched["session"])
    header = orjson.loads(out.read_bytes().splitlines()[0])
    assert (header["type"], header["id"]) == ("session", branched["session"])
    assert list(tmp_path.glob(".out.jsonl.*")) == []  # the temporary file is gone


def test_export_of_an_unknown_session_creates_no_file(forest: ForestCli, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    forest.create_store()
    forest.fail(3, "export", "nope", "-o", str(out))
    assert not out.exists()
    assert list(tmp_path.glob("*.tmp")) == []


def test_importing_the_same_session_twice_is_refused(
    forest: ForestCli, branched: dict[str, str], tmp_path: Path
) -> None:
    dump = tmp_path / "s.jsonl"
    forest.ok("export", branched["session"], "-o", str(dump))
    line = forest.fail(4, "import", "jsonl", str(dump))
    assert branched["session"] in line
    assert "already exists" in line


def test_a_bad_line_names_file_and_line_and_imports_nothing(
    forest: ForestCli, fresh: ForestCli, branched: dict[str, str], tmp_path: Path
) -> None:
    lines = forest.ok("export", branched["session"]).splitlines()
    lines[3] = lines[3].replace('"sequence":3', '"sequence":"three"')
    dump = tmp_path / "bad.jsonl"
    dump.write_text("\n".join(lines) + "\n", encoding="utf-8")
    line = fresh.fail(1, "import", "jsonl", str(dump))
    assert f"{dump}:4" in line
    assert "nothing of this chat was imported" in line
    assert fresh.json("sessions", "--all") == []


def test_importing_a_missing_file_is_a_usage_error(forest: ForestCli, tmp_path: Path) -> None:
    assert "does not exist" in forest.fail(2, "import", "jsonl", str(tmp_path / "none.jsonl"))


def test_export_counts_one_entry_and_one_message_in_the_singular(
    forest: ForestCli, session: str, tmp_path: Path
) -> None:
    forest.ok("append", session, "-k", "user.message", "-t", "only")
    out = tmp_path / "one.jsonl"
    assert f"exported 1 entry to {out}" in forest.run("export", session, "-o", str(out)).stderr
    result = forest.run("export", session, "--format", "yoagent", "-o", str(out))
    assert f"exported 1 message to {out}" in result.stderr


DATA = Path(__file__).parents[2].parent / "shared" / "data" / "format-fixtures" / "agent-sessions"
PROVENANCE = ("origin_cwd", "git_branch", "git_commit", "git_repository", "origin_project")


def test_export_carries_where_the_chat_ran(
    forest: ForestCli, fresh: ForestCli, tmp_path: Path
) -> None:
    """The provenance an import records (session_meta's cwd and git for Codex, the project
    for Gemini CLI) goes into the export's header and comes back from `forest import jsonl`."""
    forest.ok("import", "codex", str(DATA / "codex" / "small.jsonl"))
    project = tmp_path / ".gemini" / "tmp" / "widgets" / "chats"
    project.mkdir(parents=True)
    gemini = project / "session-2026-03-01T10-00-abcd1234.jsonl"
    gemini.write_bytes((DATA / "gemini" / "jsonl_v040.jsonl").read_bytes())
    forest.ok("import", "gemini", str(gemini))
    listed = {s["id"]: s for s in forest.json("sessions")}
    assert any(s["git_commit"] for s in listed.values())  # the fixtures state some
    assert any(s["origin_project"] for s in listed.values())
    for sid, shown in listed.items():
        exported = forest.ok("export", sid)
        header = orjson.loads(exported.splitlines()[0])
        assert {k: header[k] for k in PROVENANCE} == {k: shown[k] for k in PROVENANCE}
        dump = tmp_path / f"{sid}.jsonl"
        dump.write_text(exported, encoding="utf-8")
        assert fresh.ok("import", "jsonl", str(dump)).strip() == sid
        back = next(s for s in fresh.json("sessions") if s["id"] == sid)
        assert {k: back[k] for k in PROVENANCE} == {k: shown[k] for k in PROVENANCE}
        assert fresh.ok("export", sid) == exported


def test_an_export_written_before_provenance_still_imports(
    forest: ForestCli, fresh: ForestCli, tmp_path: Path
) -> None:
    forest.ok("import", "codex", str(DATA / "codex" / "small.jsonl"))
    (shown,) = forest.json("sessions")
    lines = forest.ok("export", shown["id"]).splitlines()
    header = orjson.loads(lines[0])
    for key in PROVENANCE[1:]:
        del header[key]
    dump = tmp_path / "old.jsonl"
    dump.write_text("\n".join([orjson.dumps(header).decode(), *lines[1:]]) + "\n")
    assert fresh.ok("import", "jsonl", str(dump)).strip() == shown["id"]
    (back,) = fresh.json("sessions")
    assert back["git_branch"] is None and back["origin_cwd"] == shown["origin_cwd"]
