"""The harness's pool of migrated PostgreSQL stores lends each test a store that is a fresh one.

`harness.fresh()` and `pg_forest` take a store from the pool
(tests/conformance/backends/postgres.py) instead of migrating a new schema; a
store given back is reset and lent again. These tests prove the reset store is
what a freshly migrated one is (the committed schema dump, every table empty
but the migrations' record, every sequence at its start, pg_class's statistics
as after CREATE TABLE), and that a store a test changed, or a straggler still
holds, is never lent again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import sessionforest
from conformance.backends import postgres as harness
from sessionforest import Forest
from sessionforest.store.postgres import schema

# The committed dump of a fresh store, without its header (tests/store/test_schema_dump.py).
COMMITTED = (
    (Path(sessionforest.__file__).parent / "store" / "postgres" / "schema.sql")
    .read_text()
    .split("\n\n", 1)[1]
)


@pytest.fixture(autouse=True)
def _server() -> None:
    if (why := harness._unavailable()) is not None:
        pytest.skip(f"postgres: {why}")


@pytest.fixture
def fresh_url() -> str:
    """A schema migrated by its own open, as every store was before the pool."""
    url = harness.new_schema_url()
    Forest.open(url).close()
    return url


@pytest.fixture
def lent() -> Iterator[list[str]]:
    """URLs the test borrowed; any still lent at its end go back."""
    urls: list[str] = []
    yield urls
    for url in urls:
        harness.give_back(url)


def state(url: str) -> str:
    with psycopg.connect(url, autocommit=True) as conn:
        return harness.store_state(conn)


def rows(url: str, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(query).fetchall()


def schema_of(url: str) -> str:
    [(name,)] = rows(url, "SELECT current_schema()")
    return str(name)


def borrow(lent: list[str]) -> str:
    url = harness.migrated_store_url()
    lent.append(url)
    return url


def give_back(lent: list[str], url: str) -> None:
    lent.remove(url)
    harness.give_back(url)


def use_everything(url: str) -> None:
    """Rows in every table the API writes, sequences moved, a table analyzed, one vacuumed."""
    with Forest.open(url) as forest:
        ws = forest.add_repository("/src/repo")
        lead = forest.create_session("lead")
        forest.add_orchestrator(lead, ws)
        for n in range(40):
            sid = forest.create_session(f"chat {n}")
            for turn in range(5):
                forest.append(
                    sid,
                    "user.message",
                    {"content": [{"type": "text", "text": f"deploy {n} step {turn} " * 20}]},
                )
        forest.search_chats("deploy")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE session_entries")
        # A visibility and free space map: truncated, migrations' record and all.
        conn.execute("VACUUM forest_migrations")
        # The guard off and on again, as the harness's delete_session_row does.
        conn.execute("ALTER TABLE sessions DISABLE TRIGGER sessions_kept")
        conn.execute("ALTER TABLE sessions ENABLE TRIGGER sessions_kept")


def test_a_reset_store_is_a_freshly_migrated_one(fresh_url: str, lent: list[str]) -> None:
    url = borrow(lent)
    before, truncated = harness._pool.reused, harness._pool.truncated
    use_everything(url)
    used = dict(
        rows(
            url,
            "SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = current_schema()",
        )
    )
    assert used["sessions_num_seq"] and used["workspaces_num_seq"], used
    [(analyzed,)] = rows(
        url, "SELECT reltuples FROM pg_class WHERE oid = 'session_entries'::regclass"
    )
    assert analyzed > 0
    give_back(lent, url)

    again = borrow(lent)
    assert harness._pool.reused == before + 1, harness._pool.left
    assert harness._pool.truncated > truncated  # the large tables' path, and DELETE's
    assert schema_of(again) != schema_of(url)  # renamed: a name of its own
    assert state(again) == state(fresh_url)
    # Spelled out: the committed schema, nothing but the migrations' record, the
    # sequences at their start, pg_class as after CREATE TABLE.
    with psycopg.connect(again) as conn:
        assert schema.dump_schema(conn) == COMMITTED
    assert sorted(r[0] for r in rows(again, "SELECT name FROM forest_migrations")) == sorted(
        m.name for m in schema.MIGRATIONS
    )
    with Forest.open(again) as forest:
        assert forest.migrated == []
        assert forest.sessions() == [] and forest.check().ok
    tables = [
        r[0]
        for r in rows(
            again,
            "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace "
            "AND relkind = 'r' AND relname <> 'forest_migrations'",
        )
    ]
    assert len(tables) > 10
    for table in tables:
        assert rows(again, f'SELECT count(*) FROM "{table}"') == [(0,)], table
    assert rows(
        again,
        "SELECT last_value FROM pg_sequences WHERE schemaname = current_schema()",
    ) == [(None,)] * len(used)
    assert rows(
        again,
        "SELECT count(*) FROM pg_class WHERE relnamespace = current_schema()::regnamespace "
        "AND relkind = 'r' AND (relpages <> 0 OR reltuples <> -1)",
    ) == [(0,)]
    # What the sequences hand out next is what a fresh store's hand out.
    for where in (again, fresh_url):
        with Forest.open(where) as forest:
            forest.create_session("first", session_id="first")
    assert rows(again, "SELECT num FROM sessions") == rows(fresh_url, "SELECT num FROM sessions")


def test_a_connection_left_open_cannot_reach_the_store_once_lent_again(lent: list[str]) -> None:
    url = borrow(lent)
    with psycopg.connect(url, autocommit=True) as straggler:
        give_back(lent, url)
        again = borrow(lent)
        with pytest.raises(psycopg.errors.UndefinedTable):
            straggler.execute("INSERT INTO sessions(id, created_at) VALUES ('late', 'now')")
    assert rows(again, "SELECT count(*) FROM sessions") == [(0,)]


@pytest.mark.parametrize(
    "change",
    [
        "ALTER TABLE sessions ADD COLUMN extra TEXT",
        "ALTER TABLE sessions DISABLE TRIGGER sessions_kept",
        "DROP INDEX sessions_source",
        "CREATE TABLE someone_elses (x int)",
        "ALTER SEQUENCE sessions_num_seq INCREMENT BY 2",
    ],
)
def test_a_store_whose_schema_a_test_changed_is_not_lent_again(
    change: str, lent: list[str]
) -> None:
    url = borrow(lent)
    left = len(harness._pool.left)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(change)
    give_back(lent, url)
    assert len(harness._pool.left) == left + 1
    assert "not a fresh store's" in harness._pool.left[-1]
    again = borrow(lent)
    assert state(again) != state(url)  # the changed store is still there, as it was left
    assert schema_of(again) != schema_of(url)


def test_a_store_a_straggler_holds_a_lock_in_is_not_lent_again(
    lent: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness, "RESET_LOCK_TIMEOUT", "50ms")
    url = borrow(lent)
    with Forest.open(url) as forest:
        forest.create_session("held", session_id="held")
    left = len(harness._pool.left)
    with psycopg.connect(url) as straggler:
        straggler.execute("SELECT * FROM sessions WHERE id = 'held' FOR UPDATE")
        give_back(lent, url)
        assert len(harness._pool.left) == left + 1
        assert "LockNotAvailable" in harness._pool.left[-1]
    assert rows(url, "SELECT id FROM sessions") == [("held",)]  # untouched: rolled back
