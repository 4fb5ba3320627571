"""The durable forest on SQLite: the embedded default backend.

Writes go through one `BEGIN IMMEDIATE` transaction each (insert + head move
are atomic and concurrent writers queue on the lock instead of deadlocking on
an upgrade). Reads that walk a branch use one recursive query, never one query
per parent, and fail closed on damage or unknown schema versions.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from operator import itemgetter
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import orjson

from ...errors import (
    ForeignEntry,
    HeadMoved,
    InvalidArgument,
    SessionDamaged,
    SessionExists,
    SessionQuarantined,
    StoreReadOnly,
    UnknownCheckpoint,
    UnknownEntry,
    UnknownSession,
    UnsupportedSchemaVersion,
)
from ...gitstamp import Stamper
from ...ids import Clock, id_problem, iso, new_id, utc_now
from ...jsontext import NonFinite, encode, payload_text
from ...kinds import validate_payload
from ...model import (
    SUPPORTED_SCHEMA_VERSIONS,
    ChatSpec,
    CheckReport,
    Entry,
    ImportReport,
    Node,
    RepairReport,
    SessionInfo,
    SessionStatus,
    SessionVisibility,
    Transcript,
    Visibility,
)
from ...search import large
from ...search.mixin import SearchMixin
from ..base import ChatWriter
from . import integrity
from .bulk import SQLiteBulk
from .connection import (
    DURABILITY,
    converts_driver_errors,
    default_path,
    driver_error,
    open_store,
    rollback,
    transaction,
)
from .refs import RefsMixin, suggesting
from .repair import repair_session
from .rows import ENTRY_COLUMNS, INSERT_ENTRY, UPSERT_HEAD
from .trees import TreesMixin
from .worktree import WorktreeMixin

if TYPE_CHECKING:
    from ...io.report import Progress


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = _Unset()


class _Auto:
    def __repr__(self) -> str:
        return "AUTO"


# append(stamp=AUTO): the controller stamps entries of sessions bound to a directory.
AUTO: Final = _Auto()


# One round trip gathers everything an append must check: the session (and
# its quarantine), the head, the next sequence, and the owner and schema
# version of the entry the append goes below (the given parent, else the
# head). (An INSERT ... SELECT doing the checks in place measured slower:
# SQLite materialises a SELECT that reads the table being inserted into.)
APPEND_STATE = """
SELECT s.quarantine, h.active_entry_id,
       (SELECT MAX(sequence) FROM session_entries WHERE session_id = s.id),
       p.session_id, p.semantic_schema_version, s.cwd
FROM sessions s
LEFT JOIN session_heads h ON h.session_id = s.id
LEFT JOIN session_entries p ON p.id = COALESCE(:parent, h.active_entry_id)
WHERE s.id = :sid
"""

# Carries every column through the recursion so each step is one primary-key
# lookup. The depth bound (the session's entry count) turns a corrupt cycle
# into a finite, detectable result instead of an endless query. No ORDER BY:
# the recursion queue is FIFO, so rows come head-first and Python reverses
# them (checked via the depth column) instead of SQLite sorting them.
ACTIVE_PATH = f"""
WITH RECURSIVE path({ENTRY_COLUMNS}, depth) AS (
    SELECT {ENTRY_COLUMNS}, 0 FROM session_entries
    WHERE id = (SELECT active_entry_id FROM session_heads WHERE session_id = :sid)
    UNION ALL
    SELECT e.id, e.session_id, e.parent_entry_id, e.sequence, e.semantic_schema_version,
           e.kind, e.payload, e.context_visibility, e.created_at, e.stamp, path.depth + 1
    FROM session_entries e JOIN path ON e.id = path.parent_entry_id
    WHERE path.depth < (SELECT MAX(sequence) FROM session_entries WHERE session_id = :sid)
)
SELECT {ENTRY_COLUMNS}, depth FROM path
"""

HEAD_STATE = """
SELECT s.quarantine, h.active_entry_id
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id WHERE s.id = ?
"""

SESSION_ROW = """
SELECT s.id, s.title, s.harness, s.cwd, s.status, s.visibility, s.created_at,
       COALESCE(h.updated_at, s.created_at), h.active_entry_id,
       (SELECT COUNT(*) FROM session_entries WHERE session_id = s.id), s.quarantine,
       s.source_format, s.source_path, s.source_id, s.origin_cwd
FROM sessions s LEFT JOIN session_heads h ON h.session_id = s.id
"""

SESSION_ORDERS = {
    # rowid order is creation order, even within one millisecond.
    "created": " ORDER BY s.rowid",
    # Latest activity first (the head's last move, else creation), as the
    # `updated_at` a listing shows; newer sessions first on a tie.
    "updated": " ORDER BY COALESCE(h.updated_at, s.created_at) DESC, s.rowid DESC",
}


def _prepare(kind: str, payload: Any, visibility: str | None) -> tuple[str, str]:
    """Validate an entry to be appended: (payload JSON, visibility)."""
    spec = validate_payload(kind, payload)
    if visibility is None:
        visibility = spec.default_visibility
    elif visibility not in Visibility.__members__.values():
        raise InvalidArgument(
            "context_visibility", f"expected context or hidden; got {visibility!r}"
        )
    return payload_text(kind, payload), str(visibility)


def _stamp_text(stamp: dict[str, Any] | None) -> str | None:
    if stamp is None:
        return None
    try:
        return encode(stamp).decode()
    except NonFinite as exc:
        raise InvalidArgument("stamp", str(exc)) from exc
    except orjson.JSONEncodeError as exc:
        raise InvalidArgument("stamp", f"cannot be stored as JSON: {exc}") from exc


def _checked(
    state: tuple[Any, ...] | None,
    session_id: str,
    parent: str | None,
    expect_head: str | _Unset | None,
) -> tuple[str | None, int]:
    """From APPEND_STATE: the parent to append below and the next sequence, or the error.

    Only the parent's schema version is checked, never its ancestors': every
    writer refuses to write below an entry it cannot read, and writes at a
    version at least its parent's (appends at CURRENT_SCHEMA_VERSION, imports
    check both), so no entry has an ancestor of a higher version than its own.
    Readable versions are all versions up to this sessionforest's, so a
    readable parent means a readable path to the root. Entries stored before
    this rule (or by raw SQL) can break it; `check` finds those
    (unsupported-version) and quarantines the session, which refuses appends.
    """
    if state is None:
        raise UnknownSession(session_id)
    quarantine, head, last, owner, version, _ = state
    if quarantine is not None:
        raise SessionQuarantined(session_id, quarantine)
    if expect_head is not UNSET and expect_head != head:
        raise HeadMoved(session_id, expect_head, head)  # type: ignore[arg-type]
    below = parent if parent is not None else head
    if below is None:
        return None, (last or 0) + 1
    if owner is None:
        if parent is None:
            raise SessionDamaged(session_id, f"head {head} is not an entry of this store")
        raise UnknownEntry(parent, session_id)
    if owner != session_id:
        if parent is None:
            raise SessionDamaged(session_id, f"head {head} belongs to session {owner}")
        raise ForeignEntry(parent, session_id, owner)
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        # Writing below an entry this version cannot read would build on
        # history no reader of this store can check.
        raise UnsupportedSchemaVersion(
            below, version, session_id, "append below an entry it cannot read"
        )
    return below, (last or 0) + 1


def _entry(row: tuple[Any, ...]) -> Entry:
    version = row[4]
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        raise UnsupportedSchemaVersion(row[0], version, row[1])
    return Entry.from_row(row)


def _entries(rows: list[tuple[Any, ...]]) -> list[Entry]:
    # Check every version before building anything: nothing partial comes back.
    for row in rows:
        if row[4] not in SUPPORTED_SCHEMA_VERSIONS:
            raise UnsupportedSchemaVersion(row[0], row[4], row[1])
    return list(map(Entry.from_row, rows))


__all__ = ["AUTO", "DURABILITY", "UNSET", "Forest", "default_path"]


@converts_driver_errors(exempt=("append",))
class Forest(RefsMixin, WorktreeMixin, TreesMixin, SearchMixin):
    """A store of sessions, each a tree of immutable entries with a movable head."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        clock: Clock,
        *,
        readonly: str | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self._conn = conn
        self._cursor = conn.cursor()
        self._stamper = Stamper()
        self._cwd: dict[str, str | None] = {}  # see WorktreeMixin
        self.path = path
        self.readonly_why = readonly  # why writes are refused; None: they are not
        self._clock = clock
        self._on_close = on_close
        self.migrated: list[str] = []  # migrations this open applied
        self._bulk = SQLiteBulk(path, self._write, lambda: nullcontext(self._conn))

    # --- opening -----------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        readonly: bool = False,
        create: bool = True,
        durability: str = "normal",
        clock: Clock | None = None,
        busy_timeout_ms: int = 30_000,
    ) -> Forest:
        """Open the store at `path` (None: `FOREST_DB` or the user data directory).

        Read-write (the default) creates the file when `create` (and, for the
        default store only, its directory), migrates and uses WAL with
        `durability` "normal" (synchronous=NORMAL) or "full". `readonly=True`
        never creates, migrates or writes anything: a missing file raises
        StoreMissing, a store needing migrations StoreOutdated. Either mode
        refuses a database that is not a store (NotAStore), and a file that
        cannot be written opens read-only (`forest.readonly`).
        """
        if durability not in DURABILITY:
            raise InvalidArgument("durability", f"expected one of normal, full; got {durability!r}")
        target, opened = open_store(
            path,
            readonly=readonly,
            create=create,
            durability=durability,
            busy_timeout_ms=busy_timeout_ms,
        )
        forest = cls(
            opened.conn,
            target,
            clock or utc_now,
            readonly=opened.readonly,
            on_close=opened.close,
        )
        forest.migrated = opened.migrated
        return forest

    @property
    def readonly(self) -> bool:
        """Whether this Forest refuses writes (opened read-only, or the file is not writable)."""
        return self.readonly_why is not None

    def close(self) -> None:
        if self._on_close is not None:
            self._on_close()
        else:
            self._conn.close()

    def __enter__(self) -> Forest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        if self.readonly_why is not None:
            raise StoreReadOnly(str(self.path), self.readonly_why)
        with transaction(self._conn, self.path, self.readonly_why):
            yield self._conn

    def _now(self) -> str:
        return iso(self._clock())

    # --- sessions ----------------------------------------------------------------

    def create_session(
        self,
        title: str = "",
        harness: str = "",
        cwd: str | os.PathLike[str] | None = None,
        *,
        session_id: str | None = None,
        visibility: str = SessionVisibility.TOP_LEVEL,
        created_at: str | None = None,
    ) -> str:
        if visibility not in SessionVisibility.__members__.values():
            raise InvalidArgument("session visibility", f"{visibility!r}")
        if session_id and (why := id_problem(session_id)) is not None:
            raise InvalidArgument("session id", f"{session_id!r} {why}")
        sid = session_id or new_id()
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone():
                raise SessionExists(sid)
            try:
                conn.execute(
                    "INSERT INTO sessions(id, title, harness, cwd, created_at, visibility) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        sid,
                        title,
                        harness,
                        os.path.abspath(cwd) if cwd is not None else None,
                        created_at or self._now(),
                        str(visibility),
                    ),
                )
            except sqlite3.IntegrityError as exc:
                refused = integrity.adoption_refused(exc, sid)
                if refused is None:
                    raise
                raise refused from exc
        return sid

    def session(self, session_id: str) -> SessionInfo:
        row = self._conn.execute(SESSION_ROW + " WHERE s.id = ?", (session_id,)).fetchone()
        if row is None:
            raise self.unknown_session(session_id)
        return SessionInfo(*row)

    def sessions(self, *, include_hidden: bool = True, order: str = "created") -> list[SessionInfo]:
        """Every session (`include_hidden=False`: top-level ones only).

        `order="created"` lists them oldest first; `"updated"` puts the latest
        activity (the `updated_at` each carries) first, as a sidebar does.
        """
        if order not in SESSION_ORDERS:
            raise InvalidArgument("order", f"expected created or updated; got {order!r}")
        where = "" if include_hidden else " WHERE s.visibility = 'top-level'"
        rows = self._conn.execute(SESSION_ROW + where + SESSION_ORDERS[order])
        return [SessionInfo(*row) for row in rows]

    def set_status(self, session_id: str, status: str) -> None:
        if status not in SessionStatus.__members__.values():
            raise InvalidArgument("status", f"expected active, ended or archived; got {status!r}")
        with self._write() as conn:
            if not conn.execute(
                "UPDATE sessions SET status = ? WHERE id = ?", (status, session_id)
            ).rowcount:
                raise self.unknown_session(session_id)

    def _readable(self, session_id: str) -> str | None:
        """The session's head; raises if the session is unknown or quarantined."""
        row = self._conn.execute(HEAD_STATE, (session_id,)).fetchone()
        if row is None:
            raise self.unknown_session(session_id)
        if row[0] is not None:
            raise SessionQuarantined(session_id, row[0])
        return row[1]  # type: ignore[no-any-return]

    # --- writing -----------------------------------------------------------------

    def append(
        self,
        session_id: str,
        kind: str,
        payload: dict[str, Any],
        parent: str | None = None,
        visibility: str | None = None,
        expect_head: str | _Unset | None = UNSET,
        created_at: str | None = None,
        stamp: dict[str, Any] | _Auto | None = AUTO,
    ) -> Entry:
        """Append an entry as a child of `parent` (default: the head); the head moves to it.

        Appending below anything but the head starts a new branch. With
        `expect_head`, the append fails with HeadMoved (appending nothing) if
        the head is not that entry (None: an empty session) at commit time.

        `stamp=AUTO` (the controller's append) stamps the entry with the git
        state of the session's directory when it has one; importers pass
        `stamp=None` (history that predates the stamp) or the stamp to keep.
        """
        body, vis = _prepare(kind, payload, visibility)
        entry_id, now = new_id(), self._now()
        created = created_at or now
        auto, cwd = False, None
        if isinstance(stamp, _Auto):
            # Taken before the write lock: git status must not hold up other writers.
            auto, cwd = True, self._session_cwd(session_id)
            stamp = self._stamper.stamp(cwd) if cwd is not None else None
        stamp_text = _stamp_text(stamp)
        # Inlined transaction on one reused cursor (not self._write()): this
        # is the hottest path, and every avoided allocation shows.
        conn = self._cursor
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise driver_error(self.path, exc, readonly=self.readonly_why) from exc
        try:
            state = conn.execute(APPEND_STATE, {"sid": session_id, "parent": parent}).fetchone()
            parent, sequence = _checked(state, session_id, parent, expect_head)
            if auto and state[5] != cwd:
                stamp = self._rebound(session_id, state[5])
                stamp_text = _stamp_text(stamp)
            conn.execute(
                INSERT_ENTRY,
                (entry_id, session_id, parent, sequence, 2, kind, body, vis, created, stamp_text),
            )
            if large.is_large(body):
                large.index_large(conn, session_id, sequence, kind, large.entry_text(kind, payload))
            conn.execute(UPSERT_HEAD, (session_id, entry_id, now))
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            rollback(self._conn)
            raise driver_error(self.path, exc, readonly=self.readonly_why) from exc
        except BaseException as exc:
            rollback(self._conn)
            # Suggestions are looked for only now, with the write lock released.
            if isinstance(exc, UnknownSession | UnknownEntry):
                raise self._with_suggestions(exc) from None
            raise
        return Entry(entry_id, session_id, parent, sequence, kind, payload, vis, 2, created, stamp)

    @suggesting
    def append_many(
        self,
        session_id: str,
        items: Sequence[tuple[str, dict[str, Any], str | None]],
        parent: str | None = None,
        expect_head: str | _Unset | None = UNSET,
    ) -> list[Entry]:
        """Append (kind, payload, visibility) items as one chain, in ONE transaction.

        The first goes below `parent` (default: the head), each next one below
        the previous; the head ends on the last. All or nothing: an adapter's
        turn (notifications plus the message) can never be half written.
        """
        prepared = [(kind, payload, *_prepare(kind, payload, vis)) for kind, payload, vis in items]
        if not prepared:
            return []
        now = self._now()
        cwd = self._session_cwd(session_id)
        stamp = self._stamper.stamp(cwd) if cwd is not None else None
        stamp_text = _stamp_text(stamp)
        entries: list[Entry] = []
        with self._write() as conn:
            state = conn.execute(APPEND_STATE, {"sid": session_id, "parent": parent}).fetchone()
            parent, sequence = _checked(state, session_id, parent, expect_head)
            if state[5] != cwd:
                stamp = self._rebound(session_id, state[5])
                stamp_text = _stamp_text(stamp)
            for kind, payload, body, vis in prepared:
                entry_id = new_id()
                conn.execute(
                    INSERT_ENTRY,
                    (entry_id, session_id, parent, sequence, 2, kind, body, vis, now, stamp_text),
                )
                if large.is_large(body):
                    text = large.entry_text(kind, payload)
                    large.index_large(conn, session_id, sequence, kind, text)
                entries.append(
                    Entry(entry_id, session_id, parent, sequence, kind, payload, vis, 2, now, stamp)
                )
                parent, sequence = entry_id, sequence + 1
            conn.execute(UPSERT_HEAD, (session_id, parent, now))
        return entries

    def move_head(
        self, session_id: str, entry_id: str, *, expect_head: str | _Unset | None = UNSET
    ) -> None:
        """Point the session's head at `entry_id`. History and files are untouched."""
        with self._write() as conn:
            head = self._readable(session_id)
            owner = conn.execute(
                "SELECT session_id FROM session_entries WHERE id = ?", (entry_id,)
            ).fetchone()
            if owner is None:
                raise self.unknown_entry(session_id, entry_id)
            if owner[0] != session_id:
                raise ForeignEntry(entry_id, session_id, owner[0])
            if expect_head is not UNSET and head != expect_head:
                raise HeadMoved(session_id, expect_head, head)  # type: ignore[arg-type]
            conn.execute(UPSERT_HEAD, (session_id, entry_id, self._now()))

    def checkpoint(self, session_id: str, label: str, summary: str | None = None) -> Entry:
        """Record a checkpoint entry labelling the current state (head moves onto it)."""
        return self.append(session_id, "checkpoint", {"label": label, "summary": summary or label})

    def seek_checkpoint(self, session_id: str, label: str) -> Entry:
        """Move the head to the most recent checkpoint with `label`; returns it."""
        self._readable(session_id)
        row = self._conn.execute(
            f"SELECT {ENTRY_COLUMNS} FROM session_entries "
            "WHERE session_id = ? AND kind = 'checkpoint' AND json_extract(payload, '$.label') = ? "
            "ORDER BY sequence DESC LIMIT 1",
            (session_id, label),
        ).fetchone()
        if row is None:
            raise UnknownCheckpoint(label, session_id)
        entry = _entry(row)
        self.move_head(session_id, entry.id)
        return entry

    # --- reading -----------------------------------------------------------------

    def head(self, session_id: str) -> str | None:
        return self._readable(session_id)

    def entry(self, session_id: str, entry_id: str) -> Entry:
        self._readable(session_id)
        row = self._conn.execute(
            f"SELECT {ENTRY_COLUMNS} FROM session_entries WHERE id = ?", (entry_id,)
        ).fetchone()
        if row is None:
            raise self.unknown_entry(session_id, entry_id)
        if row[1] != session_id:
            raise ForeignEntry(entry_id, session_id, row[1])
        return _entry(row)

    def active_path(self, session_id: str) -> list[Entry]:
        """Entries from the root to the head, in one query; fails closed on damage."""
        head = self._readable(session_id)
        rows = self._conn.execute(ACTIVE_PATH, {"sid": session_id}).fetchall()
        if rows and rows[0][10] == 0 and rows[-1][10] == len(rows) - 1:
            rows.reverse()  # the FIFO recursion yielded head first
        else:
            rows.sort(key=itemgetter(10), reverse=True)
        if head is not None and not rows:
            raise SessionDamaged(session_id, f"head {head} is not an entry of this store")
        if rows:
            root = rows[0]
            if root[2] is not None:
                if any(r[0] == root[2] for r in rows):
                    raise SessionDamaged(session_id, f"cycle through entry {root[2]}")
                raise SessionDamaged(session_id, f"entry {root[0]} names missing parent {root[2]}")
            for row in rows:
                if row[1] != session_id:
                    raise SessionDamaged(
                        session_id, f"entry {row[0]} on the active path belongs to {row[1]}"
                    )
        return _entries(rows)

    def entries(self, session_id: str) -> list[Entry]:
        """Every entry of the session, all branches, in insertion (sequence) order."""
        self._readable(session_id)
        rows = self._conn.execute(
            f"SELECT {ENTRY_COLUMNS} FROM session_entries WHERE session_id = ? ORDER BY sequence",
            (session_id,),
        ).fetchall()
        return _entries(rows)

    def iter_entries(self, session_id: str, batch: int = 1000) -> Iterator[Entry]:
        """Like `entries`, streamed in batches (memory stays flat on huge sessions)."""
        self._readable(session_id)
        cursor = self._conn.execute(
            f"SELECT {ENTRY_COLUMNS} FROM session_entries WHERE session_id = ? ORDER BY sequence",
            (session_id,),
        )
        while rows := cursor.fetchmany(batch):
            yield from _entries(rows)

    def skeleton(self, session_id: str) -> list[Node]:
        """The tree's shape (ids, parents, kinds; no payloads), in sequence order."""
        self._readable(session_id)
        rows = self._conn.execute(
            "SELECT id, parent_entry_id, sequence, kind, context_visibility, "
            "semantic_schema_version FROM session_entries WHERE session_id = ? ORDER BY sequence",
            (session_id,),
        ).fetchall()
        unknown = {r[5] for r in rows} - SUPPORTED_SCHEMA_VERSIONS
        if unknown:
            bad = next(r for r in rows if r[5] in unknown)
            raise UnsupportedSchemaVersion(bad[0], bad[5], session_id)
        return list(map(Node._make, rows))

    def children(self, session_id: str, entry_id: str) -> list[Entry]:
        self.entry(session_id, entry_id)
        rows = self._conn.execute(
            f"SELECT {ENTRY_COLUMNS} FROM session_entries "
            "WHERE parent_entry_id = ? AND session_id = ? ORDER BY sequence",
            (entry_id, session_id),
        ).fetchall()
        return _entries(rows)

    def tips(self, session_id: str) -> list[Entry]:
        """Every entry without children (one per branch), in insertion order."""
        self._readable(session_id)
        rows = self._conn.execute(
            f"SELECT {ENTRY_COLUMNS} FROM session_entries e WHERE session_id = ? "
            "AND NOT EXISTS (SELECT 1 FROM session_entries c WHERE c.parent_entry_id = e.id) "
            "ORDER BY sequence",
            (session_id,),
        ).fetchall()
        return _entries(rows)

    def checkpoints(self, session_id: str) -> list[Entry]:
        self._readable(session_id)
        rows = self._conn.execute(
            f"SELECT {ENTRY_COLUMNS} FROM session_entries "
            "WHERE session_id = ? AND kind = 'checkpoint' ORDER BY sequence",
            (session_id,),
        ).fetchall()
        return _entries(rows)

    # --- integrity ---------------------------------------------------------------

    def check(self, *, quarantine: bool = True) -> CheckReport:
        """Find orphan and cross-session parents, cycles, sequence gaps, entries of
        unreadable schema versions, invalid or missing heads, and entries whose
        session row is gone.

        A damaged session is quarantined (reads and appends refuse it) without
        touching any other session; a quarantined session found healthy again
        is released. A session whose row is gone is fenced off by that alone
        (see integrity.apply_quarantine); `repair` recreates the row.
        """
        report = integrity.scan(self._conn)
        if quarantine:
            with self._write() as conn:
                integrity.apply_quarantine(conn, report)
        return report

    def repair(self, session_id: str) -> RepairReport:
        """Fix what can be fixed without touching an entry, then check the session afresh.

        Recreates a missing session row (its entries remain) and points a
        missing, dangling or foreign head at the newest entry whose path to the
        root is intact. Nothing else: entries are immutable, so orphan or
        foreign parents, cycles, sequence gaps and unreadable schema versions
        stay, each reported with why. The fresh check alone decides the
        quarantine: released only when the session is clean, set otherwise.
        """
        with self._write() as conn:
            return repair_session(conn, session_id, self._now())

    # --- import and export: io functions over SQLiteBulk -----------------------

    def bulk_chat(self, spec: ChatSpec, source: Path) -> AbstractContextManager[ChatWriter]:
        """Write one chat in one transaction (see BulkStore.bulk_chat)."""
        return self._bulk.bulk_chat(spec, source)

    def branches(self, session_id: str) -> int:
        """How many points of the session's tree re-did a turn."""
        self._readable(session_id)
        return self._bulk.branches(session_id)

    def import_chats(
        self,
        fmt: str,
        path: str | os.PathLike[str],
        *,
        skip_bad: bool = False,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Import every chat of `path` in format `fmt` (claude-code, chatgpt, pi, yoagent, native).

        Each chat is its own transaction: a bad line fails that chat (the store
        unchanged for it) unless `skip_bad`, which records the line and goes on.
        A failed chat is listed in the report's `failed` (file, line, reason)
        and the import goes on with the others; only a path that does not
        exist, or a store that cannot be written, raises. Re-importing is
        idempotent; a longer file adds only its new entries.
        """
        from ...io import importers  # io loads on first use: `import sessionforest` stays quick

        return importers.run(
            self._bulk, self, fmt, Path(path), skip_bad=skip_bad, progress=progress
        )

    def import_native(self, path: str | os.PathLike[str]) -> SessionInfo:
        """Import one native JSONL file (all or nothing) and record it as the chat's source."""
        from ...io import native

        result = native.import_file(self._bulk, Path(path), record_source=True)
        return self.session(result.session_id)

    def import_jsonl(self, path: str | os.PathLike[str]) -> str:
        """Import one native JSONL session file; all or nothing. Returns the session id."""
        from ...io import native

        return native.import_file(self._bulk, Path(path), record_source=False).session_id

    def export_jsonl(self, session_id: str, out: IO[str]) -> int:
        """Write the session as native JSONL to the text stream `out`; returns entry count."""
        from ...io import native

        self._readable(session_id)
        return native.export_session(self._bulk, session_id, out)

    def export_yoagent(self, session_id: str, out: IO[str]) -> tuple[int, int]:
        """Write the session as yoagent JSONL; returns (lines, entries left out below the head)."""
        from ...io import yoagent

        return yoagent.export_session(self, session_id, out)

    def export_gasp(
        self, session_id: str, directory: str | os.PathLike[str], run_id: str | None = None
    ) -> Transcript:
        """Write DIR/transcripts/<run-id>.jsonl.gz (default run id: the session id)."""
        from ...io import gasp

        self._readable(session_id)
        return gasp.export_transcript(self._bulk, session_id, Path(directory), run_id)
