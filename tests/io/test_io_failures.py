"""An import goes on past a chat that fails, and says which failed, where and why.

Directories of copies of the real samples, with one file damaged, one cut
mid-line (as a transcript still being written is) and the rest intact.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from sessionforest import Forest
from sessionforest.cli.main import cli
from sessionforest.io.common import Ids

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
PROJECT = DATA / "claude-code/real_projects/-experiments-ideas"
REWIND = PROJECT / "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
SIMPLE = DATA / "claude-code/synthetic/dag_simple.jsonl"
BRANCH = DATA / "claude-code/synthetic/dag_fork.jsonl"
PI = DATA / "pi/large-session.jsonl"
Dump = Callable[[], dict[str, list[tuple[Any, ...]]]]


def _project(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """A project folder: (folder, damaged file, file cut mid-line, intact file)."""
    root = tmp_path / "projects" / "-work"
    root.mkdir(parents=True)
    damaged, cut, intact = (shutil.copy(p, root / p.name) for p in (REWIND, SIMPLE, BRANCH))
    lines = Path(damaged).read_text().splitlines(keepends=True)
    lines[6] = lines[6][:-20] + "\n"  # line 7: JSON cut short, the file goes on
    Path(damaged).write_text("".join(lines))
    text = Path(cut).read_text()
    Path(cut).write_text(text + text.splitlines()[-1][:-15])  # a last line still being written
    return root, Path(damaged), Path(cut), Path(intact)


def test_a_directory_import_imports_every_other_file_and_lists_the_one_that_failed(
    forest: Forest, tmp_path: Path
) -> None:
    root, damaged, cut, intact = _project(tmp_path)
    report = forest.import_chats("claude-code", root.parent)
    assert sorted(c.source_path for c in report.chats) == sorted([str(cut), str(intact)])
    [failure] = report.failed
    assert (failure.path, failure.line) == (str(damaged), 7)
    assert failure.reason.startswith("invalid JSON: ")
    assert failure.message.endswith("nothing of this chat was imported")
    assert not report.ok
    # The failed file's chat is not in the store; the others are, whole.
    assert [s.source_path for s in forest.sessions()].count(str(damaged)) == 0
    assert forest.session(Ids("claude-code", intact.stem).session).entry_count == len(
        intact.read_text().splitlines()
    )
    assert report.to_json()["failed"] == [failure.to_json()]


def test_an_incomplete_last_line_is_skipped_with_a_note_and_read_once_whole(
    forest: Forest, tmp_path: Path
) -> None:
    _, _, cut, _ = _project(tmp_path)
    whole = SIMPLE.read_text().splitlines()
    report = forest.import_chats("claude-code", cut)
    assert report.ok and report.skipped == []
    assert report.entries == len(whole)
    number = len(whole) + 1
    assert report.notes == [
        f"{cut}: line {number} is incomplete (the file ends in the middle of it, as a file "
        "still being written does): skipped; a later import reads it once it is whole"
    ]
    # The transcript is finished later: the line is read then, nothing else changes.
    record = json.loads(whole[-1])
    record["uuid"], record["parentUuid"] = "finished", record["uuid"]
    cut.write_text("\n".join([*whole, json.dumps(record)]) + "\n")
    again = forest.import_chats("claude-code", cut)
    assert (again.entries, again.unchanged, again.notes) == (1, len(whole), [])


def test_a_bad_line_that_is_not_the_last_still_fails_its_chat(
    forest: Forest, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    lines = SIMPLE.read_text().splitlines()
    path.write_text("\n".join([*lines[:2], lines[2][:-15], *lines[3:]]))  # no newline at the end
    [failure] = forest.import_chats("claude-code", path).failed
    assert failure.line == 3 and failure.reason.startswith("invalid JSON")


def test_a_failed_chat_takes_back_its_notes_and_skips(forest: Forest, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = SIMPLE.read_text().splitlines()
    orphan = json.loads(lines[1])
    orphan["parentUuid"] = "nowhere"  # a note: imported as a root
    broken = json.loads(lines[2])
    broken["message"] = "not an object"
    path.write_text("\n".join([lines[0], json.dumps(orphan), json.dumps(broken)]) + "\n")
    report = forest.import_chats("claude-code", path)
    assert [f.line for f in report.failed] == [3]
    assert report.notes == [] and report.chats == []


def test_pi_files_of_a_directory_fail_one_by_one(forest: Forest, tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    good = Path(shutil.copy(PI, root / "b-good.jsonl"))
    bad = root / "a-bad.jsonl"
    bad.write_text('{"type": "message"}\n' + PI.read_text())
    report = forest.import_chats("pi", root)
    assert [c.source_path for c in report.chats] == [str(good)]
    assert [(f.path, f.line) for f in report.failed] == [(str(bad), 1)]


def test_the_cli_prints_what_was_imported_then_each_failure_and_exits_1(
    tmp_path: Path,
) -> None:
    root, damaged, _, _ = _project(tmp_path)
    runner = CliRunner()
    db = str(tmp_path / "forest.db")
    result = runner.invoke(cli, ["--db", db, "import", "claude-code", str(root)])
    assert result.exit_code == 1
    assert result.stdout.startswith("imported 2 chats (2 new, 0 worker), ")
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors[0].startswith(f"error: {damaged}:7: invalid JSON: ")
    assert errors[1:] == ["error: 1 chat failed (listed above); everything else was imported"]
    assert any("is incomplete" in line for line in result.stderr.splitlines())

    report = orjson.loads(
        runner.invoke(cli, ["--db", db, "import", "claude-code", str(root), "--json"]).stdout
    )
    assert [(f["path"], f["line"]) for f in report["failed"]] == [(str(damaged), 7)]
    assert report["chats"] == 2 and report["unchanged"] > 0


def test_a_cli_import_of_one_failing_file_prints_its_reason_and_exits_1(
    tmp_path: Path,
) -> None:
    _, damaged, _, _ = _project(tmp_path)
    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "f.db"), "import", "claude-code", str(damaged)]
    )
    assert result.exit_code == 1
    assert result.stdout.startswith("imported 0 chats")
    [error] = result.stderr.splitlines()
    assert error.startswith(f"error: {damaged}:7: invalid JSON")


# --- a record that says something else than it did ----------------------------------


def test_a_uuid_repeated_with_other_content_names_the_uuid_and_both_lines(
    forest: Forest, tmp_path: Path, dump: Dump
) -> None:
    lines = SIMPLE.read_text().splitlines()
    again = json.loads(lines[1])
    again["message"]["content"] = "said differently"
    path = tmp_path / "twice.jsonl"
    path.write_text("\n".join([*lines, json.dumps(again)]) + "\n")
    before = dump()
    [failure] = forest.import_chats("claude-code", path).failed
    uuid = again["uuid"]
    assert failure.message == (
        f"{path}:{len(lines) + 1}: uuid {uuid} is also on line 2, with a different content; "
        "nothing of this chat was imported"
    )
    assert failure.source_id == f"uuid {uuid}"
    assert dump() == before


def test_a_pi_entry_id_repeated_with_other_content_names_the_entry_id(
    forest: Forest, tmp_path: Path
) -> None:
    header = {"type": "session", "version": 3, "id": "s-dup", "timestamp": "2025-01-01T00:00:00Z"}
    message = {"type": "message", "id": "a1b2c3d4", "parentId": None,
               "timestamp": "2025-01-01T00:00:01Z",
               "message": {"role": "user", "content": "hello"}}  # fmt: skip
    changed = {**message, "message": {"role": "user", "content": "bye"}}
    path = tmp_path / "dup.jsonl"
    path.write_text("\n".join(json.dumps(o) for o in (header, message, changed)) + "\n")
    [failure] = forest.import_chats("pi", path).failed
    assert failure.line == 3
    assert failure.reason == "entry id a1b2c3d4 is also on line 2, with a different content"
