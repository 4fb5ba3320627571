"""The `BulkStore` contract: importers' per-chat writes, exact session restore and dump."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from ...model import (
    Agent,
    ChatResult,
    ChatSpec,
    Entry,
    SessionInfo,
    StoredEntry,
    StoredSession,
)

# --- BulkStore ---------------------------------------------------------------------


class ChatWriter(Protocol):
    """Writes one imported chat inside the transaction `BulkStore.bulk_chat` holds.

    Ids are the importer's own (derived from the source), so re-importing the
    same source meets the same ids: one stored with identical content counts as
    unchanged, one stored with other content fails the chat (EntryConflict
    naming `source` and line). Entries get sequences after the stored ones.
    """

    head: str | None  # where the chat's head ends (None: leave it where it is)
    title: str
    summary: str | None
    git_branch: str | None
    # The chat's time: the spec's on its first import, the stored one on later ones.
    created_at: str
    result: ChatResult | None  # set once the chat's transaction committed
    # Set by an import resuming where an earlier one stopped: the entries stored
    # before count as met (`seen`), since the lines that made them are not read again.
    continuing: bool

    @property
    def session_id(self) -> str: ...

    def add(
        self,
        entry_id: str,
        parent: str | None,
        kind: str,
        payload: dict[str, Any],
        created_at: str,
        visibility: str | None = None,
        line: int | None = None,
        source: str | None = None,
        stamp: dict[str, Any] | None = None,
    ) -> None:
        """Queue one entry (validated now: InvalidPayload queues nothing); `line` and
        `source` ("uuid 5f3e...") are what an error about it names; `stamp` the git state
        the source records for it (None: none)."""
        ...

    def seen(self, entry_id: str) -> bool:
        """Whether this import already added (or met stored) `entry_id`."""
        ...

    def flush(self) -> None:
        """Write what is queued (the transaction stays open)."""
        ...


class BulkStore(Protocol):
    """What importers, native JSONL and a copy between stores write and read whole chats with.

    `bulk_chat` is the importers' idempotent per-chat transaction. `restore_session`,
    `stored_session` and `stored_entries` move one session exactly: a copy is
    `dst.restore_session(src.stored_session(sid), src.stored_entries(sid), source=...)`,
    and comparing `stored_entries` on both sides verifies it.
    """

    def bulk_chat(self, spec: ChatSpec, source: Path) -> AbstractContextManager[ChatWriter]:
        """One chat in one transaction: the session row from `spec` (created, or checked
        to come from the same source), then the writer; any error leaves the store as it
        was. `ChatWriter.result` is set when the block exits cleanly."""
        ...

    def restore_session(
        self,
        session: StoredSession,
        entries: Iterable[StoredEntry],
        *,
        source: str,
        locate: Callable[[int], int | None] | None = None,
    ) -> int:
        """Write a session that does not exist yet, exactly (ids, sequences 1..n, schema
        versions, stamps, head), in one transaction; returns the entries written.

        `entries` is consumed once, in sequence order, and may raise: nothing is kept.
        A repeated or foreign id, a parent that is not an earlier entry of the
        session or whose schema version is newer than its child's, or a head that
        is not one of the entries raises ImportRejected naming `source`, the entry,
        and the line `locate(sequence)` gives (0: the session header). An existing
        session raises SessionExists.
        """
        ...

    def restore_sessions(
        self, sessions: Iterable[tuple[StoredSession, Iterable[StoredEntry], str]]
    ) -> int:
        """`restore_session` of each (session, entries, source) in ONE transaction, all or
        nothing together; returns the entries written. The checks and errors are
        `restore_session`'s (no `locate`: an error names the session and entry). A
        backend may write the rows of all of them at once (PostgreSQL: one COPY)."""
        ...

    def stored_session(self, session_id: str) -> StoredSession:
        """The session row as stored; UnknownSession, SessionQuarantined fail it."""
        ...

    def stored_entries(
        self, session_id: str, *, through: int | None = None
    ) -> Iterator[StoredEntry]:
        """The session's rows in sequence order (up to `through`), streamed; an entry of a
        schema version this sessionforest cannot read raises UnsupportedSchemaVersion."""
        ...


class EntryReader(Protocol):
    """What exporters that map entries to another format read."""

    def head(self, session_id: str) -> str | None: ...

    def iter_entries(self, session_id: str, batch: int = 1000) -> Iterator[Entry]: ...


class AgentLinks(Protocol):
    """What an importer needs of the agent tree to link worker chats under their parent."""

    def session(self, session_id: str) -> SessionInfo: ...

    def agent_for_session(self, session_id: str) -> Agent | None: ...

    def add_orchestrator(self, session_id: str, workspace_id: str | None = None) -> str: ...

    def add_worker(
        self,
        orchestrator_id: str,
        session_id: str,
        policy: dict[str, Any],
        workspace_id: str | None = None,
    ) -> str: ...
