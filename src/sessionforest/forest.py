"""`Forest`: the one facade every surface (CLI, server, SDK integrations) calls.

It owns what is not storage -- the clock, ids, payload validation, worktree
stamping, id resolution, the search funnel, import and export, and the
documents a surface prints (log, tree, snapshot) -- and reaches storage only
through the contracts of store/base.py, so any backend `open` picks serves it.

Threading: a Forest may be shared by threads; see the backend's contract
(SQLite: store/sqlite/database.py). Errors are ForestErrors (errors.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import orjson

from .deadline import STAMP_SECONDS, Deadline, running
from .errors import (
    ForestError,
    InvalidArgument,
    UnknownCheckpoint,
    UnknownEntry,
    UnknownSession,
)
from .forest_follow import FollowFacade
from .forest_models import ModelFacade
from .forest_trees import suggesting
from .ids import MAX_TITLE, Clock, id_problem, new_id, title_text, utc_now
from .model import (
    CURRENT_SCHEMA_VERSION,
    Backlog,
    Divergence,
    Entry,
    SessionInfo,
    SessionStatus,
    SessionVisibility,
)
from .rules import refs
from .rules.append import created_time, prepare, stamp_text
from .search import embedder
from .store.backends import default_path, open_backend
from .store.base import (
    AUTO,
    DURABILITIES,
    FULL_TEXT,
    UNSET,
    VECTORS,
    Appended,
    AppendRequest,
    Auto,
    GroupedAppend,
    NewEntry,
    NewSession,
    Stamping,
    Unset,
    session_cursor,
)

if TYPE_CHECKING:
    from .io.copy import CopyReport
    from .io.position import SourcePosition
    from .io.report import Progress
    from .io.sources import Location
    from .model import (
        ChatSpec,
        CheckReport,
        ImportReport,
        Node,
        RepairReport,
        Snapshot,
        Transcript,
    )
    from .search.results import ChatSearch, EntryHit
    from .search.semantic import Semantic
    from .store.base import Backend, ChatWriter, CommitProbe
    from .wire import ChatCounts, Compare, LogEntryJson, Workers
    from .worktree import Worktrees

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["AUTO", "UNSET", "AppendRequest", "Forest"]


SEMANTIC_MISSING = (
    "the semantic leg is off: install sessionforest[semantic] and leave FOREST_SEMANTIC unset"
)


def appended(session_id: str, items: Sequence[NewEntry], done: Appended) -> list[Entry]:
    """The entries a backend appended as one chain (`done`: where the first went, the
    stamp they carry), in order: each next one is the child of the one before."""
    stamp = orjson.loads(done.stamp_text) if done.stamp_text is not None else None
    parent, sequence = done.parent, done.sequence
    entries = []
    for item in items:
        entries.append(
            Entry(item.id, session_id, parent, sequence, item.kind, item.payload,
                  item.visibility, CURRENT_SCHEMA_VERSION, item.created_at, stamp)
        )  # fmt: skip
        parent, sequence = item.id, sequence + 1
    return entries


def _semantic_leg(backend: Backend) -> Semantic | None:
    """The semantic leg of this store's searches, or None. Its module (vectors, the
    model's loader) is imported only when the extra is installed and on, so a
    store opened with the leg off never loads it."""
    if not embedder.installed():
        return None
    from .search.semantic import Semantic

    return Semantic.open(lambda: backend.vectors)


class Forest(FollowFacade, ModelFacade):
    """A store of sessions, each a tree of immutable entries with a movable head."""

    def __init__(
        self, backend: Backend, clock: Clock, stamp_seconds: float | None = STAMP_SECONDS
    ) -> None:
        self._backend = backend
        self._store = backend.store
        self._trees = backend.trees
        self._clock = clock
        self._stamp_seconds = stamp_seconds
        self._worktrees_made: Worktrees | None = None
        self.path = backend.path
        self.readonly_why = backend.store.readonly_why
        self.migrated = backend.store.migrated
        self._semantic = _semantic_leg(backend)
        # The backend's maintenance thread (store/base/maintenance.py) indexes behind
        # the appends; with the semantic leg it also embeds what was indexed, once
        # writes pause, for every writer: a library user, the CLI, the server.
        self._maintenance = backend.maintenance
        if self._semantic is not None and self.readonly_why is None:
            from .search.semantic import QUIET

            self._maintenance.add(VECTORS, self._semantic.step, quiet=QUIET)

    @property
    def _worktrees(self) -> Worktrees:
        """Stamping and divergence (git): made by the first call that needs them."""
        if self._worktrees_made is None:
            from .worktree import Worktrees

            self._worktrees_made = Worktrees(self._store, self._stamp_seconds)
        return self._worktrees_made

    # --- opening -----------------------------------------------------------------

    @staticmethod
    def default_path() -> Path:
        """Where `Forest.open()` with no location goes: `FOREST_DB` if set, else
        `forest.db` in the user data directory."""
        return default_path()

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
        background_index: bool = True,
        stamp_seconds: float | None = STAMP_SECONDS,
    ) -> Forest:
        """Open the store at `path`: a file path, `sqlite:///PATH` or `postgresql://...`
        (None: `FOREST_DB`, else the user data directory).

        Read-write (the default) creates the file when `create` (and, for the
        default store only, its directory), migrates and uses WAL with
        `durability` "normal" (synchronous=NORMAL) or "full". `readonly=True`
        never creates, migrates or writes anything: a missing file raises
        StoreMissing, a store needing migrations StoreOutdated. Either mode
        refuses a database that is not a store (NotAStore), and a file that
        cannot be written opens read-only (`forest.readonly`).

        A SQLite writer indexes its appends for search on a background thread
        once they pause, and with the semantic leg embeds what was written
        (`background_index`; False: searches, `close` and every 10,000th
        unindexed append index them, `index_semantic` embeds). A search always
        finds every append acknowledged before it. PostgreSQL indexes inside
        the append.

        A worktree stamp that takes longer than `stamp_seconds` (None: no
        bound) is recorded as unknown, with the reason, instead of holding up
        the append (gitstamp.py).
        """
        if durability not in DURABILITIES:
            raise InvalidArgument("durability", f"expected one of normal, full; got {durability!r}")
        backend = open_backend(
            path,
            readonly=readonly,
            create=create,
            durability=durability,
            busy_timeout_ms=busy_timeout_ms,
            background_index=background_index,
        )
        return cls(backend, clock or utc_now, stamp_seconds)

    @property
    def location(self) -> str:
        """Where the store is, for messages: its file, or its URL without the password."""
        return self._backend.location

    @property
    def readonly(self) -> bool:
        """Whether this Forest refuses writes (opened read-only, or the file is not writable)."""
        return self.readonly_why is not None

    def close(self) -> None:
        self._backend.close()

    def __enter__(self) -> Forest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        """Create an empty session; `cwd` binds it to a directory (its appends are stamped).

        The title is stored as `ids.title_text` makes it (one line, no control
        characters), the rule every importer follows too; `created_at` must be an
        ISO 8601 time (InvalidArgument otherwise).
        """
        created = created_time(created_at)
        if visibility not in SessionVisibility.__members__.values():
            raise InvalidArgument("session visibility", f"{visibility!r}")
        if session_id and (why := id_problem(session_id)) is not None:
            raise InvalidArgument("session id", f"{session_id!r} {why}")
        sid = session_id or new_id()
        directory = os.path.abspath(cwd) if cwd is not None else None
        row = NewSession(
            sid, title_text(title), harness, directory, created or self._now(), str(visibility)
        )
        self._store.insert_session(row)
        return sid

    @suggesting
    def session(self, session_id: str) -> SessionInfo:
        return self._store.session(session_id)

    def sessions(
        self,
        *,
        include_hidden: bool = True,
        order: str = "created",
        limit: int | None = None,
        offset: int = 0,
        after: str | None = None,
    ) -> list[SessionInfo]:
        """Every session (`include_hidden=False`: top-level ones only), or the page of
        `limit` of them from `offset` or after `after`.

        `order="created"` lists them oldest first; `"updated"` puts the latest
        activity (the `updated_at` each carries) first, as a sidebar does.
        `after` is `Forest.cursor(last)` of the previous page's last session: the
        next page starts right after it, at the cost of one page however deep
        (an offset skips the rows before it one by one).
        """
        return self._store.sessions(
            include_hidden=include_hidden, order=order, limit=limit, offset=offset, after=after
        )

    @staticmethod
    def cursor(session: SessionInfo) -> str:
        """The cursor `sessions(after=...)` continues a listing after `session` with."""
        return session_cursor(session.updated_at, session.id)

    def count_sessions(self, *, include_hidden: bool = True) -> int:
        """How many sessions `sessions` would list (without a page)."""
        return self._store.count_sessions(include_hidden=include_hidden)

    def heads(self) -> list[tuple[str, str | None, str, str, str]]:
        """(session id, head, updated_at, status, title) of every session, cheaply: what a
        server compares between polls to notice commits by other processes."""
        return self._store.heads()

    def commit_probe(self) -> CommitProbe | None:
        """A probe whose reading moves whenever anyone commits to the store (None: the
        backend has none): a poller of `heads` scans only when it moved. For one
        thread; close it when done."""
        return self._backend.commit_probe()

    @suggesting
    def set_status(self, session_id: str, status: str) -> None:
        self._store.set_status(session_id, status)

    @suggesting
    def unarchive(self, session_id: str) -> SessionInfo:
        """Bring an archived session back (active again); any other status stays as it is."""
        if self._store.session(session_id).status == SessionStatus.ARCHIVED:
            self._store.set_status(session_id, SessionStatus.ACTIVE)
        return self._store.session(session_id)

    @suggesting
    def rename(self, session_id: str, title: str) -> SessionInfo:
        """Give the session the user's own title; an import of its source keeps it.

        The title is stored as `ids.title_text` folds it (one line); InvalidArgument
        when nothing is left of it or it is longer than MAX_TITLE characters (a
        title the user typed is refused, not cut as an importer's is).
        """
        if len(title) > MAX_TITLE:
            raise InvalidArgument(
                "title", f"{len(title)} characters; a title holds at most {MAX_TITLE}"
            )
        folded = title_text(title)
        if not folded:
            raise InvalidArgument("title", "empty (nothing but spaces and control characters)")
        self._store.rename(session_id, folded)
        return self._store.session(session_id)

    @suggesting
    def bind(self, session_id: str, directory: str | os.PathLike[str]) -> SessionInfo:
        """Bind the session to `directory`: its appends are stamped with that worktree from now.

        Imported chats start unbound; where they were recorded is kept as
        `origin_cwd`, data that never makes git run. A bound directory never
        changes (stamps must stay comparable): binding again to the same one
        is a no-op, another one raises SessionBound. The directory must exist.
        """
        self._worktrees.bind(session_id, directory)
        return self._store.session(session_id)

    # --- names as people type them -------------------------------------------------

    def resolve_session(self, ref: str) -> str:
        """The id of the session `ref` names: its full id or a unique prefix of one
        (AmbiguousId when several start with it, UnknownSession with suggestions)."""
        return refs.resolve_session(self._store, ref)

    def resolve_entry(self, session_id: str, ref: str) -> str:
        """The id of the entry of `session_id` that `ref` names: a full id, a sequence
        number as `log` and `tree` print it, or a unique prefix (see rules/refs.py)."""
        return refs.resolve_entry(self._store, session_id, ref)

    def unknown_session(self, session_id: str) -> UnknownSession:
        """The error for a session id that names nothing, suggesting ids one typo away."""
        return refs.unknown_session(self._store, session_id)

    def unknown_entry(self, session_id: str, entry_id: str) -> UnknownEntry | UnknownSession:
        """The error for an entry ref that names nothing in `session_id`, with suggestions."""
        return refs.unknown_entry(self._store, session_id, entry_id)

    # --- writing -----------------------------------------------------------------

    @suggesting
    def append(
        self,
        session_id: str,
        kind: str,
        payload: dict[str, Any],
        parent: str | None = None,
        visibility: str | None = None,
        expect_head: str | Unset | None = UNSET,
        created_at: str | None = None,
        stamp: dict[str, Any] | Auto | None = AUTO,
    ) -> Entry:
        """Append an entry as a child of `parent` (default: the head); the head moves to it.

        Appending below anything but the head starts a new branch. With
        `expect_head`, the append fails with HeadMoved (appending nothing) if
        the head is not that entry (None: an empty session) at commit time.

        `stamp=AUTO` (the controller's append) stamps the entry with the git
        state of the session's directory when it has one; importers pass
        `stamp=None` (history that predates the stamp) or the stamp to keep.
        """
        body, vis = prepare(kind, payload, visibility)
        entry_id, now = new_id(), self._now()
        created = created_time(created_at) or now
        if isinstance(stamp, Auto):
            stamping = self._worktrees.stamping(session_id)
        else:
            stamping = Stamping(None, stamp_text(stamp))
        item = NewEntry(entry_id, kind, payload, body, vis, created)
        done = self._store.append(session_id, (item,), parent, expect_head, now, stamping)
        self._wrote()
        # The stamp as stored: taken for the bound directory (or again inside the write
        # lock when another process bound the session meanwhile).
        return appended(session_id, (item,), done)[0]

    def append_group(self, requests: Sequence[AppendRequest]) -> list[Entry | ForestError]:
        """Several appends, to any sessions, committed in ONE transaction (group commit).

        Each request is what `append` takes and stays all or nothing: one that
        fails validation or its checks (HeadMoved, an unknown session, ...) is
        answered with its error and writes nothing, the others commit together,
        in order. For a server that gathers concurrent appends: one commit for
        many. A store error (a full disk) raises for all of them.
        """
        results: list[Entry | ForestError | None] = [None] * len(requests)
        group: list[GroupedAppend] = []
        placed: list[tuple[int, NewEntry]] = []
        now = self._now()
        for i, r in enumerate(requests):
            try:
                body, vis = prepare(r.kind, r.payload, r.visibility)
                created = created_time(r.created_at) or now
                stamping = self._worktrees.stamping(r.session_id)
            except ForestError as exc:
                results[i] = exc
                continue
            item = NewEntry(new_id(), r.kind, r.payload, body, vis, created)
            group.append(GroupedAppend(r.session_id, (item,), r.parent, r.expect_head, now,
                                       stamping))  # fmt: skip
            placed.append((i, item))
        done = self._store.append_group(group) if group else []
        self._wrote()
        for (i, item), outcome in zip(placed, done, strict=True):
            if isinstance(outcome, ForestError):
                results[i] = outcome
                continue
            results[i] = appended(requests[i].session_id, (item,), outcome)[0]
        return [self._suggest(r) if isinstance(r, ForestError) else r for r in results]  # type: ignore[misc]

    def _wrote(self) -> None:
        """After a commit that added entries: their vectors are due (the semantic leg)."""
        if self._semantic is not None:
            self._maintenance.due(VECTORS)

    def maintain(self) -> None:
        """Mark every maintenance job due: another process wrote to the store (the
        server's heads watcher and `forest watch` call it), or a long-lived process
        starts and takes over a backlog (entries not yet indexed or embedded)."""
        for name in (FULL_TEXT, VECTORS):
            self._maintenance.due(name)

    def maintenance_idle(self, timeout: float = 60.0) -> bool:
        """Wait until the maintenance thread has nothing due (tests, benchmarks, a
        watcher's clean stop); returns whether it got there within `timeout` s."""
        return self._maintenance.idle(timeout)

    def backlog(self) -> Backlog:
        """What waits behind the writes: entries not yet in the full-text index, and
        entries (and chats) without vectors when the semantic leg is on."""
        vectors = self._backend.vectors if self._semantic is not None else None
        return Backlog(
            self._backend.backlog(),
            vectors.backlog() if vectors is not None else None,
            vectors.waiting() if vectors is not None else None,
        )

    def _suggest(self, error: ForestError) -> ForestError:
        """A plain miss with the ids one typo away, as every other method says it."""
        if isinstance(error, UnknownSession | UnknownEntry) and not error.suggestions:
            return refs.with_suggestions(self._store, error)
        return error

    @suggesting
    def append_many(
        self,
        session_id: str,
        items: Sequence[tuple[str, dict[str, Any], str | None]],
        parent: str | None = None,
        expect_head: str | Unset | None = UNSET,
    ) -> list[Entry]:
        """Append (kind, payload, visibility) items as one chain, in ONE transaction.

        The first goes below `parent` (default: the head), each next one below
        the previous; the head ends on the last. All or nothing: an adapter's
        turn (notifications plus the message) can never be half written.
        """
        now = self._now()
        prepared = [
            NewEntry(new_id(), kind, payload, *prepare(kind, payload, vis), now)
            for kind, payload, vis in items
        ]
        if not prepared:
            return []
        stamping = self._worktrees.stamping(session_id)
        done = self._store.append(session_id, prepared, parent, expect_head, now, stamping)
        self._wrote()
        return appended(session_id, prepared, done)

    @suggesting
    def move_head(
        self, session_id: str, entry_id: str, *, expect_head: str | Unset | None = UNSET
    ) -> None:
        """Point the session's head at `entry_id`. History and files are untouched."""
        self._store.move_head(session_id, entry_id, expect_head, self._now())

    def checkpoint(self, session_id: str, label: str, summary: str | None = None) -> Entry:
        """Record a checkpoint entry labelling the current state (head moves onto it)."""
        return self.append(session_id, "checkpoint", {"label": label, "summary": summary or label})

    @suggesting
    def seek_checkpoint(self, session_id: str, label: str) -> Entry:
        """Move the head to the most recent checkpoint with `label`; returns it."""
        entry = self._store.latest_checkpoint(session_id, label)
        if entry is None:
            raise UnknownCheckpoint(label, session_id)
        self.move_head(session_id, entry.id)
        return entry

    # --- reading -----------------------------------------------------------------

    @suggesting
    def head(self, session_id: str) -> str | None:
        return self._store.head(session_id)

    @suggesting
    def entry(self, session_id: str, entry_id: str) -> Entry:
        return self._store.entry(session_id, entry_id)

    @suggesting
    def active_path(self, session_id: str, limit: int | None = None) -> list[Entry]:
        """Entries from the root to the head; fails closed on damage. `limit`: only the
        last `limit` of them (still root-side first), in time proportional to `limit`."""
        if limit is not None and limit < 1:
            raise InvalidArgument("limit", f"must be at least 1, got {limit}")
        return self._store.active_path(session_id, limit)

    @suggesting
    def path_to(self, session_id: str, entry_id: str, limit: int | None = None) -> list[Entry]:
        """Entries from the root to `entry_id` (any branch's), without reading or moving
        the head; `limit`: only its last `limit` (a page of earlier entries of a path is
        the path to the parent of the first one shown)."""
        if limit is not None and limit < 1:
            raise InvalidArgument("limit", f"must be at least 1, got {limit}")
        return self._store.path_to(session_id, entry_id, limit)

    @suggesting
    def entries(self, session_id: str) -> list[Entry]:
        """Every entry of the session, all branches, in insertion (sequence) order."""
        return self._store.entries(session_id)

    @suggesting
    def entries_after(self, session_id: str, after: int = 0, limit: int = 1000) -> list[Entry]:
        """A page of entries: at most `limit` with a sequence above `after`, in sequence
        order (`after=0`: from the first). The next page is after the last one's sequence."""
        if limit < 1:
            raise InvalidArgument("limit", f"must be at least 1, got {limit}")
        return self._store.entries_after(session_id, after, limit)

    def iter_entries(self, session_id: str, batch: int = 1000) -> Iterator[Entry]:
        """Like `entries`, streamed in batches (memory stays flat on huge sessions)."""
        return self._store.iter_entries(session_id, batch)

    @suggesting
    def skeleton(self, session_id: str) -> list[Node]:
        """The tree's shape (ids, parents, kinds; no payloads), in sequence order."""
        return self._store.skeleton(session_id)

    @suggesting
    def children(self, session_id: str, entry_id: str) -> list[Entry]:
        return self._store.children(session_id, entry_id)

    @suggesting
    def tips(self, session_id: str) -> list[Entry]:
        """Every entry without children (one per branch), in insertion order."""
        return self._store.tips(session_id)

    @suggesting
    def checkpoints(self, session_id: str) -> list[Entry]:
        return self._store.checkpoints(session_id)

    @suggesting
    def branches(self, session_id: str) -> int:
        """How many points of the session's tree re-did a turn."""
        return self._store.branches(session_id)

    # --- worktree divergence and the documents surfaces print ------------------------

    @suggesting
    def divergence(self, session_id: str, entry_id: str | None = None) -> Divergence:
        """Compare an entry's stamp (default: the head's) with the worktree now."""
        target = entry_id or self._store.head(session_id)
        if target is None:
            return Divergence("unknown", reason="session has no entries")
        return self._worktrees.compare(session_id, self._store.entry(session_id, target).stamp)

    def stamp_ahead(self, session_id: str) -> Stamping:
        """Take the stamp the next append to `session_id` will carry, now, on this thread:
        for a caller whose appends run on one writer thread (the server) and that must
        not stamp there. Hand it over with `stamped`."""
        return self._worktrees.stamping(session_id)

    def stamp_known(self, session_id: str) -> Stamping | None:
        """`stamp_ahead(session_id)` when it needs neither the store nor git (a session
        this facade already saw unbound; None otherwise): cheap enough for an event
        loop. A session bound meanwhile by another process is stamped again inside
        the write, as always."""
        return self._worktrees.known_unbound(session_id)

    def stamped(self, stamps: Mapping[str, Stamping]) -> AbstractContextManager[None]:
        """Within the block, this thread's appends to these sessions carry the stamps
        `stamp_ahead` took (each still all or nothing; a session bound meanwhile by
        another process is stamped again inside the write, as always)."""
        return self._worktrees.stamped(stamps)

    def current_stamp(self, session_id: str) -> dict[str, Any] | None:
        """The stamp the worktree of the session's directory would get now (None: none)."""
        return self._worktrees.current(session_id)

    @suggesting
    def snapshot(self, session_id: str, entry: str | None = None) -> Snapshot:
        """The tree skeleton, active path, tips, checkpoints and the divergence of
        `entry` (default: the head), read in one snapshot so they agree."""
        from .documents import snapshot_of

        return snapshot_of(self._store, self._worktrees, session_id, entry)

    @suggesting
    def log_document(
        self,
        session_id: str,
        limit: int | None = None,
        end: str | None = None,
        max_bytes: int | None = None,
    ) -> list[LogEntryJson]:
        """`log --json`: the active path (its last `limit` entries), root first, each entry
        marked `diverged`; `end`: the path to that entry instead (the head stays);
        `max_bytes`: TooLarge, before decoding, when the entries' stored JSON is larger."""
        if limit is not None and limit < 1:
            raise InvalidArgument("limit", f"must be at least 1, got {limit}")
        from .documents import log_document

        return log_document(self._store, self._worktrees, session_id, limit, end, max_bytes)

    @suggesting
    def compare(self, session_id: str, a: str, b: str, max_bytes: int | None = None) -> Compare:
        """Two branches side by side from their common ancestor (docs in compare.py);
        `max_bytes` as in `log_document`."""
        from .documents import compare_document

        return compare_document(self._store, self._worktrees, session_id, a, b, max_bytes)

    @suggesting
    def previews(self, session_id: str, entry_ids: Sequence[str]) -> dict[str, str]:
        """A short line of text per entry (what a forest node shows)."""
        from .documents import previews

        return previews(self._store, session_id, entry_ids)

    @suggesting
    def chat_counts(self, session_ids: Sequence[str]) -> list[ChatCounts]:
        """Each chat's visible messages and branches (what a chat list shows)."""
        from .documents import chat_counts

        return chat_counts(self._store, session_ids)

    @suggesting
    def workers(self, session_id: str) -> Workers:
        """The worker chats the agent tree links under this chat, and the chat this one
        works for (when it is a worker)."""
        from .documents import workers_document

        return workers_document(self._store, self._trees, session_id)

    def tree_document(self, session_id: str) -> dict[str, Any]:
        """`tree --json`: the snapshot's head, path, tips, labels, nodes and divergence."""
        from .documents import tree_document

        return tree_document(self.snapshot(session_id))

    def divergence_marks(self, session_id: str, entries: Sequence[Entry]) -> dict[str, str]:
        """`[diverged: head|dirty|both]` for each stamped entry whose worktree moved on."""
        if not any(e.stamp is not None for e in entries):
            return {}  # an unstamped entry is never marked (gitstamp.compare: unknown)
        if self._worktrees_made is None and self._store.bound_directory(session_id)[1] is None:
            # Nothing to compare with: answered without loading git and the documents
            # (`forest log` of a chat bound to no repository, issue 23).
            return {}
        from .documents import divergence_marks

        return divergence_marks(self._worktrees, session_id, entries)

    # --- integrity ---------------------------------------------------------------

    def check(self, *, quarantine: bool = True) -> CheckReport:
        """Find orphan and cross-session parents, cycles, sequence gaps, entries of
        unreadable schema versions, invalid or missing heads, and entries whose
        session row is gone. A damaged session is quarantined (reads and appends
        refuse it) without touching any other; one found healthy is released."""
        return self._store.check(quarantine=quarantine)

    def repair(self, session_id: str) -> RepairReport:
        """Fix what can be fixed without touching an entry (a missing session row, a
        broken head), then check the session afresh; the check alone decides the
        quarantine. Orphans, cycles, gaps and unreadable versions stay, each reported."""
        return self._store.repair(session_id, self._now())

    # --- search --------------------------------------------------------------------

    @suggesting
    def search_session_entries(
        self, session_id: str, query: str, limit: int = 10, *, deadline: Deadline | None = None
    ) -> list[EntryHit]:
        """Entries of this one session matching `query`, best first (ended chats too);
        `limit` must be at least 1. With a `deadline`, the search stops (SearchStopped)
        once it passes or is cancelled."""
        from .search import recall

        recall.check_limit(limit)
        self._backend.catch_up()
        with running(deadline), self._backend.search(deadline) as index:
            self._store.head(session_id)  # unknown or quarantined: refused, same snapshot
            return recall.search_session_entries(index, session_id, query, limit)

    def search_chats(
        self,
        query: str,
        now: datetime | None = None,
        limit: int = 8,
        harness: str | None = None,
        *,
        deadline: Deadline | None = None,
    ) -> ChatSearch:
        """Top-level chats matching `query`, best first, and whether the index is sure.

        Time phrases resolve against `now` (default: the store's clock);
        `harness` restricts the chats to one harness, as a harness word does;
        `limit` must be at least 1. With a `deadline` (sessionforest.deadline), the
        search stops, raising SearchStopped, once it passes or is cancelled (a
        server's client that went away): nothing is left running.
        """
        from .search import find, recall

        recall.check_limit(limit)
        leg = self._semantic
        self._backend.catch_up()  # every append acknowledged before is found
        if leg is not None and self.readonly_why is None:
            leg.freshen()  # a few pending vectors (a chat appended to just now) first
        with running(deadline), self._backend.search(deadline) as index:
            ranked = leg.ranked if leg is not None else None
            return find.search_chats(
                index, query, now or self._clock(), limit, harness, semantic=ranked
            )

    @property
    def semantic(self) -> bool:
        """Whether searches have the semantic leg (the `[semantic]` extra, a backend
        keeping vectors, `FOREST_SEMANTIC` not `off`)."""
        return self._semantic is not None

    def index_semantic(
        self, progress: Callable[[int], None] | None = None, *, limit: int | None = None
    ) -> tuple[int, int]:
        """Compute the missing entry vectors of the semantic leg (all of them, the
        backfill of an existing store, or at most `limit`); returns (entries
        embedded, chats still waiting). Refused without the leg (InvalidArgument
        names what is missing)."""
        leg = self._semantic
        if leg is None:
            raise InvalidArgument("semantic", SEMANTIC_MISSING)
        if limit is not None:
            from .search import recall

            recall.check_limit(limit)
        self._backend.catch_up()  # only indexed entries are noted for vectors
        return leg.catch_up(limit=limit, progress=progress), leg.waiting()

    # --- import and export -----------------------------------------------------------

    @contextmanager
    def bulk_chat(self, spec: ChatSpec, source: Path) -> Iterator[ChatWriter]:
        """Write one imported chat in one transaction; any error leaves the store as it was."""
        with self._backend.bulk.bulk_chat(spec, source) as writer:
            yield writer

    def import_chats(
        self,
        fmt: str,
        path: str | os.PathLike[str],
        *,
        skip_bad: bool = False,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Import every chat of `path` in format `fmt` (claude-code, chatgpt, pi, yoagent,
        native). Each chat is its own transaction; a chat that fails is reported in
        `report.failed` and the others are imported. Re-importing is idempotent."""
        from .io import importers

        report = importers.run(
            self._importing(), self, fmt, Path(path), skip_bad=skip_bad, progress=progress
        )
        if report.entries:
            # Their vectors are computed behind (the maintenance thread, once writes
            # pause), so an import costs the same with the semantic leg or without.
            self._wrote()
        return report

    def import_source(
        self,
        fmt: str,
        path: str | os.PathLike[str],
        position: SourcePosition | dict[str, Any] | None = None,
        *,
        skip_bad: bool = False,
        progress: Progress | None = None,
    ) -> tuple[ImportReport, SourcePosition]:
        """Import one source (a transcript file, or OpenCode's database) from where an
        earlier call stopped (`position`, None: the start) and return the report and the
        position to pass next time (`SourcePosition.to_json`/`from_json` keep it). Only
        what was appended is read for line formats; re-importing stays idempotent."""
        from .io import importers
        from .io.position import SourcePosition

        if isinstance(position, dict):
            position = SourcePosition.from_json(position)
        report, done = importers.import_source(
            self._importing(), self, fmt, Path(path), position, skip_bad=skip_bad,
            progress=progress,
        )  # fmt: skip
        if report.entries:
            self._wrote()  # their vectors follow on the maintenance thread
        return report, done

    def sources(self) -> list[Location]:
        """Every harness location on this machine (io/sources.py), each counted against
        what this store imported from it (new files, files written since)."""
        from .io import sources

        imported: dict[str, str] = {}
        for info in self.sessions(include_hidden=True):
            if info.source_path:
                imported[info.source_path] = max(
                    imported.get(info.source_path, ""), info.updated_at
                )
        return sources.find(imported)

    def import_everything(
        self, *, skip_bad: bool = False, progress: Progress | None = None
    ) -> list[ImportReport]:
        """Import every location `sources` finds, one report each; idempotent (a second
        run adds only what the harnesses wrote since)."""
        return [
            self.import_chats(
                location.harness.format, location.path, skip_bad=skip_bad, progress=progress
            )
            for location in self.sources()
        ]

    def copy_to(
        self, target: Forest, progress: Callable[[int, int], None] | None = None
    ) -> CopyReport:
        """Copy every session of this store into `target` (any backend to any other):
        one transaction per session, sessions already there only verified, then every
        session counted and hashed on both sides (io/copy.py)."""
        from .io.copy import copy_store

        return copy_store(
            self._store,
            self._backend.bulk,
            target._backend.bulk,
            source_name=self.location,
            progress=progress,
        )

    def import_native(self, path: str | os.PathLike[str]) -> SessionInfo:
        """Import one native JSONL file (all or nothing) and record it as the chat's source."""
        from .io import native

        done = native.import_file(self._backend.bulk, Path(path), record_source=True)
        return self._store.session(done.session_id)

    def import_jsonl(self, path: str | os.PathLike[str]) -> str:
        """Import one native JSONL session file; all or nothing. Returns the session id."""
        from .io import native

        return native.import_file(self._backend.bulk, Path(path), record_source=False).session_id

    @suggesting
    def export_jsonl(self, session_id: str, out: IO[str]) -> int:
        """Write the session as native JSONL to the text stream `out`; returns entry count."""
        from .io import native

        return native.export_session(self._backend.bulk, session_id, out)

    @suggesting
    def export_yoagent(self, session_id: str, out: IO[str]) -> tuple[int, int]:
        """Write the session as yoagent JSONL; returns (lines, entries left out below the head)."""
        from .io import yoagent

        return yoagent.export_session(self, session_id, out)

    @suggesting
    def export_gasp(
        self, session_id: str, directory: str | os.PathLike[str], run_id: str | None = None
    ) -> Transcript:
        """Write DIR/transcripts/<run-id>.jsonl.gz (default run id: the session id)."""
        from .io import gasp

        self._store.head(session_id)  # unknown or quarantined: refused before any file is made
        return gasp.export_transcript(self._backend.bulk, session_id, Path(directory), run_id)
