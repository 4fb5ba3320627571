"""The `Store` (sessions, entries, heads, integrity) and `TreeStore` contracts."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ...errors import ForestError
from ...model import (
    Agent,
    CheckReport,
    Entry,
    Node,
    RepairReport,
    SessionInfo,
    Workspace,
)
from .values import (
    Appended,
    GroupedAppend,
    NewEntry,
    NewSession,
    Stamping,
    Unset,
)

# --- Store ---------------------------------------------------------------------


class Store(Protocol):
    """Sessions, their immutable entries and movable heads, and integrity.

    Reads raise UnknownSession for a session that does not exist and
    SessionQuarantined for one `check` fenced off; entry reads raise
    UnknownEntry / ForeignEntry, and UnsupportedSchemaVersion before returning
    anything partial; a damaged traversal raises SessionDamaged.
    """

    location: str  # where the store is, for messages (a path or a redacted URL)
    readonly_why: str | None  # why writes are refused; None: they are not
    migrated: list[str]  # migrations this open applied

    def close(self) -> None: ...

    def reading(self) -> AbstractContextManager[None]:
        """Reads inside the block (on this thread) see one consistent snapshot."""
        ...

    # sessions
    def insert_session(self, row: NewSession) -> None:
        """SessionExists; SessionDamaged when entries of a deleted row with this id remain."""
        ...

    def session(self, session_id: str) -> SessionInfo: ...

    def sessions(
        self,
        *,
        include_hidden: bool = True,
        order: str = "created",
        limit: int | None = None,
        offset: int = 0,
        after: str | None = None,
    ) -> list[SessionInfo]:
        """order: "created" (oldest first) or "updated" (latest activity first); a page
        of `limit` from `offset`, or after `after` (a `session_cursor` of the last
        session of the page before: keyset paging), reads that page's rows only."""
        ...

    def count_sessions(self, *, include_hidden: bool = True) -> int:
        """How many sessions there are (top-level ones only without `include_hidden`)."""
        ...

    def heads(self) -> list[tuple[str, str | None, str, str, str]]:
        """(session id, head, updated_at, status, title) of every session: a cheap scan of
        one row per session (no entry counts), for noticing other writers' commits."""
        ...

    def set_status(self, session_id: str, status: str) -> None: ...

    def rename(self, session_id: str, title: str) -> None:
        """Set the user's own title (already folded by `ids.title_text`) and mark it
        theirs: `BulkStore.bulk_chat` keeps it when the chat's source is imported again."""
        ...

    def bind(self, session_id: str, directory: str) -> None:
        """Set the bound directory; SessionBound if it is bound to another one."""
        ...

    def bound_directory(self, session_id: str) -> tuple[bool, str | None]:
        """(the session exists, its bound directory)."""
        ...

    # entries
    def append(
        self,
        session_id: str,
        items: Sequence[NewEntry],
        parent: str | None,
        expect_head: str | Unset | None,
        now: str,
        stamping: Stamping,
    ) -> Appended:
        """Append `items` as one chain below `parent` (None: the head) in ONE transaction,
        checked by `rules.append.checked`; the head ends on the last item."""
        ...

    def append_group(self, group: Sequence[GroupedAppend]) -> list[Appended | ForestError]:
        """Several appends in ONE transaction, each all or nothing: a failing one is
        answered with its error (and leaves nothing), the others commit together."""
        ...

    def move_head(
        self, session_id: str, entry_id: str, expect_head: str | Unset | None, now: str
    ) -> None: ...

    def head(self, session_id: str) -> str | None: ...

    def entry(self, session_id: str, entry_id: str) -> Entry: ...

    def active_path(self, session_id: str, limit: int | None = None) -> list[Entry]:
        """Root to head; damage checked by `rules.reading.path_of`. `limit`: only the
        last `limit` entries (the head's), read in time proportional to `limit`."""
        ...

    def path_to(self, session_id: str, entry_id: str, limit: int | None = None) -> list[Entry]:
        """Root to `entry_id` (any entry, on any branch; the head is not read or moved),
        checked as `active_path` is; `limit`: only its last `limit` entries, in time
        proportional to `limit`. Raises UnknownEntry / ForeignEntry as `entry` does."""
        ...

    def entries(self, session_id: str) -> list[Entry]: ...

    def iter_entries(self, session_id: str, batch: int = 1000) -> Iterator[Entry]: ...

    def entries_after(self, session_id: str, after: int, limit: int) -> list[Entry]:
        """At most `limit` entries with a sequence above `after`, in sequence order."""
        ...

    def skeleton(self, session_id: str) -> list[Node]: ...

    def children(self, session_id: str, entry_id: str) -> list[Entry]: ...

    def tips(self, session_id: str) -> list[Entry]: ...

    def checkpoints(self, session_id: str) -> list[Entry]: ...

    def latest_checkpoint(self, session_id: str, label: str) -> Entry | None: ...

    def branches(self, session_id: str) -> int:
        """Points of the tree that re-did a turn (two or more visible messages under one parent)."""
        ...

    def messages(self, session_id: str) -> int:
        """Visible user and assistant messages, every branch (no tool results, no hidden ones)."""
        ...

    # integrity
    def check(self, *, quarantine: bool = True) -> CheckReport: ...

    def repair(self, session_id: str, now: str) -> RepairReport: ...

    # the primitives id resolution needs (rules/refs.py decides)
    def sessions_in_range(self, low: str, high: str | bytes, limit: int) -> list[tuple[str, str]]:
        """(id, title) of sessions with low <= id < high, in id order."""
        ...

    def count_sessions_in_range(self, low: str, high: str | bytes) -> int: ...

    def entry_by_id_or_sequence(self, session_id: str, ref: str) -> str | None:
        """The entry of `session_id` whose id is `ref`, else whose sequence is int(ref)."""
        ...

    def entries_in_range(
        self, session_id: str, low: str, high: str | bytes
    ) -> list[tuple[str, int, str]]:
        """(id, sequence, kind) of the session's entries with low <= id < high, in id order."""
        ...

    def near_misses(self, session_id: str | None) -> Iterator[str]:
        """Every session id (None) or every entry id of `session_id`: the pool a miss
        suggests from (read only on a miss)."""
        ...

    def session_labels(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """{id: {"id", "title"}} for existing sessions among `ids`."""
        ...

    def entry_labels(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """{id: {"id", "sequence", "kind"}} for existing entries among `ids`."""
        ...

    def session_exists(self, session_id: str) -> bool: ...


# --- TreeStore -------------------------------------------------------------------


class TreeStore(Protocol):
    """The workspace and agent trees: records kept apart from the conversation tree.

    A backend applies the tree rules of rules/trees.py inside the write each
    guards (parent kinds, liveness, one live workspace per path, one live
    agent per session) and raises InvalidArgument / UnknownTreeNode /
    UnknownSession as they say. Ids and times come from the facade.
    """

    def add_workspace(
        self,
        workspace_id: str,
        kind: str,
        parent_id: str | None,
        argument: str,
        path: str,
        branch: str | None,
        now: str,
    ) -> None:
        """`argument`: the caller's name for `parent_id`, for error messages."""
        ...

    def workspace(self, workspace_id: str) -> Workspace: ...

    def workspace_children(self, workspace_id: str, include_removed: bool) -> list[Workspace]: ...

    def workspace_subtree(self, root_id: str | None) -> list[Workspace]:
        """Every record below `root_id` (None: every root), removed ones included."""
        ...

    def remove_workspace(self, workspace_id: str, now: str) -> Workspace: ...

    def add_agent(
        self,
        agent_id: str,
        role: str,
        parent_id: str | None,
        session_id: str,
        policy_text: str | None,
        workspace_id: str | None,
        now: str,
    ) -> None: ...

    def agent(self, agent_id: str) -> Agent: ...

    def agent_children(self, agent_id: str, include_removed: bool) -> list[Agent]: ...

    def agent_subtree(self, root_id: str | None) -> list[Agent]: ...

    def agent_for_session(self, session_id: str) -> Agent | None: ...

    def remove_agent(self, agent_id: str, now: str) -> Agent: ...

    def resolve_evidence(
        self, session_id: str, entry_id: str, for_agent: str | None
    ) -> dict[str, Any]:
        """The exact payload of worker.result `entry_id` if it is evidence now (see
        `Forest.resolve_evidence`), checked in one snapshot."""
        ...
