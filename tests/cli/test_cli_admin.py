"""`forest check` exit codes and quarantine, and `forest demo` with and without --db.

Damage is injected with plain SQL, behind the store's back.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from sessionforest import Forest as Store
from sessionforest.demo import CHECKPOINT, build_demo

if TYPE_CHECKING:
    from conftest import ForestCli


def _orphan(db: Path, sid: str) -> None:
    """Damage `sid` behind the store's back: an entry whose parent does not exist."""
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
            "semantic_schema_version, kind, payload, context_visibility, created_at) "
            "VALUES ('orphan', ?, 'missing', 6, 2, 'user.message', "
            "'{\"content\": []}', 'context', '2025-01-01T00:00:00.000Z')",
            (sid,),
        )
    conn.close()


def test_check_on_a_healthy_store_exits_0(forest: ForestCli, branched: dict[str, str]) -> None:
    assert forest.ok("check").strip() == "checked 1 session, 5 entries: ok"
    report = forest.json("check")
    assert report["ok"] is True
    assert (report["sessions_checked"], report["entries_checked"]) == (1, 5)


def test_check_finds_damage_exits_1_and_quarantines(
    forest: ForestCli, branched: dict[str, str]
) -> None:
    sid = branched["session"]
    _orphan(forest.db, sid)
    result = forest.run("check")
    assert result.exit_code == 1
    assert "entries: 1 problem\n" in result.stdout
    assert "entry orphan: orphan-parent" in result.stdout
    assert f"quarantined: {sid}" in result.stdout
    assert "quarantined" in forest.fail(6, "log", sid)
    assert forest.json("sessions")[0]["quarantine"] is not None
    assert forest.ok("sessions").splitlines()[1].split()[:2] == [sid, "quarantined"]


def test_check_json_and_no_quarantine(forest: ForestCli, branched: dict[str, str]) -> None:
    sid = branched["session"]
    _orphan(forest.db, sid)
    result = forest.run("check", "--json", "--no-quarantine")
    assert result.exit_code == 1
    assert '"ok":false' in result.stdout
    assert '"code":"orphan-parent"' in result.stdout
    assert forest.json("sessions")[0]["quarantine"] is None


def test_demo_into_an_explicit_db_has_two_tips_and_a_checkpoint(
    forest: ForestCli, tmp_path: Path
) -> None:
    target = tmp_path / "mine.db"
    out = forest.run("demo", "--db", str(target), db=False)
    assert out.exit_code == 0, out.stderr
    sid = out.stdout.strip().splitlines()[-1].split(" tree ")[1].split()[0]
    assert f"forest --db {target} tree {sid}" in out.stdout
    assert "├── " in out.stdout
    assert "<- head" in out.stdout
    assert f"[{CHECKPOINT}]" in out.stdout
    assert "Active path" in out.stdout
    # The projected context leaves out hidden entries and the abandoned branch.
    forest.db = target
    path = forest.json("log", sid)
    visible = [e for e in path if e["context_visibility"] == "context"]
    assert f"Agent context: {len(visible)} messages" in out.stdout
    assert "forest find 'database locked': confident" in out.stdout
    assert f"\n  {sid}  Fix " in out.stdout
    doc = forest.json("tree", sid)
    assert len(doc["tips"]) >= 2
    assert [c["label"] for c in doc["checkpoints"]] == [CHECKPOINT]
    assert not (tmp_path / "forest.db").exists()  # the global default was never opened


def test_demo_uses_the_global_db_and_adds_to_it(forest: ForestCli) -> None:
    forest.ok("new", "--title", "mine")
    forest.ok("demo")
    titles = [s["title"] for s in forest.json("sessions")]
    assert titles[1] == "mine"  # an explicit store is added to, never cleared
    assert len(titles) == 2


def test_demo_without_db_rebuilds_demo_db_beside_the_default_store(
    isolated_home: Path, forest: ForestCli
) -> None:
    assert not isolated_home.exists()  # no data dir yet: demo must create it
    for _ in range(2):
        result = forest.run("demo", db=False)
        assert result.exit_code == 0, result.stderr
    demo_db = isolated_home / "demo.db"
    assert str(demo_db) in result.stdout
    assert not (isolated_home / "forest.db").exists()
    with Store.open(demo_db) as store:
        assert len(store.sessions()) == 1  # the second run replaced the first


def test_demo_refuses_to_replace_a_store_named_demo_db(
    forest: ForestCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "demo.db"
    monkeypatch.setenv("FOREST_DB", str(real))
    with Store.open(real) as store:
        sid = store.create_session("precious")
    result = forest.run("demo", db=False)
    assert result.exit_code == 1
    assert "pass --db" in result.stderr
    with Store.open(real) as store:
        assert [s.id for s in store.sessions()] == [sid]


def test_build_demo_shape(tmp_path: Path) -> None:
    with Store.open(tmp_path / "d.db") as store:
        sid = build_demo(store)
        tips = store.tips(sid)
        path = store.active_path(sid)
        kinds = [e.kind for e in store.entries(sid)]
    assert len(tips) == 2
    assert path[-1].id == tips[-1].id  # the head is on the second branch
    assert [e.kind for e in path].count("checkpoint") == 1
    assert "tool.started" in kinds and "tool.completed" in kinds
    started = next(e for e in path if e.kind == "tool.started")
    assert started.context_visibility == "hidden"


def test_check_counts_in_the_singular_and_plural(forest: ForestCli, session: str) -> None:
    forest.ok("append", session, "-k", "user.message", "-t", "one")
    assert forest.ok("check").strip() == "checked 1 session, 1 entry: ok"
    forest.ok("new")
    assert forest.ok("check").strip() == "checked 2 sessions, 1 entry: ok"


def _raw(db: Path, *statements: tuple[str, tuple[str, ...]]) -> None:
    conn = sqlite3.connect(db)
    for sql, args in statements:
        conn.execute(sql, args)
    conn.commit()
    conn.close()


def test_check_reports_a_deleted_session_row_and_repair_brings_it_back(
    forest: ForestCli, branched: dict[str, str]
) -> None:
    sid = branched["session"]
    _raw(
        forest.db,
        ("DROP TRIGGER sessions_no_delete", ()),
        ("DELETE FROM sessions WHERE id = ?", (sid,)),
    )
    assert forest.ok("sessions").strip().splitlines()[1:] == []
    result = forest.run("check")
    assert result.exit_code == 1
    assert f"  session {sid}: missing-session: the session row is gone but 5 entries remain" in (
        result.stdout
    )
    assert "forest repair SESSION" in result.stdout
    report = forest.json("repair", sid)
    assert report["ok"] is True and report["released"] is True
    assert [a["code"] for a in report["actions"]] == ["recreated-session-row"]
    assert forest.ok("log", sid).count("\n") >= 4
    assert forest.ok("check").strip().endswith(": ok")


def test_repair_text_says_what_it_did_and_what_it_could_not(
    forest: ForestCli, branched: dict[str, str]
) -> None:
    sid = branched["session"]
    _orphan(forest.db, sid)
    _raw(forest.db, ("UPDATE session_heads SET active_entry_id = 'ghost'", ()))
    forest.run("check")
    result = forest.run("repair", sid)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"repaired {sid}: moved-head: the head pointed at ghost")
    assert f"set it to {branched['second']} (sequence 5)" in lines[0]
    assert lines[1].startswith(
        f"not repaired {sid} entry orphan: orphan-parent: parent missing does not exist ("
    )
    assert "entries are immutable" in lines[1]
    assert lines[2] == (
        f"session {sid} is quarantined: orphan-parent at orphan: parent missing does not exist"
    )
    assert "quarantined" in forest.fail(6, "log", sid)


def test_repair_of_a_healthy_session_and_of_an_unknown_one(
    forest: ForestCli, branched: dict[str, str]
) -> None:
    sid = branched["session"]
    assert forest.ok("repair", sid).strip() == f"session {sid} checks clean: nothing to repair"
    _raw(forest.db, ("UPDATE session_heads SET active_entry_id = 'ghost'", ()))
    forest.run("check")
    out = forest.ok("repair", sid).splitlines()
    assert out[-1] == f"session {sid} checks clean: released from quarantine"
    assert "unknown session: nobody" in forest.fail(3, "repair", "nobody")


def test_repair_help_says_what_it_cannot_fix() -> None:
    from click.testing import CliRunner

    from sessionforest.cli.main import cli

    text = " ".join(CliRunner().invoke(cli, ["repair", "--help"]).stdout.split())
    assert "Entries are immutable" in text
    assert "stays quarantined even when the damage is on a side branch" in text
