"""The PostgreSQL forest's schema migrations: the released `.sql` files of `store/postgres/sql/`.

They run through the shared runner (store/sql/migrations.py), each in its own
transaction under an advisory lock (openers racing to create one store queue
there), and are recorded by name in `forest_migrations`; released ones are
never edited, and a new one is the next numbered file. A store recording a
migration this sessionforest does not know was written by a newer one and is
refused (fail closed), as is a database holding tables but no forest schema.
There is no v5 (linear `agent_events`) era on PostgreSQL: the backend was born
at v6, so the legacy migration does not apply.

Key rule (Citus): every distributed table is keyed by its session (the
distribution column, `session_id`, or `id` of `sessions`) in its primary key and
every unique constraint; tables holding cross-session data (REFERENCE_TABLES)
are small reference tables. tests/store/postgres checks this on the live schema.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import Any, Final

import psycopg

from ...errors import MigrationError, NotAStore, StoreOutdated, StoreUnreadable
from ...ids import iso, utc_now
from ..sql import migrations as runner
from ..sql.migrations import Migration

MIGRATIONS: tuple[Migration[psycopg.Connection[Any]], ...] = runner.load(__package__ or "")

# pg_advisory_xact_lock key of schema changes ("SFST", as SQLite's application_id).
SCHEMA_LOCK: Final = 0x53465354

# Distribution column of each distributed table, and the tables Citus would
# replicate to every node (cross-session data).
DISTRIBUTED: Final = {
    "sessions": "id",
    "session_entries": "session_id",
    "session_heads": "session_id",
    "chat_digests": "session_id",
    "entry_vectors": "session_id",
    "vector_pending": "session_id",
    "vector_progress": "session_id",
    "search_tool_pending": "session_id",
}
REFERENCE_TABLES: Final = (
    "forest_migrations",
    "workspaces",
    "agents",
    "search_terms",
    "digest_terms",
    "vector_model",
    "followed_sources",
    "handoffs",
)

# The text search configuration: English snowball stems without stop words
# (FTS5's porter keeps every word too) after unaccent (remove_diacritics).
TEXT_CONFIG: Final = "forest_text"

# What the word index reads of an entry's text: runs of letters and digits, as
# FTS5's unicode61 splits them ("sqlite3.connect" is two words, not a host).
# The released migrations hold it as text (0001_forest_tables.sql's `words`);
# the queries read a query's text the same way.
WORDS_OF: Final = "regexp_replace(left(coalesce({text}, ''), 200000), '[^[:alnum:]]+', ' ', 'g')"

# Raised by the adoption guard (0002_forest_guards.sql); the store maps it to SessionDamaged.
ADOPTION_REFUSED: Final = "session row refused: entries or a head of a session with this id remain"


def _run(conn: psycopg.Connection[Any], *statements: str) -> None:
    for sql in statements:
        conn.execute(sql)


def prepare_database(conn: psycopg.Connection[Any]) -> None:
    """What the schema needs of the database (extensions, the text configuration),
    made once per schema, under the schema lock."""
    _run(
        conn,
        "CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public",
        "CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public",
    )
    found = conn.execute(
        "SELECT 1 FROM pg_ts_config WHERE cfgname = %s "
        "AND cfgnamespace = current_schema()::regnamespace",
        (TEXT_CONFIG,),
    ).fetchone()
    if found is None:
        _run(
            conn,
            "CREATE TEXT SEARCH DICTIONARY forest_stem (TEMPLATE = snowball, Language = english)",
            f"CREATE TEXT SEARCH CONFIGURATION {TEXT_CONFIG} (COPY = pg_catalog.simple)",
            f"ALTER TEXT SEARCH CONFIGURATION {TEXT_CONFIG} ALTER MAPPING FOR "
            "asciiword, word, numword, asciihword, hword, numhword, hword_part, "
            "hword_asciipart, hword_numpart WITH public.unaccent, forest_stem",
        )


def _tables(conn: psycopg.Connection[Any]) -> list[str]:
    return [
        row[0]
        for row in conn.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema() ORDER BY table_name"
        )
    ]


def applied(conn: psycopg.Connection[Any]) -> list[str] | None:
    """The migrations recorded (None: no forest schema here)."""
    if "forest_migrations" not in _tables(conn):
        return None
    return [row[0] for row in conn.execute("SELECT name FROM forest_migrations")]


def check_store(conn: psycopg.Connection[Any], where: str, *, empty_ok: bool) -> list[str]:
    """The pending migrations of the store; refuses a database that is not a store
    and one written by a newer sessionforest."""
    done = applied(conn)
    if done is None:
        tables = _tables(conn)
        if tables:
            shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
            raise NotAStore(where, f"it has tables ({shown}) and no forest_migrations table")
        if not empty_ok:
            raise NotAStore(where, "it is an empty database (no forest schema yet)")
        done = []
    known = {m.name for m in MIGRATIONS}
    newer = [name for name in done if name not in known]
    if newer:
        raise StoreUnreadable(
            where,
            f"written by a newer sessionforest (migrations {', '.join(newer)} are unknown "
            "here); upgrade sessionforest to open it",
        )
    return runner.pending(MIGRATIONS, done)


class _Steps:
    """The runner's PostgreSQL side: one transaction per migration under the
    schema lock, the database prepared and the record table made inside it."""

    def __init__(self, where: str) -> None:
        self.where = where

    @contextmanager
    def transaction(
        self, conn: psycopg.Connection[Any], migration: Migration[psycopg.Connection[Any]]
    ) -> Iterator[None]:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            try:
                with conn.transaction():
                    yield
            except psycopg.Error as exc:
                raise MigrationError(migration.name, str(exc).strip()) from exc

    def applied(self, conn: psycopg.Connection[Any]) -> list[str]:
        # Under the lock: refuses a store a newer sessionforest wrote meanwhile.
        done = applied(conn) or []
        check_store(conn, self.where, empty_ok=True)
        return done

    def prepare(self, conn: psycopg.Connection[Any], done: Collection[str]) -> None:
        prepare_database(conn)
        conn.execute(
            "CREATE TABLE IF NOT EXISTS forest_migrations "
            "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )

    def execute(self, conn: psycopg.Connection[Any], sql: str) -> None:
        # One file is one simple-protocol query (no parameters): PostgreSQL
        # parses the statements itself, dollar-quoted function bodies included.
        conn.execute(sql)

    def record(
        self,
        conn: psycopg.Connection[Any],
        position: int,
        migration: Migration[psycopg.Connection[Any]],
    ) -> None:
        conn.execute(
            "INSERT INTO forest_migrations(name, applied_at) VALUES (%s, %s)",
            (migration.name, iso(utc_now())),
        )


def migrate(conn: psycopg.Connection[Any], where: str, *, readonly: bool) -> list[str]:
    """Apply every pending migration, each in its own transaction (autocommit `conn`)."""
    pending = check_store(conn, where, empty_ok=not readonly)
    if readonly:
        if pending:
            raise StoreOutdated(where, pending)
        return []
    if not pending:
        return []
    return runner.run(conn, MIGRATIONS, _Steps(where))


# The catalog queries of dump_schema, each listing one kind of object of the current schema.
_DUMP_QUERIES: Final = (
    (
        "column",
        """SELECT c.relname || '.' || a.attname, format_type(a.atttypid, a.atttypmod)
               || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
               || CASE WHEN a.attidentity = 'd' THEN ' GENERATED BY DEFAULT AS IDENTITY'
                       WHEN a.attidentity = 'a' THEN ' GENERATED ALWAYS AS IDENTITY' ELSE '' END
               || CASE WHEN a.attgenerated = 's'
                       THEN ' GENERATED ALWAYS AS (' || pg_get_expr(d.adbin, d.adrelid) || ')'
                       WHEN d.adbin IS NOT NULL
                       THEN ' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid) ELSE '' END
               || CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
                       THEN ' COLLATE ' || quote_ident(l.collname) ELSE '' END
           FROM pg_attribute a
           JOIN pg_class c ON c.oid = a.attrelid
           JOIN pg_type t ON t.oid = a.atttypid
           LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
           LEFT JOIN pg_collation l ON l.oid = a.attcollation
           WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'v')
             AND a.attnum > 0 AND NOT a.attisdropped
           ORDER BY c.relname, a.attnum""",
    ),
    (
        "constraint",
        """SELECT conrelid::regclass::text || '.' || conname, pg_get_constraintdef(oid)
           FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
           ORDER BY 1""",
    ),
    (
        "index",
        """SELECT indexname, indexdef FROM pg_indexes
           WHERE schemaname = current_schema() ORDER BY tablename, indexname""",
    ),
    (
        "function",
        """SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p
           WHERE p.pronamespace = current_schema()::regnamespace ORDER BY p.proname""",
    ),
    (
        "trigger",
        """SELECT t.tgrelid::regclass::text || '.' || t.tgname, pg_get_triggerdef(t.oid)
           FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
           WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal
           ORDER BY 1""",
    ),
    (
        "text search mapping",
        """SELECT cfg.cfgname || '.' || tt.alias,
                  string_agg(m.mapdict::regdictionary::text, ', ' ORDER BY m.mapseqno)
           FROM pg_ts_config cfg
           JOIN pg_ts_config_map m ON m.mapcfg = cfg.oid
           JOIN ts_token_type(cfg.cfgparser) tt ON tt.tokid = m.maptokentype
           WHERE cfg.cfgnamespace = current_schema()::regnamespace
           GROUP BY cfg.cfgname, tt.alias ORDER BY 1""",
    ),
    (
        "text search dictionary",
        """SELECT d.dictname, t.tmplname || ' ' || coalesce(d.dictinitoption, '')
           FROM pg_ts_dict d JOIN pg_ts_template t ON t.oid = d.dicttemplate
           WHERE d.dictnamespace = current_schema()::regnamespace ORDER BY 1""",
    ),
)


def dump_schema(conn: psycopg.Connection[Any]) -> str:
    """The current schema's forest schema as text: the migrations it recorded,
    then every column, constraint, index, function, trigger and text search
    object from the catalogs, with the schema's own name left out.

    Two stores have the same dump exactly when they have the same schema,
    however they got there: `store/postgres/schema.sql` is a fresh store's,
    checked by a test.
    """
    row = conn.execute("SELECT current_schema()").fetchone()
    # A store's own schema is left out of the names ("public" is where the extensions are).
    own = f"{row[0]}." if row and row[0] != "public" else "\0"
    order = {m.name: n for n, m in enumerate(MIGRATIONS)}
    names = sorted(
        (name for (name,) in conn.execute("SELECT name FROM forest_migrations")),
        key=lambda name: (order.get(name, len(order)), name),
    )
    lines = [f"-- migration {name}" for name in names]
    for kind, query in _DUMP_QUERIES:
        for name, text in conn.execute(query):
            text = str(text).replace(own, "").rstrip()
            if "\n" in text:
                lines += ["", f"-- {kind} {name}", text]
            else:
                lines.append(f"-- {kind} {name}: {text}")
    return "\n".join(lines) + "\n"
