"""The contracts between the facade (`sessionforest.Forest`) and a storage backend.

A backend is a `Backend`: a `Store` (sessions, entries, heads, integrity), a
`TreeStore` (workspaces and agents), a `BulkStore` (importers' per-chat
writes, whole-session restore and dump) and a `SearchIndex` provider (the
primitives the search funnel ranks with). Everything that is not storage --
the clock, ids, payload validation, stamping, the search funnel, projection,
import mapping, output documents -- lives above, in the facade and the
backend-neutral `rules`, so a second backend implements only these. The
conformance suite (`tests/conformance/`) runs against every registered backend.

Errors: a backend raises only `ForestError`s (it wraps its driver's), from the
families in errors.py; every method documents the ones it raises.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NamedTuple, Protocol, TypeAlias

from ..errors import ForestError
from ..model import (
    Agent,
    ChatResult,
    ChatSpec,
    CheckReport,
    Entry,
    Node,
    RepairReport,
    SessionInfo,
    StoredEntry,
    StoredSession,
    Workspace,
)

# --- sentinels and value types -------------------------------------------------


class Unset:
    """`expect_head=UNSET`: no expectation (None means "the session is empty")."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset()


class Auto:
    """`append(stamp=AUTO)`: the controller stamps entries of sessions bound to a directory."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Final = Auto()


class AppendState(NamedTuple):
    """What a backend reads inside an append's write transaction, in one round trip;
    `rules.append.checked` decides from it."""

    quarantine: str | None  # the session's quarantine reason
    head: str | None
    last_sequence: int | None  # the session's highest sequence (None: no entries)
    below_owner: str | None  # session of the entry appended below (the parent, else the head)
    below_version: int | None  # its semantic schema version
    cwd: str | None  # the session's bound directory, as committed


@dataclass(frozen=True, slots=True)
class NewEntry:
    """One validated entry for a backend to append (the facade minted id and time)."""

    id: str
    kind: str
    payload: dict[str, Any]  # the validated object, handed back in the Entry
    body: str  # its JSON text, as stored
    visibility: str
    created_at: str


@dataclass(frozen=True, slots=True)
class NewSession:
    """A session row for a backend to insert."""

    id: str
    title: str
    harness: str
    cwd: str | None
    created_at: str
    visibility: str


@dataclass(frozen=True, slots=True)
class Stamping:
    """How a backend stamps an append: the stamp the facade took for the directory it
    believed bound, and how to take another if the committed binding differs (another
    process bound the session since), called inside the write transaction."""

    cwd: str | None
    text: str | None
    restamp: Callable[[str | None], str | None] | None = None


UNSTAMPED: Final = Stamping(None, None)


@dataclass(frozen=True, slots=True)
class Appended:
    """Where a backend put an append: the first entry's parent and sequence, the stamp."""

    parent: str | None
    sequence: int
    stamp_text: str | None


# How durable a committed write is, whatever the backend: "normal" survives any
# process crash, "full" also power loss (each backend says how it gets there).
DURABILITIES: Final = ("normal", "full")


@dataclass(frozen=True, slots=True)
class AppendRequest:
    """One append of `Forest.append_group`: what `Forest.append` takes (stamped AUTO)."""

    session_id: str
    kind: str
    payload: dict[str, Any]
    parent: str | None = None
    visibility: str | None = None
    expect_head: str | Unset | None = UNSET
    created_at: str | None = None


class GroupedAppend(NamedTuple):
    """One append of `Store.append_group`: the arguments `Store.append` takes."""

    session_id: str
    items: Sequence[NewEntry]
    parent: str | None
    expect_head: str | Unset | None
    now: str
    stamping: Stamping


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

    def sessions(self, *, include_hidden: bool = True, order: str = "created") -> list[SessionInfo]:
        """order: "created" (oldest first) or "updated" (latest activity first)."""
        ...

    def set_status(self, session_id: str, status: str) -> None: ...

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

    def active_path(self, session_id: str) -> list[Entry]:
        """Root to head; damage checked by `rules.reading.ordered_path`."""
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


# --- SearchIndex ---
#
# The primitives the search funnel (search/) runs over. A backend hands out one
# SearchIndex per search, bound to one read snapshot (the place to catch up an
# index kept behind a watermark, before it reads); the funnel parses, chooses
# terms, fuses the lists these return, relaxes AND to OR and judges the result,
# so ranking policy is the same on every backend. Keys are the backend's: the
# funnel only hashes and compares them (and orders chats by key to break ties
# between equally recent chats: a chat indexed later has a larger key).

ChatKey: TypeAlias = int
EntryKey: TypeAlias = int


@dataclass(frozen=True, slots=True)
class Spaceless:
    """A term's form in text of scripts written without spaces (sessionforest.scripts),
    where the backend finds it as a substring: how many rows may hold it."""

    entry_df: int  # entries that may hold it (an upper bound)
    digest_df: int  # chat digests that may hold it


@dataclass(frozen=True, slots=True)
class Term:
    """One thing to search for: a typed word, a quoted phrase, or a word's prefix.

    `text` is what was typed; `tokens` are the backend's stems of it (from
    `SearchIndex.tokens`), and the frequencies its counts of them. A backend
    builds its own query syntax from these; no syntax is ever carried here.
    """

    text: str
    tokens: tuple[str, ...]
    entry_df: int
    digest_df: int
    phrase: bool = False
    prefix: bool = False  # the last token may be the start of a longer word
    spaceless: Spaceless | None = None  # None: cannot occur in spaceless-script text

    @property
    def df(self) -> int:
        if self.spaceless is None:
            return self.entry_df + self.digest_df
        return self.entry_df + self.digest_df + self.spaceless.entry_df + self.spaceless.digest_df

    @property
    def entries(self) -> int:
        """Entries that may match, as words or substrings (for the read budgets)."""
        return self.entry_df + (self.spaceless.entry_df if self.spaceless is not None else 0)

    @property
    def label(self) -> str:
        if self.phrase:
            return f'"{self.text}"'
        return self.text + "*" if self.prefix else self.text


class ChatRow(NamedTuple):
    """A top-level, unquarantined chat as search lists it; times are ISO text.

    A NamedTuple, not a frozen dataclass: a search lists up to ~2,000 of them,
    and `ChatRow._make(row)` costs 0.2 us where the dataclass costs 0.9 us.
    """

    key: ChatKey
    session_id: str
    title: str
    harness: str
    status: str
    created_at: str
    first_at: str | None  # the span of its entries (None: no entries yet)
    last_at: str | None


@dataclass(frozen=True, slots=True)
class EntryRow:
    """One entry of a recall hit, with its snippet (matches marked with scripts.MARK)."""

    sequence: int
    entry_id: str
    kind: str  # as stored (legacy names included)
    created_at: str
    snippet: str


class SessionIndex(Protocol):
    """Recall's primitives, scoped to one session (entries named by sequence)."""

    def matches(self, text: str, *, prefix: bool, limit: int) -> list[int]:
        """Sequences of entries holding `text` (a word or phrase; with `prefix`,
        its last word may be the start of a longer one), newest first."""
        ...

    def size(self) -> int:
        """The session's highest sequence (1 when it has none): its entry count for idf."""
        ...

    def hits(
        self, sequences: Sequence[int], matched: Sequence[Term], needles: Sequence[str]
    ) -> list[EntryRow]:
        """The entries, in the order given, each with a snippet marking `matched`
        (or `needles`, where they were found as substrings); unindexed ones left out."""
        ...

    def active(self, oldest: int) -> set[int]:
        """Sequences on the active path from the head, down to `oldest`."""
        ...


class SearchIndex(Protocol):
    """One search's view of a backend's full-text index (one read snapshot)."""

    def tokens(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """The index tokenizer's stems of each text, in order (empty: nothing searchable)."""
        ...

    def frequency(self, stem: str) -> tuple[int, int]:
        """(entries, chat digests) holding the stem."""
        ...

    def prefix_frequency(self, stem: str) -> tuple[int, int]:
        """(entries, digests) holding a stem that starts with `stem` (an upper bound)."""
        ...

    def spaceless(self, text: str) -> Spaceless | None:
        """`text`'s substring form in spaceless-script text, or None where it cannot occur."""
        ...

    def chat_count(self) -> int:
        """How many chats the index holds (for idf)."""
        ...

    def entry_matches(
        self, terms: Sequence[Term], *, conjunctive: bool, ranked: bool, limit: int
    ) -> list[tuple[ChatKey, EntryKey]]:
        """Up to `limit` entries holding every term (`conjunctive`) or any, as (chat,
        entry) keys: best first when `ranked` (the backend's own relevance: only the
        order counts), else newest first. Substring matches in spaceless-script text
        follow the word matches."""
        ...

    def digest_matches(
        self, terms: Sequence[Term], *, conjunctive: bool, ranked: bool, limit: int
    ) -> list[ChatKey]:
        """Up to `limit` chats whose digest (title, opening exchange, latest summary)
        holds every term or any, best first when `ranked` (a title weighs most)."""
        ...

    def entry_counts(self, term: Term, limit: int) -> dict[ChatKey, int]:
        """Per chat, how many of its entries hold `term` (reading at most `limit`
        matches per index): the chat-level evidence list."""
        ...

    def contains(self, chat: ChatKey, term: Term) -> bool:
        """Whether any entry of the chat, or its digest, holds `term`."""
        ...

    def chats(self, keys: Iterable[ChatKey]) -> list[ChatRow]:
        """The listable chats among `keys` (hidden and quarantined ones left out)."""
        ...

    def all_chats(self) -> list[ChatRow]:
        """Every listable chat."""
        ...

    def harnesses(self) -> list[str]:
        """The harness names the store's chats use."""
        ...

    def snippet(self, chat: ChatKey, entry: EntryKey | None, terms: Sequence[Term]) -> str:
        """A short excerpt marking `terms`: of `entry` when given, else of the digest."""
        ...

    def session(self, session_id: str) -> SessionIndex | None:
        """Recall's primitives for one session (None: the index does not hold it)."""
        ...


# --- Backend ---------------------------------------------------------------------


class Backend(Protocol):
    """What `store.open_backend` returns and the facade holds: one store's components."""

    @property
    def name(self) -> str:
        """"sqlite", ..."""
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

    def search(self) -> AbstractContextManager[SearchIndex]:
        """A SearchIndex bound to one read snapshot; reads of `store` on this thread
        inside the block see the same snapshot."""
        ...

    def close(self) -> None: ...


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
    ) -> None:
        """Queue one entry (validated now: InvalidPayload queues nothing); `line` and
        `source` ("uuid 5f3e...") are what an error about it names."""
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

    def branches(self, session_id: str) -> int:
        """How many points of the session's tree re-did a turn."""
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
