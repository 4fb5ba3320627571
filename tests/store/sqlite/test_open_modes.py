"""Opening store files: read-only opens write nothing, and only stores are opened at all.

Real files throughout: a store closed cleanly (WAL, no -wal/-shm), another
program's SQLite database, the committed schema-version-5 database, a store
an older version left, a missing path, and a read-only bind mount made in a
private mount namespace (`unshare`), where even root cannot write.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from sessionforest import (
    Forest,
    NotAStore,
    StoreMissing,
    StoreOutdated,
    StoreReadOnly,
    StoreUnreadable,
)
from sessionforest.store.sqlite import migrations

V5_DB = Path(__file__).parent / "fixtures" / "v5.db"
MSG = {"content": [{"type": "text", "text": "kept"}]}

# A store as the version before this one left it: everything up to the
# migrations this version added (pending, in order, on such a store).
_FIRST_NEW = [m.name for m in migrations.MIGRATIONS].index("store_application_id")
BEFORE_THIS_VERSION = migrations.MIGRATIONS[:_FIRST_NEW]
NEW = [m.name for m in migrations.MIGRATIONS[_FIRST_NEW:]]


def files(folder: Path) -> dict[str, str]:
    """Every file in `folder`: name -> sha256 (so -wal/-shm appearing shows)."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, str]:
    """A store with one session of two entries, closed cleanly: only the .db file left."""
    path = tmp_path / "forest.db"
    with Forest.open(path) as forest:
        sid = forest.create_session("kept")
        forest.append(sid, "user.message", MSG)
        forest.append(sid, "assistant.message", MSG)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forest.db"]
    return path, sid


@pytest.fixture
def foreign(tmp_path: Path) -> Path:
    """Another program's database (rollback journal, a users table)."""
    path = tmp_path / "other.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO users(name) VALUES ('ada')")
        conn.commit()
    return path


@pytest.fixture
def older_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store as the version before this one left it: the last two migrations missing."""
    path = tmp_path / "older.db"
    with monkeypatch.context() as patch:
        patch.setattr(migrations, "MIGRATIONS", BEFORE_THIS_VERSION)
        with Forest.open(path) as forest:
            forest.create_session("old", cwd=tmp_path)
    return path


# --- read-only: nothing written, nothing created ---------------------------------


def test_a_read_only_open_reads_and_leaves_the_folder_byte_identical(
    store: tuple[Path, str],
) -> None:
    path, sid = store
    before = files(path.parent)
    with Forest.open(path, readonly=True) as forest:
        assert forest.readonly
        assert [e.sequence for e in forest.entries(sid)] == [1, 2]
        assert forest.sessions()[0].title == "kept"
        forest.search_chats("kept")
        forest.check(quarantine=False)
        # Nothing appears beside the store while it is open either.
        assert files(path.parent) == before
    assert files(path.parent) == before


@pytest.mark.parametrize(
    "write",
    [
        lambda f, sid: f.append(sid, "user.message", MSG),
        lambda f, sid: f.append_many(sid, [("user.message", MSG, None)]),
        lambda f, sid: f.create_session("new"),
        lambda f, sid: f.move_head(sid, f.entries(sid)[0].id),
        lambda f, sid: f.set_status(sid, "ended"),
        lambda f, sid: f.check(),
        lambda f, sid: f.add_repository("/r"),
        lambda f, sid: f.bind(sid, "/"),
    ],
    ids=["append", "append_many", "create", "move_head", "status", "check", "tree", "bind"],
)
def test_every_write_through_a_read_only_open_is_refused(
    store: tuple[Path, str], write: object
) -> None:
    path, sid = store
    before = files(path.parent)
    with Forest.open(path, readonly=True) as forest:
        with pytest.raises(StoreReadOnly, match="opened read-only") as caught:
            write(forest, sid)  # type: ignore[operator]
        assert caught.value.path == str(path)
    assert files(path.parent) == before


def test_a_read_only_open_of_a_missing_path_creates_nothing(tmp_path: Path) -> None:
    for path in (tmp_path / "typo.db", tmp_path / "no" / "such" / "dir" / "forest.db"):
        with pytest.raises(StoreMissing) as caught:
            Forest.open(path, readonly=True)
        assert str(path) in str(caught.value) and "nothing was created" in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_open_of_an_empty_file_is_not_a_store(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    with pytest.raises(NotAStore, match="empty database"):
        Forest.open(path, readonly=True)
    assert path.read_bytes() == b"" and files(tmp_path) == {"empty.db": files(tmp_path)["empty.db"]}
    with Forest.open(path) as forest:  # a write open makes it a store
        assert forest.sessions() == []


def test_a_reader_beside_a_live_writer_sees_its_commits_and_keeps_its_files(
    store: tuple[Path, str],
) -> None:
    path, sid = store
    with Forest.open(path) as writer:
        writer.append(sid, "user.message", MSG)  # -wal and -shm exist now
        with Forest.open(path, readonly=True) as reader:
            assert len(reader.entries(sid)) == 3
        writer.append(sid, "user.message", MSG)
        assert len(writer.entries(sid)) == 4


# A writer in another process: it appends and closes while a reader is open.
WRITER = """
import sys
from sessionforest import Forest
with Forest.open(sys.argv[1]) as forest:
    forest.append(sys.argv[2], "user.message", {"content": [{"type": "text", "text": "late"}]})
"""


def test_an_immutable_reader_keeps_other_processes_from_checkpointing_under_it(
    store: tuple[Path, str],
) -> None:
    path, sid = store
    with Forest.open(path, readonly=True) as reader:
        main_file = path.read_bytes()
        subprocess.run([sys.executable, "-c", WRITER, str(path), sid], check=True)
        # The writer's close could not checkpoint into the file being read:
        # its entry waits in the -wal, and the reader's snapshot holds.
        assert path.read_bytes() == main_file
        assert path.with_name("forest.db-wal").exists()
        assert len(reader.entries(sid)) == 2
    with Forest.open(path, readonly=True) as later:
        assert len(later.entries(sid)) == 3


# --- stores only -----------------------------------------------------------------


@pytest.mark.parametrize("readonly", [True, False], ids=["read-only", "read-write"])
def test_another_programs_database_is_refused_untouched(foreign: Path, readonly: bool) -> None:
    before = files(foreign.parent)
    with pytest.raises(NotAStore) as caught:
        Forest.open(foreign, readonly=readonly)
    message = str(caught.value)
    assert str(foreign) in message and "users" in message and "no forest schema marker" in message
    assert isinstance(caught.value, StoreUnreadable)
    assert files(foreign.parent) == before  # no tables, no WAL switch, no -wal/-shm
    with closing(sqlite3.connect(foreign)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_a_database_with_another_application_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA application_id = 1234")
        conn.execute("CREATE TABLE forest_migrations (name TEXT)")
    with pytest.raises(NotAStore, match="application_id 0x4d2"):
        Forest.open(path)


def test_a_database_claiming_the_legacy_era_without_its_tables_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "claims.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA user_version = 3")
        conn.execute("CREATE TABLE sessions (id TEXT)")
    with pytest.raises(NotAStore, match="agent_events, session_entries"):
        Forest.open(path)


def test_new_stores_carry_the_application_id(store: tuple[Path, str]) -> None:
    with closing(sqlite3.connect(store[0])) as conn:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == migrations.APPLICATION_ID


# --- migrations: only read-write opens run them ------------------------------------


def test_a_read_only_open_of_the_v5_database_says_to_migrate(tmp_path: Path) -> None:
    path = tmp_path / "v5.db"
    shutil.copyfile(V5_DB, path)
    before = files(tmp_path)
    with pytest.raises(StoreOutdated) as caught:
        Forest.open(path, readonly=True)
    assert caught.value.pending == [m.name for m in migrations.MIGRATIONS[5:]]
    assert f"forest --db {path} migrate" in str(caught.value)
    assert files(tmp_path) == before
    with Forest.open(path) as forest:  # the legacy era is a store: a write open migrates it
        assert "agent_events_to_forest" in forest.migrated
    with Forest.open(path, readonly=True) as forest:
        assert forest.sessions()


def test_a_store_from_the_previous_version_needs_the_two_new_migrations(
    older_store: Path,
) -> None:
    before = files(older_store.parent)
    with pytest.raises(StoreOutdated) as caught:
        Forest.open(older_store, readonly=True)
    assert caught.value.pending == NEW
    assert files(older_store.parent) == before
    with Forest.open(older_store) as forest:
        assert forest.migrated == NEW
    with Forest.open(older_store, readonly=True) as forest:
        assert [s.title for s in forest.sessions()] == ["old"]


# --- where a read-write open may create files ------------------------------------


def test_a_write_open_does_not_create_a_missing_directory(tmp_path: Path) -> None:
    path = tmp_path / "tpyo" / "forest.db"
    with pytest.raises(StoreUnreadable, match="does not exist"):
        Forest.open(path)
    assert not (tmp_path / "tpyo").exists()


def test_a_write_open_without_create_needs_the_file(tmp_path: Path) -> None:
    with pytest.raises(StoreMissing):
        Forest.open(tmp_path / "forest.db", create=False)
    assert list(tmp_path.iterdir()) == []


def test_the_default_store_creates_its_directory_and_forest_db_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FOREST_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    with Forest.open() as forest:
        assert forest.path == tmp_path / "xdg" / "sessionforest" / "forest.db"
    assert forest.path.exists()
    monkeypatch.setenv("FOREST_DB", str(tmp_path / "set-by-hand" / "forest.db"))
    with pytest.raises(StoreUnreadable, match="does not exist"):
        Forest.open()
    assert not (tmp_path / "set-by-hand").exists()


# --- a read-only filesystem ----------------------------------------------------------

# Run inside a private mount namespace where the store's folder is bind-mounted
# read-only: EROFS stops every write, root's included (chmod would not).
READ_ONLY_PROBE = """
import json, os, sys
from sessionforest import Forest, StoreReadOnly
path, sid = sys.argv[1], sys.argv[2]
out = {"writable": os.access(path, os.W_OK)}
with Forest.open(path, readonly=True) as forest:
    out["ro_entries"] = len(forest.entries(sid))
with Forest.open(path) as forest:
    out["rw_readonly"] = forest.readonly
    out["rw_entries"] = len(forest.entries(sid))
    out["rw_find"] = len(forest.search_chats("kept").hits)
    try:
        forest.append(sid, "user.message", {"content": [{"type": "text", "text": "no"}]})
    except StoreReadOnly as exc:
        out["append"] = str(exc)
print(json.dumps(out))
"""


def in_read_only_mount(folder: Path, *args: str) -> str:
    script = folder.parent / "probe.py"
    script.write_text(READ_ONLY_PROBE)
    # --map-root-user: works for root and, where user namespaces are allowed, for others.
    mount = f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder}"
    done = subprocess.run(
        ["unshare", "--map-root-user", "--mount", "sh", "-c",
         f'{mount} && exec "$0" "$@"', sys.executable, str(script), *args],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_on_a_read_only_filesystem_reads_work_and_writes_say_why_not(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "forest.db"
    with Forest.open(path) as forest:
        sid = forest.create_session("kept")
        forest.append(sid, "user.message", MSG)
    before = files(folder)
    out = json.loads(in_read_only_mount(folder, str(path), sid))
    assert out["writable"] is False
    assert out["ro_entries"] == out["rw_entries"] == 1 and out["rw_find"] == 1
    assert out["rw_readonly"] is True
    assert str(path) in out["append"] and "cannot be written" in out["append"]
    assert "read-only file or filesystem" in out["append"]
    assert files(folder) == before


def test_unopenable_paths_raise_store_errors(tmp_path: Path) -> None:
    garbage = tmp_path / "not-a-db"
    garbage.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreUnreadable) as err:
        Forest.open(garbage)
    assert err.value.path == str(garbage)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreUnreadable):
        Forest.open(blocker / "sub" / "forest.db")
