"""The `Backend` contract: one store's components, as `store.backends.open_backend` returns them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    # Annotations only: the facade holds a Backend, and a command that lists sessions
    # never loads the search, bulk or vector contracts.
    from contextlib import AbstractContextManager
    from pathlib import Path

    from ...deadline import Deadline
    from .bulk import BulkStore
    from .handoffs import HandoffStore
    from .maintenance import Maintenance
    from .search import SearchIndex
    from .sources import SourceStore
    from .store import Store, TreeStore
    from .vectors import VectorStore

# --- Backend ---------------------------------------------------------------------


# A session as a watcher compares it: (id, head, updated_at, status, title).
HeadRow = tuple[str, str | None, str, str, str]


class CommitProbe(Protocol):
    """A reading that changes whenever any connection, of any process, commits to the
    store: a poller compares it with its last before scanning anything."""

    def __call__(self) -> int: ...

    def changed(self) -> list[HeadRow] | None:
        """The heads of the sessions changed since the probe was made or last asked
        (one row a session, as `Store.heads` gives them), or None when the probe
        cannot tell (then the poller reads every head)."""
        ...

    def close(self) -> None: ...


class Backend(Protocol):
    """What `store.backends.open_backend` returns and the facade holds: one store's components."""

    @property
    def name(self) -> str:
        """ "sqlite", ..."""
        ...

    @property
    def location(self) -> str:
        """Where the store is, for messages (a path, or a URL without secrets)."""
        ...

    @property
    def path(self) -> Path | None:
        """The store's file, when it is one."""
        ...

    @property
    def store(self) -> Store: ...

    @property
    def trees(self) -> TreeStore: ...

    @property
    def bulk(self) -> BulkStore: ...

    @property
    def vectors(self) -> VectorStore | None:
        """The semantic leg's entry vectors (None: this backend keeps none)."""
        ...

    @property
    def sources(self) -> SourceStore:
        """Where the live mirror stands in each followed transcript file."""
        ...

    @property
    def handoffs(self) -> HandoffStore:
        """The transcripts `forest resume` wrote, each with the entry it continues."""
        ...

    @property
    def maintenance(self) -> Maintenance:
        """The backend's one maintenance thread and its jobs (maintenance.py)."""
        ...

    def catch_up(self) -> bool:
        """Bring what a search reads up to date with every committed entry, from any
        process (SQLite: the full-text index behind the appends; a backend that
        indexes inside the append has nothing to do); returns whether anything
        waited. A search that must find every append acknowledged before it calls
        this first, then `search()`."""
        ...

    def commit_probe(self) -> CommitProbe | None:
        """A new probe of commits for one polling thread (SQLite: `PRAGMA data_version`
        on a connection of its own); None when the backend has no cheap one (the
        poller then scans every time)."""
        ...

    def backlog(self) -> int:
        """How many entries wait for the full-text index (0 after `catch_up`)."""
        ...

    def search(self, deadline: Deadline | None = None) -> AbstractContextManager[SearchIndex]:
        """A SearchIndex bound to one read snapshot of the index as it is (see
        `catch_up`); reads of `store` on this thread inside the block see the same
        snapshot. With a `deadline`, a statement running when it passes or is
        cancelled stops, raising SearchStopped."""
        ...

    def close(self) -> None: ...
