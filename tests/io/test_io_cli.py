"""The `forest import <format>` and `forest export` commands, run in-process.

Covers the summary and `--json` report, `--skip-bad` reporting, the error line
for a bad file, `sessions --json` sources, both export layouts and GASP files.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from sessionforest import Session
from sessionforest.cli.main import cli
from sessionforest.io.common import Ids

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
REWIND = (
    DATA / "claude-code/real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
)
PI = DATA / "pi/large-session.jsonl"


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
def forest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    monkeypatch.delenv("FOREST_DB", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return Cli(tmp_path / "forest.db")


def test_import_prints_a_summary_and_sessions_show_the_source(forest: Cli) -> None:
    out = forest.ok("import", "claude-code", str(REWIND.parent))
    assert out == (
        "imported 2 chats (2 new, 0 worker), 65 entries added (0 already there), "
        "1 branch, 0 skipped lines\n"
    )
    report = forest.json("import", "claude-code", str(REWIND.parent))
    assert (report["chats"], report["entries"], report["unchanged"]) == (2, 0, 65)
    [listed] = [s for s in forest.json("sessions") if s["source"]["path"] == str(REWIND)]
    assert listed["source"] == {"format": "claude-code", "path": str(REWIND), "id": REWIND.stem}
    assert listed["harness"] == "claude-code" and listed["entry_count"] == 61


def test_the_default_claude_code_directory_is_under_home(forest: Cli, tmp_path: Path) -> None:
    result = forest.run("import", "claude-code")
    assert result.exit_code == 2 and "no Claude Code transcripts at" in result.stderr
    projects = tmp_path / "home" / ".claude" / "projects" / "-tmp"
    projects.mkdir(parents=True)
    shutil.copy(REWIND, projects)
    assert forest.json("import", "claude-code")["chats"] == 1


def test_skip_bad_reports_every_skipped_line_and_without_it_one_error(
    forest: Cli, tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    lines = PI.read_text().splitlines()
    lines[5], lines[9] = "{oops", "[]"
    path.write_text("\n".join(lines) + "\n")
    result = forest.run("import", "pi", str(path))
    assert result.exit_code == 1
    [error] = result.stderr.splitlines()
    assert error.startswith(f"error: {path}:6: invalid JSON: ")
    assert error.endswith("nothing of this chat was imported")
    assert forest.json("sessions") == []
    out = forest.ok("import", "pi", str(path), "--skip-bad").splitlines()
    assert out[0].endswith("2 skipped lines")
    assert [line.split(": ")[0] for line in out[1:]] == [f"skipped {path}:6", f"skipped {path}:10"]
    assert out[2].endswith("expected a JSON object")


def test_export_keeps_its_session_form_and_adds_yoagent_and_gasp(
    forest: Cli, tmp_path: Path
) -> None:
    forest.ok("import", "pi", str(PI))
    header = json.loads(PI.read_text().splitlines()[0])
    sid = Ids("pi", header["id"]).session
    native = forest.ok("export", sid)
    assert forest.ok("export", "session", sid) == native
    assert orjson.loads(native.splitlines()[0])["id"] == sid
    yo = forest.ok("export", sid, "--format", "yoagent")
    assert len(Session.from_jsonl(yo)) == len(yo.split("\n"))
    out = tmp_path / "y.jsonl"
    result = forest.run("export", "--format", "yoagent", "-o", str(out), sid)
    assert result.exit_code == 0 and out.read_text() == yo
    assert result.stderr.startswith(f"exported {len(yo.split(chr(10)))} messages to {out}")

    line = forest.ok("export", "gasp", sid, str(tmp_path / "agent"))
    digest, relative = line.split()
    file = tmp_path / "agent" / relative
    assert relative == f"transcripts/{sid}.jsonl.gz"
    assert hashlib.sha256(file.read_bytes()).hexdigest() == digest
    assert gzip.decompress(file.read_bytes()).decode() == native
    again = forest.json("export", "gasp", sid, str(tmp_path / "agent"), "--run-id", "run_7")
    assert again["sha256"] == digest  # same tree, same bytes: reproducible
    assert again["relative"] == "transcripts/run_7.jsonl.gz"
    bad = forest.run("export", "gasp", sid, str(tmp_path / "agent"), "--run-id", "../up")
    assert bad.exit_code == 1 and "invalid run id" in bad.stderr
    names = {p.name for p in (tmp_path / "agent" / "transcripts").iterdir()}
    assert names == {"run_7.jsonl.gz", f"{sid}.jsonl.gz"}  # no temporary file left
    assert forest.run("export", "gasp", "nope", str(tmp_path / "x")).exit_code == 3
    assert not (tmp_path / "x").exists()


def test_native_jsonl_import_records_its_source(forest: Cli, tmp_path: Path) -> None:
    forest.ok("import", "pi", str(PI))
    sid = forest.json("sessions")[0]["id"]
    dump = tmp_path / "s.jsonl"
    forest.ok("export", sid, "-o", str(dump))
    other = Cli(tmp_path / "other.db")
    assert other.json("import", "jsonl", str(dump))["id"] == sid
    assert other.json("sessions")[0]["source"] == {"format": "native", "path": str(dump), "id": sid}


def test_export_without_a_session_is_a_usage_error(forest: Cli) -> None:
    for args in (["export"], ["export", "--format", "yoagent"], ["export", "gasp", "sid"]):
        result = forest.run(*args)
        assert result.exit_code == 2, args
        [line] = result.stderr.splitlines()
        assert line.startswith("error: Missing argument"), line


def test_a_failed_gasp_export_leaves_no_folder_behind(forest: Cli, tmp_path: Path) -> None:
    forest.ok("import", "pi", str(PI))
    sid = forest.json("sessions")[0]["id"]
    # An entry this sessionforest cannot read: the export fails half-way through.
    with closing(sqlite3.connect(forest.db)) as conn, conn:
        conn.execute(
            "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
            "semantic_schema_version, kind, payload, context_visibility, created_at) "
            "VALUES ('future', ?, NULL, 9999, 99, 'user.message', '{}', 'context', "
            "'2025-01-01T00:00:00.000Z')",
            (sid,),
        )
    fresh = tmp_path / "new" / "agent"
    result = forest.run("export", "gasp", sid, str(fresh))
    assert result.exit_code == 6 and "semantic schema version 99" in result.stderr
    assert not (tmp_path / "new").exists()
    kept = tmp_path / "kept"
    (kept / "other").mkdir(parents=True)  # the user's folder: it stays, with what it holds
    assert forest.run("export", "gasp", sid, str(kept)).exit_code == 6
    assert [p.name for p in kept.iterdir()] == ["other"]
