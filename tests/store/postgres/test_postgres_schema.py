"""The PostgreSQL schema on the live database: Citus's key rule, guards, fail-closed opens."""

from __future__ import annotations

import psycopg
import pytest

from sessionforest import Forest
from sessionforest.errors import NotAStore, StoreOutdated, StoreUnreadable
from sessionforest.store.postgres.schema import DISTRIBUTED, MIGRATIONS, REFERENCE_TABLES

# Every key (primary or unique) of every table, as column lists.
KEYS = """
SELECT c.conrelid::regclass::text, c.contype,
       array_agg(a.attname::text ORDER BY k.n)
FROM pg_constraint c
CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
WHERE c.contype IN ('p', 'u') AND c.connamespace = current_schema()::regnamespace
GROUP BY c.conrelid, c.conname, c.contype
UNION ALL
SELECT i.indrelid::regclass::text, 'i',
       array_agg(a.attname::text ORDER BY k.n)
FROM pg_index i
JOIN pg_class t ON t.oid = i.indexrelid
CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE i.indisunique AND t.relnamespace = current_schema()::regnamespace
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
GROUP BY i.indrelid, i.indexrelid
"""
TABLES = (
    "SELECT table_name FROM information_schema.tables "
    "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
)


def test_every_table_is_distributable_by_session_or_a_reference_table(
    pg_url: str, pg_forest: Forest
) -> None:
    with psycopg.connect(pg_url) as conn:
        tables = {r[0] for r in conn.execute(TABLES)}
        keys = conn.execute(KEYS).fetchall()
    # Every table is placed: distributed by its session column, or a reference table.
    assert tables == set(DISTRIBUTED) | set(REFERENCE_TABLES)
    assert not set(DISTRIBUTED) & set(REFERENCE_TABLES)
    checked = 0
    for table, kind, columns in keys:
        if table in REFERENCE_TABLES:
            continue
        assert DISTRIBUTED[table] in columns, (table, kind, columns)
        checked += 1
    assert checked >= len(DISTRIBUTED) + 1  # entries have two keys
    # Each distributed table has a primary key (Citus needs one to distribute by).
    assert {t for t, kind, _ in keys if kind == "p"} >= set(DISTRIBUTED)


def test_entries_are_immutable_and_sessions_kept_in_the_database(
    pg_url: str, pg_forest: Forest
) -> None:
    sid = pg_forest.create_session(title="t")
    pg_forest.append(sid, "user.message", {"content": [{"type": "text", "text": "x"}]})
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for statement, refusal in [
            ("UPDATE session_entries SET payload = '{}'", "cannot be updated"),
            ("DELETE FROM session_entries", "cannot be deleted"),
            ("DELETE FROM sessions", "cannot be deleted"),
            ("UPDATE sessions SET id = 'other'", "cannot change"),
        ]:
            with pytest.raises(psycopg.errors.RaiseException, match=refusal):
                conn.execute(statement)
    assert len(pg_forest.entries(sid)) == 1


def test_migrations_are_recorded_by_name_and_a_newer_store_is_refused(pg_url: str) -> None:
    forest = Forest.open(pg_url)
    assert forest.migrated == [m.name for m in MIGRATIONS]
    forest.close()
    reopened = Forest.open(pg_url)
    assert reopened.migrated == []
    reopened.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM forest_migrations ORDER BY name")]
        assert sorted(names) == sorted(m.name for m in MIGRATIONS)
        conn.execute("INSERT INTO forest_migrations VALUES ('from_the_future', 'later')")
    with pytest.raises(StoreUnreadable, match=r"newer sessionforest.*from_the_future"):
        Forest.open(pg_url)


def test_read_only_open_never_creates_and_other_databases_are_not_stores(pg_url: str) -> None:
    with pytest.raises(NotAStore, match="empty database"):
        Forest.open(pg_url, readonly=True)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE someone_elses (x int)")
    with pytest.raises(NotAStore, match="someone_elses"):
        Forest.open(pg_url)


def test_read_only_open_of_a_store_missing_migrations_is_outdated(pg_url: str) -> None:
    Forest.open(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM forest_migrations WHERE name = 'search_index'")
    with pytest.raises(StoreOutdated, match="search_index"):
        Forest.open(pg_url, readonly=True)
