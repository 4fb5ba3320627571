"""Wire shapes: the JSON documents the server returns beyond the model's values.

A value the library returns is its own wire shape (model/value.py: a msgspec
Struct whose encoding is its JSON); the documents here are the ones only a
surface builds (pages, acknowledgements) and the shapes still written as
TypedDicts. The server publishes the JSON Schemas msgspec generates from these
very classes in its OpenRPC document, so what a method returns and what it
says it returns cannot drift apart.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypedDict

# The Entry documents are defined beside Entry (model/entries.py).
from .model.entries import EntryJson as EntryJson
from .model.entries import JsonObject as JsonObject
from .model.entries import LogEntryJson as LogEntryJson
from .model.sessions import SessionInfo
from .model.value import Value

# A document as JSON types (what a value's `to_json` gives).
Json = dict[str, Any]


class CompareGitJson(TypedDict):
    """The files' side of a branch comparison (compare.git_part)."""

    state: str  # "compared" | "unknown"
    reason: str
    a_head: str | None
    b_head: str | None
    a_dirty_files: int | None
    b_dirty_files: int | None
    dirty_differs: bool | None
    stat: str
    diff: str
    truncated: bool


class CompareRow(Value, frozen=True):
    """One aligned row: a turn of each side (its entry ids), or of one side only."""

    wire_name: ClassVar[str] = "CompareRowJson"

    a: list[str] | None
    b: list[str] | None
    same: bool


class Compare(Value, frozen=True):
    """Two branches of one chat from their common ancestor (`Forest.compare`)."""

    wire_name: ClassVar[str] = "CompareJson"

    session_id: str
    a: str
    b: str
    ancestor: str | None
    shared: int
    a_entries: list[LogEntryJson]
    b_entries: list[LogEntryJson]
    rows: list[CompareRow]
    git: CompareGitJson


class WorkerChat(Value, frozen=True):
    """A worker chat linked under a chat in the agent tree."""

    wire_name: ClassVar[str] = "WorkerChatJson"

    session_id: str
    title: str
    agent_type: str | None
    prompt: str
    entry_count: int
    created_at: str


class ChatCounts(Value, frozen=True):
    """What a chat list shows beside a title: visible messages (every branch) and
    the points where a turn was re-done (`Forest.branches`)."""

    wire_name: ClassVar[str] = "ChatCountsJson"

    session_id: str
    messages: int
    branches: int


class Workers(Value, frozen=True):
    """A chat's place in the agent tree: the chat it works for, the worker chats under it."""

    wire_name: ClassVar[str] = "WorkersJson"

    parent: SessionInfo | None
    workers: list[WorkerChat]


class EntryHitJson(TypedDict):
    """An entry of one session matching a recall query."""

    entry_id: str
    session_id: str
    sequence: int
    kind: str
    snippet: str
    created_at: str
    on_active_branch: bool
    score: float


class ChatHitJson(TypedDict):
    """A chat matching a find query (never its entries' bodies)."""

    session_id: str
    title: str
    score: float
    status: str
    snippet: str
    harness: str
    created_at: str
    updated_at: str
    matched_terms: list[str]
    entry_matches: int
    digest_match: bool
    # The entry the snippet comes from, where the chat opens, and whether it is on
    # the active branch; null when only the chat's digest (title, opening, summary) matched.
    entry_id: str | None
    sequence: int | None
    active: bool | None


class TimeWindowJson(TypedDict):
    phrase: str
    start: str
    end: str


class ChatSearchJson(TypedDict):
    """The answer of find-a-chat: ranked chats and whether the index is sure."""

    query: str
    confident: bool
    reason: str
    detail: str
    hits: list[ChatHitJson]
    terms: list[str]
    unknown_terms: list[str]
    prefix_terms: list[str]
    dropped_terms: list[str]
    window: TimeWindowJson | None
    harness: list[str]
    mode: str
    outside_window: list[ChatHitJson]
    excluded_terms: list[str]


class UsageJson(TypedDict):
    provider: str
    model: str
    input_tokens: int
    output_tokens: int


class DeepSearchJson(ChatSearchJson):
    """find-a-chat's answer with the deep tier's (T2) outcome (docs/deep-search.md)."""

    tier: str  # "index" or "model"
    fallback: str | None
    fallback_detail: str | None
    answer: str | None  # the chat the model named (null: none, or the index answered)
    lookups: int
    lookup_tokens: int
    usage: UsageJson | None
    elapsed_ms: int
    model_ms: int
    prestarted: bool


class UsageRecordJson(TypedDict):
    session_id: str
    created_at: str
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    lookups: int
    lookup_tokens: int
    elapsed_ms: int
    model_ms: int
    tier: str
    fallback: str | None
    task_family: str


class ResultCardJson(TypedDict):
    command: str
    query: str
    text: str
    entries: list[EntryHitJson]
    chats: ChatSearchJson | None


class ErrorJson(TypedDict):
    """A ForestError (`to_json`): its class name, message, and its fields beside them
    (session_id, entry_id, field, line, ... as each error carries them)."""

    type: str
    message: str


# --- documents only the server returns ------------------------------------------------


class SessionsPage(Value, frozen=True):
    """`sessions/list`: a page of sessions. `next_cursor` (pass it as `cursor`) or
    `next_offset` (as `offset`) asks for the next page; both are null on the last."""

    wire_name: ClassVar[str] = "SessionsPageJson"

    sessions: list[SessionInfo]
    total: int
    next_offset: int | None
    next_cursor: str | None = None


class Resolved(Value, frozen=True):
    """`sessions/resolve`: the ids a prefix, a sequence number or a full id names."""

    wire_name: ClassVar[str] = "ResolvedJson"

    session_id: str
    entry_id: str | None


class EntriesPage(Value, frozen=True):
    """`sessions/entries`: entries after a sequence, in sequence order, and the head now.
    `next_after` (the last entry's sequence) asks for the next page; null: no more."""

    wire_name: ClassVar[str] = "EntriesPageJson"

    session_id: str
    head: str | None
    entries: list[EntryJson]
    next_after: int | None


class Export(Value, frozen=True):
    """`sessions/export`: the session as JSONL text in one of the export formats."""

    wire_name: ClassVar[str] = "ExportJson"

    session_id: str
    format: str
    entries: int
    text: str


class ChangeJson(TypedDict):
    """`sessions/changed`: one committed change made through this server.

    `seq` numbers every change of this server run (`epoch`) from 1 with no gap;
    `entry_ids` are the entries it added, in sequence order (`first_sequence`..
    `last_sequence`); null when more than 1,000 were added (an import): read them
    with `sessions/entries` after `first_sequence - 1`.
    """

    subscription: str
    epoch: str
    seq: int
    session_id: str
    change: str  # created | appended | head_moved | status | imported | renamed
    head: str | None
    status: str
    entry_ids: list[str] | None
    first_sequence: int | None
    last_sequence: int | None


class SubscriptionJson(TypedDict):
    """`sessions/subscribe`: the subscription, where this server's change feed stands,
    and whether the changes after `since` were replayed (`replayed`) or are gone
    (`resync`: the server restarted or they left its history; re-read what you show)."""

    subscription: str
    session_id: str | None
    epoch: str
    seq: int
    replayed: int
    resync: bool


class UnsubscribedJson(TypedDict):
    subscription: str
    removed: bool


class HealthJson(TypedDict):
    ok: bool
    epoch: str
    seq: int
    readonly: bool
