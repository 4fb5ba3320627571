"""The store's environment failing: a full disk, and driver errors, become clear StoreErrors.

A full disk is real twice over: SQLite's own size limit (`PRAGMA
max_page_count`, which fails a write with SQLITE_FULL exactly as a full
disk does) for every write path, and a 512 KiB tmpfs mounted in a private
mount namespace (`unshare`) for the CLI. After each: every acknowledged
write is there, `check` is clean, and a write after freeing space works.
"""

from __future__ import annotations

import inspect
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest, StoreError, StoreFull, StoreIOError, StoreUnreadable
from sessionforest.cli import main as cli_main
from sessionforest.model import ChatSpec
from sessionforest.store.sqlite import migrations

BIG = {"content": [{"type": "text", "text": "x" * 6000}]}


def fill_to_the_limit(forest: Forest, headroom: int = 40) -> None:
    """Cap the file a few pages above its size: the next writes run out of room."""
    pages = forest._backend.db.writer.execute("PRAGMA page_count").fetchone()[0]
    forest._backend.db.writer.execute(f"PRAGMA max_page_count = {pages + headroom}")


def bulk(forest: Forest, n: int) -> str:
    spec = ChatSpec(f"bulk-{n}", "t", "test", "2025-01-01T00:00:00Z", "test", "f", f"s{n}")
    with forest.bulk_chat(spec, Path("f")) as writer:
        parent = None
        for i in range(4):
            entry_id = f"bulk-{n}-{i}"
            writer.add(entry_id, parent, "user.message", BIG, "2025-01-01T00:00:00Z")
            parent = entry_id
        writer.head = parent
    return spec.id


# name -> one write; each returns what a later read must find.
WRITES: dict[str, Callable[[Forest, str, int], Any]] = {
    "append": lambda f, sid, n: ("entry", f.append(sid, "user.message", BIG).id),
    "append_many": lambda f, sid, n: (
        "entries",
        [e.id for e in f.append_many(sid, [("user.message", BIG, None)] * 3)],
    ),
    "create_session": lambda f, sid, n: ("session", f.create_session("y" * 6000)),
    "bulk_chat": lambda f, sid, n: ("session", bulk(f, n)),
    "trees": lambda f, sid, n: ("workspace", f.add_repository(f"/r/{n}/" + "z" * 6000)),
}


@pytest.mark.parametrize("name", list(WRITES))
def test_a_full_store_raises_store_full_and_keeps_every_acknowledged_write(
    tmp_path: Path, name: str
) -> None:
    forest = Forest.open(tmp_path / "forest.db")
    sid = forest.create_session("full")
    fill_to_the_limit(forest)
    write = WRITES[name]
    acked = []
    with pytest.raises(StoreFull) as caught:
        for n in range(1000):
            acked.append(write(forest, sid, n))
    assert acked, "the limit left no room for a single write: the test proves nothing"
    error = caught.value
    # SQLite rolled the transaction back itself; no "cannot rollback" hides it.
    assert str(tmp_path / "forest.db") in str(error) and "is full" in str(error)
    assert "cannot rollback" not in str(error)
    assert isinstance(error.__cause__, sqlite3.OperationalError)
    assert error.__cause__.sqlite_errorname == "SQLITE_FULL"
    assert error.code == "SQLITE_FULL"
    assert not forest._backend.db.writer.in_transaction
    for kind, value in acked:
        if kind == "entry":
            assert forest.entry(sid, value).payload == BIG
        elif kind == "entries":
            assert [forest.entry(sid, v).id for v in value] == value
        elif kind == "session":
            assert forest.session(value).id == value
        else:
            assert forest.workspace(value).id == value
    assert forest.check().ok
    # Free space (lift the limit): the same write works again.
    forest._backend.db.writer.execute("PRAGMA max_page_count = 1073741823")
    write(forest, sid, 10_000)
    assert forest.check().ok
    forest.close()


def test_a_migration_that_fills_the_disk_leaves_the_store_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "forest.db"
    with Forest.open(path) as forest:
        forest.create_session("before")

    def grow(conn: sqlite3.Connection) -> None:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 2}")
        conn.execute("CREATE TABLE filler (blob BLOB)")
        conn.execute("INSERT INTO filler VALUES (zeroblob(1000000))")

    monkeypatch.setattr(
        migrations, "MIGRATIONS", [*migrations.MIGRATIONS, migrations.Migration("grow", code=grow)]
    )
    with pytest.raises(StoreFull, match="is full"):
        Forest.open(path)
    monkeypatch.undo()
    with Forest.open(path, readonly=True) as forest:
        assert [s.title for s in forest.sessions()] == ["before"]
        with forest._backend.db.read() as conn:
            assert "grow" not in migrations.applied(conn)
            assert (
                conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'filler'").fetchone() is None
            )


def test_a_damaged_file_raises_a_store_error_on_read(tmp_path: Path) -> None:
    path = tmp_path / "forest.db"
    with Forest.open(path) as forest:
        sid = forest.create_session("soon damaged")
        for _ in range(20):
            forest.append(sid, "user.message", BIG)
    data = bytearray(path.read_bytes())
    page = 4096
    data[page * 3 : page * 20] = b"\xff" * (page * 17)  # garbage over b-tree pages
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError) as caught, Forest.open(path, readonly=True) as forest:
        forest.entries(sid)
    assert isinstance(caught.value, StoreUnreadable | StoreIOError)
    assert str(path) in str(caught.value)


def test_the_cli_needs_no_sqlite3_entry_in_its_error_handling() -> None:
    # Its codes come from the error families alone: no driver error reaches it.
    assert "sqlite3" not in inspect.getsource(cli_main)


# Run in a private mount namespace on a 512 KiB tmpfs: a disk that really fills.
CLI_PROBE = """
import json, os, sys
from click.testing import CliRunner
from sessionforest.cli.main import cli
folder = sys.argv[1]
db = os.path.join(folder, "forest.db")
filler = os.path.join(folder, "filler")
with open(filler, "wb") as handle:
    handle.write(b"\\0" * 96 * 1024)
runner = CliRunner()
def run(*args):
    done = runner.invoke(cli, ["--db", db, *args])
    return [done.exit_code, done.stdout, done.stderr]
sid = run("new", "--title", "fill")[1].strip()
acked, failure = [], None
for i in range(400):
    code, out, err = run("append", sid, "-k", "user.message", "-t", f"{i} " + "x" * 8000)
    if code != 0:
        failure = [code, err]
        break
    acked.append(out.strip())
stored = [e["id"] for e in json.loads(run("log", sid, "--json")[1])]
check = run("check")
os.remove(filler)
after = run("append", sid, "-k", "user.message", "-t", "after the space was freed")
print(json.dumps({"acked": acked, "failure": failure, "stored": stored,
                  "check": check, "after": after}))
"""


def test_the_cli_on_a_really_full_disk(tmp_path: Path) -> None:
    folder = tmp_path / "small"
    folder.mkdir()
    script = tmp_path / "probe.py"
    script.write_text(CLI_PROBE)
    mount = f"mount -t tmpfs -o size=512k tmpfs {folder}"
    done = subprocess.run(
        ["unshare", "--map-root-user", "--mount", "sh", "-c",
         f'{mount} && exec "$0" "$@"', sys.executable, str(script), str(folder)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["failure"] is not None, "the disk never filled: the test proves nothing"
    code, stderr = out["failure"]
    assert code == 5
    assert stderr.count("\n") == 1 and stderr.startswith("error: store ")
    assert "is full" in stderr and "cannot rollback" not in stderr and "Traceback" not in stderr
    assert out["acked"] and out["stored"] == out["acked"]  # nothing lost, nothing half-written
    assert out["check"][0] == 0 and ": ok" in out["check"][1]
    assert out["after"][0] == 0, out["after"]


def test_sequences_stay_gap_free_across_a_full_disk(tmp_path: Path) -> None:
    # A failed append leaves no row and no used-up sequence behind.
    forest = Forest.open(tmp_path / "forest.db")
    sid = forest.create_session("ids")
    fill_to_the_limit(forest, headroom=2)
    with pytest.raises(StoreFull):
        for _ in range(100):
            forest.append(sid, "user.message", BIG)
    count = len(forest.entries(sid))
    forest._backend.db.writer.execute("PRAGMA max_page_count = 1073741823")
    forest.append(sid, "user.message", BIG)
    assert [e.sequence for e in forest.entries(sid)] == list(range(1, count + 2))
    forest.close()
