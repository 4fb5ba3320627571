"""Derived state of one SQLite store: what it keeps beside the entries, in one place.

Entries, sessions and heads are the store's facts. Everything below is
derived from them, could be rebuilt from them, and exists so that an append,
a load or a search costs less. This module owns all of it: where each is
written, when it is worked off, and the one point where the in-memory part
is declared stale (`invalidate`).

- The `search_pending` note: written by the `search_entry_pending` trigger
  on every entry insert; worked off by `index_some`/`catch_up`.
- The full-text rows, chat digests and activity spans: search/catchup.py,
  called from here only: the `FULL_TEXT` job of the backend's maintenance
  thread once appends pause, an append once `BOUND` entries are left
  unindexed, `catch_up` (before a search, as a writer closes) and a bulk
  chat's end (`index_in`). Stale: the entries above a session's note.
- The `vector_pending` note: a trigger on the activity span (so the catch-up
  notes it); worked off by the `VECTORS` job (search/semantic.py), made due
  when a `FULL_TEXT` run ends.
- The materialised active path (`session_path_segments`, the head row's
  `path_tip`/`path_length`): `path_to`, `path_after` and `moved` (SQL in
  paths.py) inside an append or a move, `imported_head` at the end of an
  imported chat. Stale: a `path_tip` that is not the head (restores and
  repair move heads without it): reads then walk.
- Path chunks (`session_path_chunks`, chunks.py): the materialised path's
  entries packed for a first read. An append, a move or an import notes its
  session (`_unsealed`, memory); `seal_some` packs the noted paths, inside
  `index_some`'s write transaction (the maintenance thread's steps once
  appends pause, a writer's close; not a search's catch-up). Never stale: a chunk names
  its entries by its last, and the path to an entry never changes; a session
  noted by a process killed before it sealed is read by rows past its chunks.
- Each row's `parent_sequence` and the partial branch index: the row's
  INSERT (an append chains it, bulk rows look it up, rows.py). Never stale
  (entries are immutable); `check` compares it with the parent.
- Append states (memory): `remember`, after each append, read by the next
  append of that session. Stale once another connection committed or another
  write ran here: `begin` then calls `invalidate`, the one invalidation point.
- The path cache (memory, paths.PathCache): a whole-path load keeps its rows
  by head. Never stale: a path ending at a given entry never changes.

Both in-memory caches are bounded in bytes (budget.py), not rows: a cached
path holding a 60 MB payload counts as 60 MB.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Final

from ...budget import Budgeted, MiB
from ..base.maintenance import FULL_TEXT, VECTORS, Maintenance
from . import chunks, paths
from .connection import transaction
from .database import Database

DATA_VERSION = "PRAGMA data_version"  # changes when another connection commits
# A session's latest change that added no entry, under a new rev (SQLiteCommits reads it).
FORGET_CHANGE = "DELETE FROM session_changes WHERE session_id = ?"
NOTE_CHANGE = "INSERT INTO session_changes(session_id) VALUES (?)"
HEAD_PATH = "SELECT active_entry_id, path_tip, path_length FROM session_heads WHERE session_id = ?"
# Seconds without an append before the maintenance thread indexes: longer than
# the gaps in a burst of appends (tens of microseconds), far shorter than a model
# call, so an agent's turns are indexed between its appends.
QUIET: Final = 0.05
STATE_BYTES: Final = 4 * MiB  # remembered append states (a row is ~300 bytes)
PATH_BYTES: Final = 64 * MiB  # cached active paths

# The most entries a writing process leaves unindexed while it keeps appending
# without a pause: its next append indexes them in its own transaction. The
# bound is what a search right after a burst may have to index first: ~27 us an
# entry of ~200 characters (benchmarks/bench_index_append.py: 281 ms for 10,239),
# so a burst up to this size costs its appends nothing and a search right after
# it a few hundred ms; every other search is T1's. A lower bound would only move
# that work into the burst's appends (the cost per entry is the same, a little
# lower in larger batches: 13% fewer instructions in batches of 1,024 than of
# 256, callgrind, issue 15).
BOUND: Final = 10_000
# Entries the maintenance thread indexes per write transaction: a writer that
# resumes waits for at most one chunk (~15 ms).
CHUNK: Final = 512
# Entries a limited `index_some` (a maintenance step) packs into path chunks, whole
# chunks (at most one past it), a long path too; the rest waits for the next step.
# A chunk of 256 costs about 1 ms to seal: a writer that resumes behind a step waits
# for its full-text chunk and ~2 ms of sealing (peers._forest_deep's slowest branch
# append: 2.4-2.9 ms, against 45 ms when a 100,000-entry path was packed at once).
SEAL_STEP: Final = 512
# The catch-up itself (search/catchup.py, with the tool-text and wrapper rules it
# builds its SQL from) is imported where it runs: a command that only reads, and
# an append below BOUND, never load it (a CLI call's start, issue 23).


def _state_size(row: tuple[Any, ...]) -> int:
    # Ids and numbers of fixed size, and the bound directory (row[5]).
    return 300 + len(row[5] or "")


class Derived:
    """The derived state of one store (see the module docstring)."""

    def __init__(self, db: Database, maintenance: Maintenance | None) -> None:
        self._db = db
        # APPEND_STATE's row for each session as this store's own appends left it, and
        # the (data_version, write number) they hold for: an append whose transaction
        # directly follows that one, with no other connection's commit between
        # (PRAGMA data_version unchanged), reads it here instead of from the file.
        self._states: Budgeted[str, tuple[Any, ...]] = Budgeted(STATE_BYTES, _state_size)
        self._states_at = (-1, -1)
        self.paths = paths.PathCache(PATH_BYTES)
        # Entries this process appended since it last indexed: at BOUND of
        # them, an append indexes what is pending in its own transaction, which
        # bounds what a search must index before it reads.
        self._unindexed = 0
        # Sessions whose path this process changed since it last sealed (chunks.py).
        self._unsealed: set[str] = set()
        self._maintenance = maintenance if maintenance is not None and maintenance.enabled else None
        if self._maintenance is not None:
            self._maintenance.add(FULL_TEXT, self._index_chunk, quiet=QUIET, then=(VECTORS,))

    # --- the one invalidation point ---------------------------------------------------

    def invalidate(self) -> None:
        """Forget what memory holds that another writer may have made wrong: the
        remembered append states. (Cached paths stay right: keyed by head, and
        entries never change; stored segments carry their own tip.)"""
        self._states.clear()

    def begin(self, cursor: sqlite3.Cursor) -> tuple[int, int]:
        """Inside an append's write transaction: invalidate unless this transaction
        directly follows the one that left the states, committed, with no other
        connection's commit between; returns what they will hold for once it commits."""
        db = self._db
        version = cursor.execute(DATA_VERSION).fetchone()[0]
        number = db.writes
        if self._states_at != (version, number - 1) or db.committed != number - 1:
            self.invalidate()  # another connection committed, or another write ran here
        return version, number

    # --- an append ------------------------------------------------------------------

    def state_of(self, session_id: str, parent: str | None) -> tuple[Any, ...] | None:
        """The session's remembered append state, unless the append branches."""
        known = self._states.peek(session_id)
        if known is not None and parent is not None and parent != known[1]:
            return None  # a branch: the row names the head, not this parent
        return known

    def remember(self, session_id: str, row: tuple[Any, ...]) -> None:
        self._states.put(session_id, row)

    def path_to(
        self, conn: sqlite3.Cursor, session_id: str, below: str | None, row: tuple[Any, ...]
    ) -> int | None:
        """The materialised path's length once it ends at `below` (the entry an append
        goes under; `row` is APPEND_STATE's); None: it cannot be built (damage)."""
        head, tip, length = row[1], row[6], row[7]
        if below is None or tip is None or tip != head or below != tip:
            # A branch, a first entry or a path not materialised: reach `below` first.
            return paths.reach(conn, session_id, below, tip, head, length)
        return None if length is None else int(length)

    def path_after(
        self,
        conn: sqlite3.Cursor,
        session_id: str,
        length: int | None,
        below: int | None,
        first: int,
        added: int,
        head: str,
        now: str,
        messages: int,
    ) -> int | None:
        """Move the head to `head` after appending `added` entries (`messages` of them
        counted as messages) from sequence `first` below the entry of sequence `below`,
        keeping the path; returns its length."""
        if length is None:
            # The path below could not be built (damage): left stale, reads walk.
            conn.execute(paths.APPEND_HEAD, (session_id, head, now, None, None, messages))
            return None
        paths.extend(conn, session_id, length, below, first)
        length += added
        conn.execute(paths.APPEND_HEAD, (session_id, head, now, head, length, messages))
        if length >= chunks.CHUNK:
            self._unsealed.add(session_id)
        return length

    def moved(
        self,
        conn: sqlite3.Connection,
        session_id: str,
        target: str,
        state: tuple[Any, ...],
        now: str,
    ) -> None:
        """Move the head to `target` (`state`: HEAD_STATE's row), keeping the path (and
        the head's `updated_at`: a move is not activity)."""
        _, head, tip, length = state
        reached = paths.reach(conn, session_id, target, tip, head, length)
        done = target if reached is not None else None
        conn.execute(paths.MOVE_HEAD, (session_id, target, now, done, reached))
        if reached is not None and reached >= chunks.CHUNK:
            self._unsealed.add(session_id)
        # A move adds no entry: a watcher learns of it from session_changes (migration
        # session_changes), as of a created session or a status set.
        conn.execute(FORGET_CHANGE, (session_id,))
        conn.execute(NOTE_CHANGE, (session_id,))

    def imported_head(
        self, conn: sqlite3.Connection, session_id: str, head: str, updated_at: str
    ) -> None:
        """An import's head move, inside its chat's transaction: the path is kept as an
        append keeps it (walked only from the new head to where it meets the path),
        so a mirrored chat loads from its segments and the path cache, not a walk."""
        found = conn.execute(HEAD_PATH, (session_id,)).fetchone()
        old, tip, length = found if found is not None else (None, None, None)
        reached = paths.reach(conn, session_id, head, tip, old, length)
        tipped = head if reached is not None else None
        conn.execute(paths.SET_HEAD, (session_id, head, updated_at, tipped, reached))
        if reached is not None and reached >= chunks.CHUNK:
            self._unsealed.add(session_id)

    def appended(self, cursor: sqlite3.Cursor, added: int, at: tuple[int, int]) -> None:
        """At the end of an append's transaction: index inline once the bound is
        reached; the remembered states hold from `at` if this commits."""
        self._unindexed += added
        if self._unindexed >= BOUND:
            from .search import catchup

            catchup.catch_up(cursor.connection)
            self._unindexed = 0
        self._states_at = at  # holds only if this commits (db.committed)

    def noted(self) -> None:
        """After an append committed: the full-text job is due (one clock read)."""
        if self._maintenance is not None:
            self._maintenance.due(FULL_TEXT)

    # --- the full-text index ----------------------------------------------------------

    def index_in(self, conn: sqlite3.Connection) -> None:
        """Index everything pending inside the caller's write transaction (a bulk
        chat's or restore's end)."""
        from .search import catchup

        catchup.catch_up(conn)

    def index_some(self, limit: int | None = None, *, seal: bool = True) -> bool:
        """Index pending entries (all, or about `limit`) in one write transaction and,
        with `seal` (the maintenance thread's steps, a writer's close), pack the noted
        paths into chunks (all, or SEAL_STEP entries); returns whether any are left
        (search/catchup.py)."""
        from .search import catchup

        with self._db.write() as conn:
            left = catchup.catch_up(conn, limit)
            if not left:
                self._unindexed = 0
            if not seal:
                return left
            return self.seal_some(conn, None if limit is None else SEAL_STEP) or left

    # --- path chunks ------------------------------------------------------------------

    def seal_some(self, conn: sqlite3.Connection, limit: int | None = None) -> bool:
        """Inside a write transaction: pack the noted sessions' paths into chunks (all,
        or until about `limit` entries are packed); returns whether any are left."""
        packed = 0
        while self._unsealed and (limit is None or packed < limit):
            session_id = self._unsealed.pop()
            done, more = paths.seal(conn, session_id, None if limit is None else limit - packed)
            packed += done
            if more:
                self._unsealed.add(session_id)  # the next step packs on
        return bool(self._unsealed)

    @property
    def unsealed(self) -> bool:
        """Whether a session's path waits to be packed (a catch-up then writes)."""
        return bool(self._unsealed)

    def _index_chunk(self) -> bool:
        return self.index_some(CHUNK)

    def pending(self) -> int:
        """How many entries wait for the full-text index (a count of the noted ranges)."""
        from .search import catchup

        with self._db.read() as conn:
            return catchup.count_pending(conn)

    def leave(self) -> None:
        """As the writer closes: index whatever is pending. Asked on the writer
        connection (idle now: the maintenance thread has stopped), not a pooled
        reader: a process that only appended has none, and a new connection
        parses the whole schema before its first statement."""
        from .search import catchup

        db = self._db
        writer = db.writer
        if writer is None or db.held() is not None:
            return
        with db.write_lock:
            waiting = catchup.pending(writer)
        if waiting or self._unsealed:
            self.index_some()

    def catch_up(self) -> bool:
        """Index whatever appends left pending (see search/catchup.py); returns whether
        any entry was waiting. A store opened read-only on request indexes
        through a short-lived writer connection when its file may be written; one
        that cannot write (a read-only file, or read immutable because no other
        connection had it open) searches what its writers indexed: every writer
        that wrote catches up as it closes, so only one killed mid-session leaves
        entries that wait for the next writable search."""
        from .search import catchup

        db = self._db
        if db.held() is not None:
            return False  # inside a transaction of this thread: it reads what it has
        with db.read() as conn:
            if not catchup.pending(conn):
                return False
        if db.writer is not None:
            # A search needs the index, not the chunks: the maintenance thread and a
            # writer's close pack the paths (a search after a long import would).
            self.index_some(seal=False)
            return True
        writer = db.index_writer()
        if writer is None:
            return False
        try:
            with transaction(writer, db.path, None):
                catchup.catch_up(writer)
                return True
        finally:
            writer.close()
