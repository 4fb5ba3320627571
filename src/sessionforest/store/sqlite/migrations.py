"""Named, ordered schema migrations for the SQLite forest.

Each migration runs in its own transaction and is recorded by name in
`forest_migrations`; `PRAGMA user_version` mirrors how many have run, which is
how databases from before names were recorded (the linear `agent_events` era,
schema version 5) are recognised. Released migrations are never edited.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from typing import Any

import orjson

from ...errors import MigrationError
from ...ids import iso, utc_now
from ...render import plural

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[tuple[str, Migration]] = []

# `PRAGMA application_id` of a store ("SFST"): the file header says what it is.
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


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


# The rows the parent index holds since entry_branch_index: every child that does
# not directly follow its parent (queries repeat this text so SQLite uses it).
BRANCH = "(parent_sequence IS NULL OR parent_sequence <> sequence - 1)"


def _run(conn: sqlite3.Connection, *statements: str) -> None:
    for sql in statements:
        conn.execute(sql)


# --- the pre-forest history (schema versions 1-5) --------------------------------


@migration
def create_sessions(conn: sqlite3.Connection) -> None:
    _run(
        conn,
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            harness TEXT NOT NULL DEFAULT '',
            cwd TEXT,
            created_at TEXT NOT NULL
        )""",
    )


@migration
def create_agent_events(conn: sqlite3.Connection) -> None:
    # The linear event log that came before the forest; converted and removed at 6.
    _run(
        conn,
        """CREATE TABLE agent_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            event_type TEXT NOT NULL,
            payload TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX agent_events_session ON agent_events(session_id, seq)",
    )


@migration
def create_session_entries(conn: sqlite3.Connection) -> None:
    # A rowid table (payloads can be large, so no WITHOUT ROWID); the unique
    # (session_id, sequence) index both guards gap-free numbering and serves
    # insertion-order reads; the parent index serves children and tips.
    _run(
        conn,
        """CREATE TABLE session_entries (
            id TEXT NOT NULL PRIMARY KEY,
            session_id TEXT NOT NULL,
            parent_entry_id TEXT,
            sequence INTEGER NOT NULL,
            semantic_schema_version INTEGER NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            context_visibility TEXT NOT NULL,
            created_at TEXT NOT NULL,
            stamp TEXT
        )""",
        "CREATE UNIQUE INDEX session_entries_sequence ON session_entries(session_id, sequence)",
        "CREATE INDEX session_entries_parent ON session_entries(parent_entry_id)",
    )


@migration
def create_session_heads(conn: sqlite3.Connection) -> None:
    _run(
        conn,
        """CREATE TABLE session_heads (
            session_id TEXT PRIMARY KEY,
            active_entry_id TEXT,
            updated_at TEXT NOT NULL
        )""",
    )


@migration
def entries_immutable(conn: sqlite3.Connection) -> None:
    # History is append-only: moving a head is the only way to "rewind".
    _run(
        conn,
        """CREATE TRIGGER session_entries_no_update BEFORE UPDATE ON session_entries
        BEGIN
            SELECT RAISE(ABORT, 'session_entries are immutable: an entry cannot be updated');
        END""",
        """CREATE TRIGGER session_entries_no_delete BEFORE DELETE ON session_entries
        BEGIN
            SELECT RAISE(ABORT, 'session_entries are immutable: an entry cannot be deleted');
        END""",
    )


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


@migration
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


@migration
def session_status_visibility_quarantine(conn: sqlite3.Connection) -> None:
    _run(
        conn,
        "ALTER TABLE sessions ADD COLUMN status TEXT NOT NULL DEFAULT 'active'",
        "ALTER TABLE sessions ADD COLUMN visibility TEXT NOT NULL DEFAULT 'top-level'",
        # Set by `check` when a session's tree is damaged; reads refuse it.
        "ALTER TABLE sessions ADD COLUMN quarantine TEXT",
    )


@migration
def workspace_and_agent_trees(conn: sqlite3.Connection) -> None:
    # Two trees kept apart from the conversation tree and from each other: no
    # foreign key, trigger or cascade links them, so an operation on one never
    # implies one on another. Records are marked removed, never deleted; the
    # parent-kind rules need the parent's row and are checked in trees.py.
    _run(
        conn,
        """CREATE TABLE workspaces (
            id TEXT PRIMARY KEY,
            parent_id TEXT,
            kind TEXT NOT NULL
                CHECK (kind IN ('repository', 'task_worktree', 'worker_worktree')),
            path TEXT NOT NULL,
            branch TEXT,
            created_at TEXT NOT NULL,
            removed_at TEXT,
            CHECK ((kind = 'repository') = (parent_id IS NULL))
        )""",
        "CREATE INDEX workspaces_parent ON workspaces(parent_id)",
        # One directory is one live workspace; removing it frees the path.
        "CREATE UNIQUE INDEX workspaces_live_path ON workspaces(path) WHERE removed_at IS NULL",
        """CREATE TABLE agents (
            id TEXT PRIMARY KEY,
            parent_id TEXT,
            role TEXT NOT NULL CHECK (role IN ('orchestrator', 'worker')),
            session_id TEXT NOT NULL,
            workspace_id TEXT,
            policy TEXT,
            created_at TEXT NOT NULL,
            removed_at TEXT,
            CHECK ((role = 'orchestrator') = (parent_id IS NULL)),
            CHECK ((role = 'worker') = (policy IS NOT NULL))
        )""",
        "CREATE INDEX agents_parent ON agents(parent_id)",
        # A conversation is written by at most one live agent (agent_for_session).
        "CREATE UNIQUE INDEX agents_live_session ON agents(session_id) WHERE removed_at IS NULL",
    )


@migration
def session_search_index(conn: sqlite3.Connection) -> None:
    # FTS5 over conversational entries and a per-chat digest, kept in sync by
    # triggers; entries already stored are indexed here (frozen/, as released).
    from .frozen import session_search_index as ddl

    _run(conn, *ddl.CREATE_TABLES, *ddl.BACKFILL, *ddl.CREATE_TRIGGERS)


@migration
def session_sources(conn: sqlite3.Connection) -> None:
    # Where an imported chat came from (format, file, the source's own session
    # id), its summary and the git branch it last ran on. Imported ids derive
    # from (format, source id), so the index serves "was this imported?".
    _run(
        conn,
        "ALTER TABLE sessions ADD COLUMN source_format TEXT",
        "ALTER TABLE sessions ADD COLUMN source_path TEXT",
        "ALTER TABLE sessions ADD COLUMN source_id TEXT",
        "ALTER TABLE sessions ADD COLUMN summary TEXT",
        "ALTER TABLE sessions ADD COLUMN git_branch TEXT",
        "CREATE INDEX sessions_source ON sessions(source_format, source_id)",
    )


@migration
def session_gram_index(conn: sqlite3.Connection) -> None:
    # A trigram index beside the word index, for text in scripts written
    # without spaces (Chinese, Japanese, Korean, Thai, ...): only rows holding
    # such text, filled from the word index, kept in sync by triggers
    # (frozen/, as released).
    from .frozen import session_gram_index as ddl

    _run(conn, *ddl.CREATE_TABLES, *ddl.BACKFILL, *ddl.CREATE_TRIGGERS)


@migration
def store_application_id(conn: sqlite3.Connection) -> None:
    # Marks the file as a store in its header, so opening any SQLite file can
    # tell a store from another program's database before touching it.
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")


@migration
def session_origin_cwd(conn: sqlite3.Connection) -> None:
    # Where an imported chat was recorded is data, not a directory to run git
    # in: it moves out of `cwd` (the bound directory stamps use) until the
    # user binds the session (`forest bind`).
    _run(
        conn,
        "ALTER TABLE sessions ADD COLUMN origin_cwd TEXT",
        "UPDATE sessions SET origin_cwd = cwd, cwd = NULL "
        "WHERE source_format IS NOT NULL AND cwd IS NOT NULL",
    )


# Raised by sessions_no_adoption; forest.py maps it to SessionDamaged.
ADOPTION_REFUSED = "session row refused: entries or a head of a session with this id remain"


@migration
def sessions_kept(conn: sqlite3.Connection) -> None:
    # A session's entries are immutable and name it by id, so deleting its row
    # (or changing its id) would hide them from every read while `check` said
    # ok. Sessions are archived, never deleted.
    _run(
        conn,
        """CREATE TRIGGER sessions_no_delete BEFORE DELETE ON sessions
        BEGIN
            SELECT RAISE(ABORT, 'a session cannot be deleted: archive it instead');
        END""",
        """CREATE TRIGGER sessions_no_id_change BEFORE UPDATE OF id ON sessions
        WHEN NEW.id IS NOT OLD.id
        BEGIN
            SELECT RAISE(ABORT, 'a session id cannot change: its entries name it');
        END""",
    )


@migration
def sessions_no_adoption(conn: sqlite3.Connection) -> None:
    # A row deleted before sessions_kept (or behind its back) leaves entries
    # that a new session with the same id would silently adopt. A row may
    # come back over them only quarantined, which is how `repair` recreates
    # it before checking the session afresh.
    _run(
        conn,
        f"""CREATE TRIGGER sessions_no_adoption BEFORE INSERT ON sessions
        WHEN NEW.quarantine IS NULL AND (
            EXISTS (SELECT 1 FROM session_entries WHERE session_id = NEW.id)
            OR EXISTS (SELECT 1 FROM session_heads WHERE session_id = NEW.id))
        BEGIN
            SELECT RAISE(ABORT, '{ADOPTION_REFUSED}');
        END""",
    )


@migration
def search_large_payloads_outside_sql(conn: sqlite3.Connection) -> None:
    # The index triggers skip payloads over 1 MiB, which their writers index
    # from Python (store/sqlite/search/large.py): SQLite's JSON functions held
    # some thirty copies of a 60 MB message at once, 1.9 GB for one insert.
    from .frozen import search_large_payloads_outside_sql as ddl

    _run(conn, *ddl.SMALL_PAYLOAD_TRIGGERS)


@migration
def search_index_deferred(conn: sqlite3.Connection) -> None:
    # The full-text index leaves the append's transaction: the entry triggers
    # move, unchanged in body, onto the empty view search_feed, and one small
    # trigger notes each session's first entry not yet indexed; a search feeds
    # those entries through the view first (search/catchup.py). Every entry
    # stored so far was indexed by the old triggers: nothing is pending.
    from .frozen import search_index_deferred as ddl

    _run(conn, *ddl.DROP_ENTRY_TRIGGERS, *ddl.CREATE_FEED, *ddl.FEED_TRIGGERS)


@migration
def session_paths(conn: sqlite3.Connection) -> None:
    # The active path, materialised as the head moves (store/sqlite/paths.py):
    # rows 0..path_length-1 of a session are its root-to-head entries when
    # path_tip is its head; any other writer leaves path_tip behind, and then
    # reads walk the parent links as before until the next append re-materialises.
    _run(
        conn,
        "ALTER TABLE session_heads ADD COLUMN path_tip TEXT",
        "ALTER TABLE session_heads ADD COLUMN path_length INTEGER",
        """CREATE TABLE session_paths (
            session_id TEXT NOT NULL,
            depth INTEGER NOT NULL,
            entry_id TEXT NOT NULL,
            PRIMARY KEY (session_id, depth)
        ) WITHOUT ROWID""",
        "CREATE INDEX session_paths_entry ON session_paths(entry_id)",
    )


@migration
def chat_digest_project(conn: sqlite3.Connection) -> None:
    # A chat is findable by its project: the last components of its directory
    # join its title in the digest (and follow `bind`, which sets cwd).
    from .frozen import chat_digest_project as ddl

    _run(conn, *ddl.REPLACE_TRIGGERS, *ddl.BACKFILL)


@migration
def session_path_segments(conn: sqlite3.Connection) -> None:
    # The active path as segments (runs of consecutive sequences) instead of one
    # row per entry (store/sqlite/paths.py): an append at the head then writes
    # nothing but the head row. Paths stored the old way are forgotten: reads
    # walk the parent links until the next append or move stores them again.
    _run(
        conn,
        "DROP INDEX session_paths_entry",
        "DROP TABLE session_paths",
        """CREATE TABLE session_path_segments (
            session_id TEXT NOT NULL,
            depth INTEGER NOT NULL,
            from_sequence INTEGER NOT NULL,
            PRIMARY KEY (session_id, depth)
        ) WITHOUT ROWID""",
        "UPDATE session_heads SET path_tip = NULL, path_length = NULL",
    )


@migration
def entry_vectors(conn: sqlite3.Connection) -> None:
    # The semantic leg's entry vectors, computed outside the appends
    # (store/sqlite/vectors.py, search/semantic.py); every indexed chat is pending.
    from .frozen import entry_vectors as ddl

    _run(conn, *ddl.CREATE)


@migration
def entry_branch_index(conn: sqlite3.Connection) -> None:
    # An entry that continues its parent (the entry just before it in the session,
    # every append of a linear chat) gets no parent-index row: children and tips
    # find it through the (session_id, sequence) index (rows.py), so such an append
    # writes one page fewer. `parent_sequence` is the parent's sequence, written by
    # appends; rows stored before it (and imported ones) hold NULL and stay indexed.
    # `check` compares it with the parent's (integrity.py).
    _run(
        conn,
        "ALTER TABLE session_entries ADD COLUMN parent_sequence INTEGER",
        f"CREATE INDEX session_entries_branch ON session_entries(parent_entry_id) "
        f"WHERE parent_entry_id IS NOT NULL AND {BRANCH}",
        "DROP INDEX session_entries_parent",
    )


def schema_version() -> int:
    return len(MIGRATIONS)


def applied(conn: sqlite3.Connection) -> set[str]:
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'forest_migrations'"
    ).fetchone()
    if has_table:
        return {row[0] for row in conn.execute("SELECT name FROM forest_migrations")}
    # Databases from before migrations were recorded by name carry only a
    # version number: the first N migrations describe their schema.
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    return {name for name, _ in MIGRATIONS[:version]}


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
    """Names of the migrations this store still needs, in order."""
    done = applied(conn)
    return [name for name, _ in MIGRATIONS if name not in done]


def _record_legacy_names(conn: sqlite3.Connection, done: set[str]) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS forest_migrations "
        "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    if done and not conn.execute("SELECT 1 FROM forest_migrations").fetchone():
        conn.executemany(
            "INSERT INTO forest_migrations(name, applied_at) VALUES (?, 'before names')",
            [(n,) for n, _ in MIGRATIONS if n in done],
        )


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply every pending migration, each in its own IMMEDIATE transaction.

    Safe against concurrent openers: the pending set is re-read inside each
    write transaction. Returns the names applied by this call.
    """
    ran: list[str] = []
    if len(applied(conn)) == len(MIGRATIONS):
        return ran
    for position, (name, fn) in enumerate(MIGRATIONS, 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            done = applied(conn)
            if name not in done:
                # Recording names starts inside the first migration's own
                # transaction, so a refused migration leaves no trace at all.
                _record_legacy_names(conn, done)
                fn(conn)
                conn.execute(
                    "INSERT INTO forest_migrations(name, applied_at) VALUES (?, ?)",
                    (name, iso(utc_now())),
                )
                conn.execute(f"PRAGMA user_version = {position}")
                ran.append(name)
            conn.execute("COMMIT")
        except MigrationError:
            rollback(conn)
            raise
        except sqlite3.Error as exc:
            rollback(conn)
            if getattr(exc, "sqlite_errorcode", -1) & 0xFF in ENVIRONMENT_CODES:
                raise  # the opener names the file and the cause (full, read-only, busy)
            raise MigrationError(name, str(exc)) from exc
    return ran


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is still open.

    SQLite rolls back by itself on some errors (SQLITE_FULL among them); a
    second ROLLBACK would then fail and hide the error that mattered.
    """
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):  # the error being raised says more
            conn.execute("ROLLBACK")
