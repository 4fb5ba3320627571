"""The SQLite forest's schema migrations: the released `.sql` files of `store/sqlite/sql/`.

They run through the shared runner (store/sql/migrations.py), each in its own
IMMEDIATE transaction, and are recorded by name in `forest_migrations`;
`PRAGMA user_version` mirrors how many have run, which is how databases from
before names were recorded (the linear `agent_events` era, schema version 5)
are recognised. Migration 6, the conversion of that era's events into forest
entries, parses what it moves and so is code (`agent_events_to_forest`).
Released migrations are never edited; a new one is the next numbered file.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sqlite3
from collections.abc import Collection, Iterator
from typing import Any

import orjson

from ...errors import MigrationError
from ...ids import iso, utc_now
from ...text import plural
from ..sql import migrations as runner
from ..sql.migrations import Migration

__all__ = ["Migration"]

# `PRAGMA application_id` of a store ("SFST"; written by 0012_store_application_id.sql).
APPLICATION_ID = 0x53465354

# The pre-names era (user_version 1-5, no forest_migrations table): the
# tables its first N migrations created, in order. A database claiming that
# era must have them, or it is some other program's file.
LEGACY_TABLES = ("sessions", "agent_events", "session_entries", "session_heads")
LEGACY_ERA = 5

# SQLite result codes that describe the environment (disk full, read-only
# file, busy), not a migration's logic: those leave as the driver's error so
# the opener can say what happened to the file.
ENVIRONMENT_CODES = {5, 6, 8, 13}

# The rows the parent index holds since 0022_entry_branch_index: every child that
# does not directly follow its parent (queries repeat this text so SQLite uses it).
BRANCH = "(parent_sequence IS NULL OR parent_sequence <> sequence - 1)"

# Raised by 0015_sessions_no_adoption.sql; the store maps it to SessionDamaged.
ADOPTION_REFUSED = "session row refused: entries or a head of a session with this id remain"


# --- schema version 6: the forest only -------------------------------------------

# event_type -> (kind, context_visibility); payloads keep their v1 shape and are
# upgraded on read (see kinds.upgrade).
_LEGACY_EVENT_KINDS = {
    "user_message": ("user.message", "context"),
    "assistant_message": ("assistant.message", "context"),
    "tool_call": ("tool.started", "hidden"),
    "tool_result": ("tool.completed", "context"),
    "status": ("session.status", "hidden"),
}


def agent_events_to_forest(conn: sqlite3.Connection) -> None:
    """Turn each session's linear agent_events into one forest chain, then drop the table.

    One chain per session, parents in event order, head at the last event,
    entries at semantic_schema_version 1. Nothing is discarded: unknown event
    types become hidden provider notifications, unparsable payloads keep their
    raw text, and events of sessions missing from `sessions` get a session row.
    """
    name = "agent_events_to_forest"
    now = iso(utc_now())
    sessions = [
        row[0]
        for row in conn.execute(
            "SELECT session_id FROM agent_events GROUP BY session_id ORDER BY MIN(id)"
        )
    ]
    for sid in sessions:
        if conn.execute("SELECT 1 FROM session_entries WHERE session_id = ?", (sid,)).fetchone():
            raise MigrationError(
                name,
                f"session {sid} has both agent_events and forest entries; "
                "refusing to merge two histories",
            )
        conn.execute(
            "INSERT OR IGNORE INTO sessions(id, title, harness, created_at) "
            "SELECT ?, '(recovered legacy session)', '', MIN(created_at) "
            "FROM agent_events WHERE session_id = ?",
            (sid, sid),
        )
        parent: str | None = None
        rows = conn.execute(
            "SELECT id, seq, event_type, payload, created_at FROM agent_events "
            "WHERE session_id = ? ORDER BY seq, id",
            (sid,),
        ).fetchall()
        for sequence, (event_id, _seq, event_type, raw, created_at) in enumerate(rows, 1):
            kind, visibility = _LEGACY_EVENT_KINDS.get(
                event_type, ("provider.notification", "hidden")
            )
            try:
                payload: Any = orjson.loads(raw)
            except orjson.JSONDecodeError:
                payload = None
            if not isinstance(payload, dict):
                # Unreadable: keep the text, but never as something a model would see.
                kind, visibility, payload = "provider.notification", "hidden", {"raw": raw}
            if kind == "provider.notification":
                payload = {"provider": "legacy", "event_type": event_type, **payload}
            entry_id = f"legacy-{event_id}"
            conn.execute(
                "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
                "semantic_schema_version, kind, payload, context_visibility, created_at) "
                "VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?)",
                (
                    entry_id,
                    sid,
                    parent,
                    sequence,
                    kind,
                    orjson.dumps(payload).decode(),
                    visibility,
                    created_at,
                ),
            )
            parent = entry_id
        conn.execute(
            "INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id, "
            "updated_at = excluded.updated_at",
            (sid, parent, now),
        )
    conn.execute("DROP TABLE agent_events")


# Migration 6 is code; every other number is a released file of sql/.
_CODE = {6: Migration("agent_events_to_forest", code=agent_events_to_forest)}


def released_migrations() -> tuple[Migration[sqlite3.Connection], ...]:
    """Every released migration with its SQL, read on first use: only a store
    that needs migrating (or a test) reads the files. Also `MIGRATIONS`."""
    found: tuple[Migration[sqlite3.Connection], ...] | None = globals().get("MIGRATIONS")
    if found is None:
        found = runner.load(__package__ or "", code=_CODE)
        globals()["MIGRATIONS"] = found
    return found


def released_names() -> tuple[str, ...]:
    """The released migrations' names in order, from the file names alone (no file
    read): what an open of a store that needs no migration compares it with."""
    found: tuple[Migration[sqlite3.Connection], ...] | None = globals().get("MIGRATIONS")
    if found is not None:  # loaded already (or a test's subset)
        return tuple(m.name for m in found)
    return _names()


@functools.cache
def _names() -> tuple[str, ...]:
    return runner.names(__package__ or "", code={n: m.name for n, m in _CODE.items()})


MIGRATIONS: tuple[Migration[sqlite3.Connection], ...]  # set by released_migrations(), on first use


def __getattr__(name: str) -> tuple[Migration[sqlite3.Connection], ...]:
    # `MIGRATIONS`, read lazily (PEP 562); a test may set it to a subset.
    if name == "MIGRATIONS":
        return released_migrations()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def statements(sql: str) -> Iterator[str]:
    """The statements of a migration file, each as its text between semicolons.

    SQLite decides where a statement ends (`sqlite3.complete_statement` knows
    trigger bodies, strings and comments). Comment lines before a statement
    are the file's prose, not part of the statement, so the text SQLite keeps
    in `sqlite_master` is the released one exactly.
    """
    start = 0
    for match in re.finditer(";", sql):
        chunk = sql[start : match.end()]
        if not sqlite3.complete_statement(chunk):
            continue
        start = match.end()
        text = _without_leading_comments(chunk[:-1])
        if text:
            yield text
    if _without_leading_comments(sql[start:]):
        raise RuntimeError(f"a statement is not ended by ';': {sql[start:].strip()[:60]!r}")


def released(name: str) -> list[str]:
    """The statements of the released migration `name`, as it runs them."""
    for migration in released_migrations():
        if migration.name == name:
            return list(statements(migration.sql))
    raise RuntimeError(f"no released migration named {name!r}")


def _without_leading_comments(chunk: str) -> str:
    lines = chunk.strip().split("\n")
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("--")):
        lines.pop(0)
    return "\n".join(lines).strip()


def schema_version() -> int:
    return len(released_names())


def applied(conn: sqlite3.Connection) -> set[str]:
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'forest_migrations'"
    ).fetchone()
    if has_table:
        return {row[0] for row in conn.execute("SELECT name FROM forest_migrations")}
    # Databases from before migrations were recorded by name carry only a
    # version number: the first N migrations describe their schema.
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    return set(released_names()[:version])


def not_a_store(conn: sqlite3.Connection, *, empty_ok: bool) -> str | None:
    """Why this database is not a forest store (None: it is one, or empty and `empty_ok`).

    A store has the `forest_migrations` table (every store since names were
    recorded) or our application_id, or is a pre-names database (user_version
    1-5) with the tables that era's migrations made.
    """
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if app_id not in (0, APPLICATION_ID):
        return f"its header carries application_id {app_id:#x}, another program's format"
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY rowid"
        )
    ]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if not tables and not conn.execute("SELECT 1 FROM sqlite_master").fetchone():
        if version:
            return f"it has no tables but claims schema version {version}"
        return None if empty_ok else "it is an empty database (no forest schema yet)"
    if "forest_migrations" in tables or app_id == APPLICATION_ID:
        return None
    if 1 <= version <= LEGACY_ERA:
        missing = [t for t in LEGACY_TABLES[:version] if t not in tables]
        if not missing:
            return None
        return f"it claims schema version {version} but has no {', '.join(missing)} table"
    shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
    return (
        f"it has {plural(len(tables), 'table')} ({shown}) and no forest schema marker "
        "(no forest_migrations table, no sessionforest application_id)"
    )


def pending(conn: sqlite3.Connection) -> list[str]:
    """Names of the migrations this store still needs, in order (no file is read)."""
    done = applied(conn)
    return [name for name in released_names() if name not in done]


class _Steps:
    """The runner's SQLite side: IMMEDIATE transactions, names recorded from the
    first migration on, user_version kept equal to the count."""

    @contextlib.contextmanager
    def transaction(
        self, conn: sqlite3.Connection, migration: Migration[sqlite3.Connection]
    ) -> Iterator[None]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            conn.execute("COMMIT")
        except MigrationError:
            rollback(conn)
            raise
        except sqlite3.Error as exc:
            rollback(conn)
            if getattr(exc, "sqlite_errorcode", -1) & 0xFF in ENVIRONMENT_CODES:
                raise  # the opener names the file and the cause (full, read-only, busy)
            raise MigrationError(migration.name, str(exc)) from exc
        except BaseException:
            rollback(conn)
            raise

    def applied(self, conn: sqlite3.Connection) -> set[str]:
        return applied(conn)

    def prepare(self, conn: sqlite3.Connection, done: Collection[str]) -> None:
        # Recording names starts inside the first migration's own transaction,
        # so a refused migration leaves no trace at all.
        conn.execute(
            "CREATE TABLE IF NOT EXISTS forest_migrations "
            "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        if done and not conn.execute("SELECT 1 FROM forest_migrations").fetchone():
            conn.executemany(
                "INSERT INTO forest_migrations(name, applied_at) VALUES (?, 'before names')",
                [(name,) for name in released_names() if name in done],
            )

    def execute(self, conn: sqlite3.Connection, sql: str) -> None:
        for statement in statements(sql):
            conn.execute(statement)

    def record(
        self, conn: sqlite3.Connection, position: int, migration: Migration[sqlite3.Connection]
    ) -> None:
        conn.execute(
            "INSERT INTO forest_migrations(name, applied_at) VALUES (?, ?)",
            (migration.name, iso(utc_now())),
        )
        conn.execute(f"PRAGMA user_version = {position}")


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply every pending migration, each in its own IMMEDIATE transaction.

    Safe against concurrent openers: the pending set is re-read inside each
    write transaction. Returns the names applied by this call. A store that
    needs none (the common open) costs one look at its names and reads no file.
    """
    if not pending(conn):
        return []
    return runner.run(conn, released_migrations(), _Steps())


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open.

    SQLite rolls back by itself on some errors (SQLITE_FULL among them); a
    second ROLLBACK would then fail and hide the error that mattered.
    """
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):  # the error being raised says more
            conn.execute("ROLLBACK")


# The order a dump lists a table's objects in.
_DUMP_ORDER = {"table": 0, "view": 0, "index": 1, "trigger": 2}


def dump_schema(conn: sqlite3.Connection) -> str:
    """The store's schema as text: what its header says, the migrations it
    recorded (in order) and every object's SQL (by table, then kind and name).

    Two stores have the same dump exactly when they have the same schema,
    however they got there (fresh, or upgraded release by release):
    `store/sqlite/schema.sql` is a fresh store's, checked by a test.
    """
    lines = [
        f"PRAGMA application_id = {conn.execute('PRAGMA application_id').fetchone()[0]};",
        f"PRAGMA user_version = {conn.execute('PRAGMA user_version').fetchone()[0]};",
        "",
    ]
    lines += [
        f"-- migration {name}"
        for (name,) in conn.execute("SELECT name FROM forest_migrations ORDER BY rowid")
    ]
    objects = conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL"
    ).fetchall()
    objects.sort(key=lambda row: (row[2], _DUMP_ORDER.get(row[0], 3), row[1]))
    for kind, name, table, sql in objects:
        lines += ["", f"-- {kind} {name} on {table}", f"{sql};"]
    return "\n".join(lines) + "\n"
