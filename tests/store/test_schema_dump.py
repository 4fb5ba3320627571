"""Each backend's schema is its committed dump, however a store got there.

`store/sqlite/schema.sql` and `store/postgres/schema.sql` are what a fresh
store has after every released migration (scripts/schema-dump writes them). A
fresh store, a store upgraded from older releases (the schema-version-5
fixture, a store written at commit 2a5f00a, stores migrated one release at a
time) must all have exactly that schema and that recorded history. After
adding a migration, run scripts/schema-dump and commit the dumps it writes.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

import sessionforest
from conformance.backends.postgres import _unavailable, new_schema_url
from sessionforest import Forest
from sessionforest.entrytext import INDEXED_KINDS
from sessionforest.scripts import SPACELESS_RANGES
from sessionforest.store.postgres import schema as postgres
from sessionforest.store.sql import migrations as runner
from sessionforest.store.sqlite import migrations as sqlite

STORE = Path(sessionforest.__file__).parent / "store"
FIXTURES = Path(__file__).parent / "sqlite" / "fixtures"
V5_DB = FIXTURES / "v5.db"
RELEASE_DB = FIXTURES / "release_2a5f00a.db"  # make_release_db.py, run on 2a5f00a's code


def committed(backend: str) -> str:
    """The committed dump without its header (the comment block before the first blank line)."""
    text = (STORE / backend / "schema.sql").read_text()
    return text.split("\n\n", 1)[1]


def sqlite_dump(path: Path) -> str:
    with closing(sqlite3.connect(path)) as conn:
        return sqlite.dump_schema(conn)


def postgres_dump(url: str) -> str:
    with psycopg.connect(url) as conn:
        return postgres.dump_schema(conn)


@pytest.fixture
def pg_url() -> str:
    why = _unavailable()
    if why is not None:
        pytest.skip(f"postgres: {why}")
    return new_schema_url()


# --- SQLite -----------------------------------------------------------------------


def test_a_fresh_sqlite_store_has_the_committed_schema(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    Forest.open(path).close()
    dump = sqlite_dump(path)
    assert dump == committed("sqlite")
    # The dump holds the whole schema: the history, the header and the search objects.
    names = [m.name for m in sqlite.MIGRATIONS]
    assert [line[len("-- migration ") :] for line in dump.splitlines()[3:][: len(names)]] == names
    assert f"PRAGMA application_id = {sqlite.APPLICATION_ID};" in dump
    for name in ("session_entry_fts", "search_entry_added", "session_entries_branch"):
        assert f" {name} " in dump


def test_the_schema_version_5_fixture_upgrades_to_the_committed_schema(tmp_path: Path) -> None:
    path = tmp_path / "v5.db"
    shutil.copyfile(V5_DB, path)
    with Forest.open(path) as forest:
        assert forest.migrated == [m.name for m in sqlite.MIGRATIONS[5:]]
    # Names recorded for the pre-names era, then one per migration run: the same list.
    assert sqlite_dump(path) == committed("sqlite")


def test_a_store_written_at_2a5f00a_opens_with_the_committed_schema(tmp_path: Path) -> None:
    path = tmp_path / "release.db"
    shutil.copyfile(RELEASE_DB, path)
    with Forest.open(path) as forest:
        released = [
            m.name for m in sqlite.MIGRATIONS[: len(sqlite.MIGRATIONS) - len(forest.migrated)]
        ]
        assert released[-1] == "entry_branch_index"  # what that release had run
        lock = forest.active_path("release-lock")
        assert [e.payload["content"][0]["text"] for e in lock if e.kind == "user.message"] == [
            "the sqlite lock times out under load",
            "try WAL mode instead",
        ]
        assert len(forest.tips("release-lock")) == 2  # the rewind left a branch
        assert [e.payload["label"] for e in forest.checkpoints("release-lock")] == ["diagnosed"]
        found = forest.search_chats("busy timeout")
        assert [hit.session_id for hit in found.hits][:1] == ["release-lock"]
        assert [h.session_id for h in forest.search_chats("数据库").hits] == ["release-cjk"]
        assert forest.session("release-old").status == "archived"
        assert forest.check().ok
    assert sqlite_dump(path) == committed("sqlite")


def test_a_sqlite_store_migrated_one_release_at_a_time_has_the_committed_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = sqlite.MIGRATIONS
    path = tmp_path / "stepwise.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        for released in range(1, len(every) + 1):
            monkeypatch.setattr(sqlite, "MIGRATIONS", every[:released])
            assert sqlite.migrate(conn) == [every[released - 1].name]
            if every[released - 1].name == "session_search_index":
                # Rows written between releases go through that release's triggers.
                conn.execute("INSERT INTO sessions(id, created_at) VALUES ('s', '2025-01-01')")
    assert sqlite_dump(path) == committed("sqlite")


def test_released_sqlite_statements_are_split_exactly_as_written() -> None:
    # The text between semicolons, comment lines before a statement dropped:
    # trigger bodies (with their own semicolons) stay whole.
    sql = (
        "-- a note; with a semicolon\nCREATE TABLE t (a TEXT);\n\n"
        "-- the trigger\nCREATE TRIGGER g AFTER INSERT ON t BEGIN\n"
        "    SELECT ';'; -- inside\n    SELECT 2;\nEND;\n"
    )
    assert list(sqlite.statements(sql)) == [
        "CREATE TABLE t (a TEXT)",
        "CREATE TRIGGER g AFTER INSERT ON t BEGIN\n    SELECT ';'; -- inside\n    SELECT 2;\nEND",
    ]
    with pytest.raises(RuntimeError, match="not ended by ';'"):
        list(sqlite.statements("CREATE TABLE t (a TEXT);\nCREATE TABLE u (b TEXT)"))


# --- PostgreSQL -------------------------------------------------------------------


def test_a_fresh_postgres_store_has_the_committed_schema(pg_url: str) -> None:
    Forest.open(pg_url).close()
    dump = postgres_dump(pg_url)
    assert dump == committed("postgres")
    assert "-- function forest_entry_text" in dump
    assert "-- trigger session_entries.search_entry_text:" in dump


def test_a_postgres_store_migrated_one_release_at_a_time_has_the_committed_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if (why := _unavailable()) is not None:
        pytest.skip(f"postgres: {why}")
    every = postgres.MIGRATIONS
    # Today's writers name session_entries.tool and session_heads.messages: before
    # the latter, the entry between releases is written as the releases' writers
    # wrote it (no text: the released trigger computes it; no count: the migration
    # counts the message).
    messages_at = [m.name for m in every].index("session_messages")
    for cut in range(1, len(every)):
        url = new_schema_url()
        with monkeypatch.context() as patch:
            patch.setattr(postgres, "MIGRATIONS", every[:cut])
            with Forest.open(url) as forest:
                assert forest.migrated == [m.name for m in every[:cut]]
                sid = forest.create_session("between releases", session_id=f"cut-{cut}")
                if cut > messages_at:
                    forest.append(
                        sid, "user.message", {"content": [{"type": "text", "text": "hi"}]}
                    )
                else:
                    _append_as_released(url, sid)
        with Forest.open(url) as forest:
            assert forest.migrated == [m.name for m in every[cut:]]
            assert [e.payload for e in forest.entries(f"cut-{cut}")] == [
                {"content": [{"type": "text", "text": "hi"}]}
            ]
            assert forest.session(f"cut-{cut}").messages == 1
        assert postgres_dump(url) == committed("postgres"), f"released with {cut} migrations"


def _append_as_released(url: str, sid: str) -> None:
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
            "semantic_schema_version, kind, payload, context_visibility, created_at) "
            "VALUES (%s, %s, NULL, 1, 2, 'user.message', "
            '\'{"content":[{"type":"text","text":"hi"}]}\', \'context\', '
            "'2025-01-01T00:00:00.000Z')",
            (f"{sid}-e1", sid),
        )
        conn.execute(
            "INSERT INTO session_heads(session_id, active_entry_id, updated_at) "
            "VALUES (%s, %s, 't') ON CONFLICT (session_id) "
            "DO UPDATE SET active_entry_id = excluded.active_entry_id",
            (sid, f"{sid}-e1"),
        )


# --- the form itself --------------------------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> str:
    # A package name of its own per test: importlib caches packages by name.
    package = tmp_path / ("released_" + re.sub(r"\W", "_", tmp_path.name))
    (package / "sql").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name, text in files.items():
        (package / "sql" / name).write_text(text)
    return package.name


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({"0001_a.sql": "", "0003_c.sql": ""}, "no migration numbered 0002"),
        ({"0001_a.sql": "", "0001_b.sql": ""}, "two migrations numbered 0001"),
        ({"0001_a.sql": "", "0002_a.sql": ""}, "a migration name is used twice"),
        ({"0001_a.sql": "", "2_b.sql": ""}, "not NNNN_name.sql"),
    ],
)
def test_the_released_files_must_number_1_to_n_once_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], problem: str
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RuntimeError, match=problem):
        runner.load(_package(tmp_path, files))


def test_a_gap_may_be_filled_only_by_code_of_that_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    name = _package(tmp_path, {"0001_a.sql": "SELECT 1;\n", "0003_c.sql": "SELECT 3;\n"})
    convert = runner.Migration("b", code=lambda conn: None)
    assert [m.name for m in runner.load(name, code={2: convert})] == ["a", "b", "c"]
    assert runner.load(name, code={2: convert})[0].sql == "SELECT 1;\n"


def _released(backend: str, name: str) -> str:
    (path,) = (STORE / backend / "sql").glob(f"[0-9][0-9][0-9][0-9]_{name}.sql")
    return path.read_text()


def test_the_live_code_agrees_with_the_released_sql() -> None:
    # The queries and the stores' error mapping repeat these; the released files
    # hold them as text. A change to one of them needs a new migration.
    assert sqlite.ADOPTION_REFUSED in _released("sqlite", "sessions_no_adoption")
    assert sqlite.BRANCH in _released("sqlite", "entry_branch_index")
    assert f"PRAGMA application_id = {sqlite.APPLICATION_ID}" in _released(
        "sqlite", "store_application_id"
    )
    assert postgres.ADOPTION_REFUSED in _released("postgres", "forest_guards")
    assert postgres.WORDS_OF.format(text="text") in _released("postgres", "forest_tables")
    search = _released("postgres", "search_index")
    kinds = "', '".join(INDEXED_KINDS)
    assert f"NEW.kind IN ('{kinds}')" in search
    spaceless = "[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in SPACELESS_RANGES) + "]"
    assert f"~ '{spaceless}'" in search
    assert search.count(spaceless) == 2  # the digest's and the entry's
