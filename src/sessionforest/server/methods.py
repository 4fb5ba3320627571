"""Every JSON-RPC method: its params (a msgspec Struct), result type, mode and handler.

The one definition: dispatch validates params with these Structs, and
`rpc.discover` publishes their JSON Schemas and the result TypedDicts
(openrpc.py). Params are named as in the Python API. A handler gets a `Call`
and the params and returns a wire document built by the facade; `mode` says
where it runs: "read" (reader pool), "write" (the one writer thread, which
reports its changes), "append" (the handler only builds an AppendRequest, which
joins the writer's next group commit) or "loop" (on the event loop: nothing
that touches the store).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from ..deep import deep_search
from ..deep import usage as deep_usage
from ..errors import InvalidArgument
from ..forest import UNSET as FOREST_UNSET
from ..forest import AppendRequest
from ..io.importers import FORMATS
from ..kinds import KINDS
from ..model import Entry
from ..projection import Message, project
from ..providers import ProviderConfig
from ..store.base import Unset
from ..wire import (
    ChatSearchJson,
    DeepSearchJson,
    DivergenceJson,
    EntriesPageJson,
    EntryHitJson,
    EntryJson,
    ExportJson,
    ImportReportJson,
    LogEntryJson,
    ResolvedJson,
    SessionJson,
    SessionsPageJson,
    SnapshotJson,
    SubscriptionJson,
    UnsubscribedJson,
    UsageRecordJson,
)
from .changes import Change
from .context import Call
from .limits import MAX_HITS, MAX_ITEMS, MAX_NOTIFIED_IDS, MAX_PAGE, MAX_QUERY

Mode = Literal["read", "write", "append", "loop"]
Id = Annotated[str, Meta(min_length=1, max_length=128, description="an exact id")]
Query = Annotated[str, Meta(max_length=MAX_QUERY)]
Kind = Annotated[str, Meta(extra_json_schema={"enum": sorted(KINDS)})]
Visibility = Literal["context", "hidden"]
ExpectHead = Annotated[
    str | UnsetType | None,
    Meta(description="fail with HeadMoved unless the head is this entry (null: no entries)"),
]


def _expected(value: str | UnsetType | None) -> str | Unset | None:
    """msgspec's "absent" as the facade's (absent: no check; null: an empty session)."""
    return FOREST_UNSET if value is UNSET else value


class Params(Struct, forbid_unknown_fields=True):
    """Base of every method's params; unknown names are refused (-32602)."""


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    params: type[Params]
    result: Any  # a wire TypedDict, or list[...] of one
    mode: Mode
    handler: Callable[[Call, Any], Any]
    summary: str
    description: str


REGISTRY: dict[str, Method] = {}


def method(name: str, params: type[Params], result: Any, mode: Mode) -> Callable[..., Any]:
    def register(fn: Callable[[Call, Any], Any]) -> Callable[[Call, Any], Any]:
        summary, _, description = (fn.__doc__ or "").strip().partition("\n")
        text = " ".join(line.strip() for line in description.splitlines() if line.strip())
        REGISTRY[name] = Method(name, params, result, mode, fn, summary.strip(), text)
        return fn

    return register


# --- sessions ----------------------------------------------------------------------


class CreateParams(Params):
    title: str = ""
    harness: str = ""
    cwd: str | None = None
    session_id: Id | None = None
    visibility: Literal["top-level", "hidden"] = "top-level"
    created_at: str | None = None


@method("sessions/create", CreateParams, SessionJson, "write")
def create(call: Call, p: CreateParams) -> SessionJson:
    """Create an empty session; `cwd` binds it to a directory of the server's machine."""
    forest = call.forest
    sid = forest.create_session(
        p.title, p.harness, p.cwd, session_id=p.session_id, visibility=p.visibility,
        created_at=p.created_at,
    )  # fmt: skip
    info = forest.session(sid)
    call.server.set_status(sid, info.status)
    call.changed(Change(sid, "created", None, info.status))
    return info.to_json()


class ListParams(Params):
    # Hidden sessions (subagents' side chats, deep-search usage records) are listed
    # only on request, as `forest list` does (`--all`).
    include_hidden: bool = False
    order: Literal["created", "updated"] = "created"
    offset: Annotated[int, Meta(ge=0)] = 0
    limit: Annotated[int, Meta(ge=1, le=MAX_PAGE)] = MAX_PAGE


@method("sessions/list", ListParams, SessionsPageJson, "read")
def list_sessions(call: Call, p: ListParams) -> SessionsPageJson:
    """A page of sessions: oldest first (`order="created"`) or latest activity first;
    hidden ones only with `include_hidden`."""
    every = call.forest.sessions(include_hidden=p.include_hidden, order=p.order)
    page = every[p.offset : p.offset + p.limit]
    end = p.offset + len(page)
    return {
        "sessions": [s.to_json() for s in page],
        "total": len(every),
        "next_offset": end if end < len(every) else None,
    }


class SessionParams(Params):
    session_id: Id


@method("sessions/get", SessionParams, SessionJson, "read")
def get(call: Call, p: SessionParams) -> SessionJson:
    """One session as listed: title, harness, status, head, entry count, source."""
    return call.forest.session(p.session_id).to_json()


class ResolveParams(Params):
    session: Annotated[str, Meta(min_length=1, max_length=128)]
    entry: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


@method("sessions/resolve", ResolveParams, ResolvedJson, "read")
def resolve(call: Call, p: ResolveParams) -> ResolvedJson:
    """The ids that refs name as a person types them, as the CLI takes them.

    `session`: a full id or a unique prefix; `entry`: a full id, a sequence
    number as `log` prints it, or a unique prefix. Every other method takes
    exact ids only.
    """
    sid = call.forest.resolve_session(p.session)
    entry = call.forest.resolve_entry(sid, p.entry) if p.entry is not None else None
    return {"session_id": sid, "entry_id": entry}


@method("sessions/end", SessionParams, SessionJson, "write")
def end(call: Call, p: SessionParams) -> SessionJson:
    """Mark the session ended (it stays searchable and readable)."""
    return _set_status(call, p.session_id, "ended")


@method("sessions/archive", SessionParams, SessionJson, "write")
def archive(call: Call, p: SessionParams) -> SessionJson:
    """Mark the session archived (it stays searchable and readable)."""
    return _set_status(call, p.session_id, "archived")


def _set_status(call: Call, session_id: str, status: str) -> SessionJson:
    call.forest.set_status(session_id, status)
    info = call.forest.session(session_id)
    call.server.set_status(session_id, info.status)
    call.changed(Change(session_id, "status", info.head, info.status))
    return info.to_json()


# --- writing entries -------------------------------------------------------------------


class AppendParams(Params):
    session_id: Id
    kind: Kind
    payload: dict[str, Any]
    parent: Id | None = None
    visibility: Visibility | None = None
    expect_head: ExpectHead = UNSET
    created_at: str | None = None


@method("sessions/append", AppendParams, EntryJson, "append")
def append(call: Call, p: AppendParams) -> AppendRequest:
    """Append an entry below `parent` (default: the head); the head moves to it.

    The payload must meet its kind's contract (published per kind in the
    schemas as `<Kind>` payloads); appending below anything but the head starts
    a new branch. Concurrent appends are committed together (group commit),
    each still all or nothing.
    """
    return AppendRequest(
        p.session_id, p.kind, p.payload, p.parent, p.visibility, _expected(p.expect_head),
        p.created_at,
    )  # fmt: skip


class AppendItem(Struct, forbid_unknown_fields=True):
    kind: Kind
    payload: dict[str, Any]
    visibility: Visibility | None = None


class AppendManyParams(Params):
    session_id: Id
    items: Annotated[list[AppendItem], Meta(min_length=1, max_length=MAX_ITEMS)]
    parent: Id | None = None
    expect_head: ExpectHead = UNSET


@method("sessions/append_many", AppendManyParams, list[EntryJson], "write")
def append_many(call: Call, p: AppendManyParams) -> list[EntryJson]:
    """Append a whole turn as one chain in ONE transaction: all of it or nothing."""
    items = [(i.kind, i.payload, i.visibility) for i in p.items]
    entries = append_turn(call, p.session_id, items, p.parent, _expected(p.expect_head))
    return [e.to_json() for e in entries]


def append_turn(
    call: Call,
    session_id: str,
    items: Sequence[tuple[str, dict[str, Any], str | None]],
    parent: str | None = None,
    expect_head: str | Unset | None = FOREST_UNSET,
) -> list[Entry]:
    """`Forest.append_many` on the writer thread, and the `appended` change it makes."""
    entries = call.forest.append_many(session_id, items, parent, expect_head)
    ids = tuple(e.id for e in entries)
    call.changed(
        Change(session_id, "appended", ids[-1], call.status_of(session_id), ids,
               entries[0].sequence, entries[-1].sequence)
    )  # fmt: skip
    return entries


class MoveHeadParams(Params):
    session_id: Id
    entry_id: Id
    expect_head: ExpectHead = UNSET


@method("sessions/move_head", MoveHeadParams, EntryJson, "write")
def move_head(call: Call, p: MoveHeadParams) -> EntryJson:
    """Point the head at `entry_id` (history and files untouched); returns that entry."""
    forest = call.forest
    forest.move_head(p.session_id, p.entry_id, expect_head=_expected(p.expect_head))
    entry = forest.entry(p.session_id, p.entry_id)
    call.changed(Change(p.session_id, "head_moved", entry.id, call.status_of(p.session_id)))
    return entry.to_json()


class CheckpointParams(Params):
    session_id: Id
    label: Annotated[str, Meta(min_length=1)]
    summary: str | None = None


@method("sessions/checkpoint", CheckpointParams, EntryJson, "write")
def checkpoint(call: Call, p: CheckpointParams) -> EntryJson:
    """Record a checkpoint entry labelling the current state (the head moves onto it)."""
    entry = call.forest.checkpoint(p.session_id, p.label, p.summary)
    status = call.status_of(p.session_id)
    call.changed(
        Change(p.session_id, "appended", entry.id, status, (entry.id,), entry.sequence,
               entry.sequence)
    )  # fmt: skip
    return entry.to_json()


class SeekParams(Params):
    session_id: Id
    label: Annotated[str, Meta(min_length=1)]


@method("sessions/seek_checkpoint", SeekParams, EntryJson, "write")
def seek_checkpoint(call: Call, p: SeekParams) -> EntryJson:
    """Move the head to the most recent checkpoint with `label`; returns it."""
    entry = call.forest.seek_checkpoint(p.session_id, p.label)
    call.changed(Change(p.session_id, "head_moved", entry.id, call.status_of(p.session_id)))
    return entry.to_json()


# --- reading -------------------------------------------------------------------------


class EntryParams(Params):
    session_id: Id
    entry_id: Id


@method("sessions/entry", EntryParams, EntryJson, "read")
def entry(call: Call, p: EntryParams) -> EntryJson:
    """One entry, with its payload and stamp."""
    return call.forest.entry(p.session_id, p.entry_id).to_json()


class EntriesParams(Params):
    session_id: Id
    after_sequence: Annotated[int, Meta(ge=0)] = 0
    limit: Annotated[int, Meta(ge=1, le=MAX_PAGE)] = 200


@method("sessions/entries", EntriesParams, EntriesPageJson, "read")
def entries(call: Call, p: EntriesParams) -> EntriesPageJson:
    """Entries of every branch with a sequence above `after_sequence`, in sequence order.

    Pages: pass the answer's `next_after` as the next `after_sequence`. After a
    reconnect, `after_sequence` = the last sequence seen reads exactly what was
    missed; `head` is the head when the page was read.
    """
    forest = call.forest
    head = forest.head(p.session_id)
    page = forest.entries_after(p.session_id, p.after_sequence, p.limit)
    more = len(page) == p.limit
    return {
        "session_id": p.session_id,
        "head": head,
        "entries": [e.to_json() for e in page],
        "next_after": page[-1].sequence if more else None,
    }


class LogParams(Params):
    session_id: Id
    # Only the last `limit` entries of the path (read in time proportional to it).
    limit: Annotated[int, Meta(ge=1)] | None = None


@method("sessions/log", LogParams, list[LogEntryJson], "read")
def log(call: Call, p: LogParams) -> list[LogEntryJson]:
    """The active path (its last `limit` entries), root first, each entry marked
    `diverged` (as `forest log --json`)."""
    return call.forest.log_document(p.session_id, p.limit)  # type: ignore[return-value]


class SnapshotParams(Params):
    session_id: Id
    entry: Id | None = None


@method("sessions/forest_snapshot", SnapshotParams, SnapshotJson, "read")
def forest_snapshot(call: Call, p: SnapshotParams) -> SnapshotJson:
    """Every node, the active path, head, tips, checkpoints and divergence, read at once.

    Divergence compares `entry`'s stamp (default: the head's) with the worktree now.
    """
    return call.forest.snapshot(p.session_id, p.entry).to_json()


@method("sessions/project", SessionParams, list[Message], "read")
def project_session(call: Call, p: SessionParams) -> list[Message]:
    """The provider-neutral context of the active branch (what a model would be sent)."""
    return project(call.forest, p.session_id)


class StatusParams(Params):
    session_id: Id
    entry_id: Id | None = None


@method("sessions/status", StatusParams, DivergenceJson, "read")
def status(call: Call, p: StatusParams) -> DivergenceJson:
    """Whether the entry's worktree stamp (default: the head's) matches the worktree now."""
    return call.forest.divergence(p.session_id, p.entry_id).to_json()


# --- search ----------------------------------------------------------------------------


class RecallParams(Params):
    session_id: Id
    query: Query
    limit: Annotated[int, Meta(ge=1, le=MAX_HITS)] = 10


@method("sessions/search_session_entries", RecallParams, list[EntryHitJson], "read")
def search_session_entries(call: Call, p: RecallParams) -> list[EntryHitJson]:
    """Entries of this one session matching `query`, best first (ended chats too)."""
    hits = call.forest.search_session_entries(p.session_id, p.query, p.limit)
    return [h.to_json() for h in hits]


Provider = Annotated[
    Literal["anthropic", "openai"] | None,
    Meta(description="deep search's provider (default: the server's FOREST_PROVIDER)"),
]
Model = Annotated[
    str | None, Meta(description="deep search's model (default: the server's FOREST_MODEL)")
]


class FindParams(Params):
    query: Query
    now: Annotated[str, Meta(description="ISO 8601; time phrases resolve against it")] | None = None
    limit: Annotated[int, Meta(ge=1, le=MAX_HITS)] = 8
    harness: str | None = None
    deep: Annotated[
        bool, Meta(description="when the index is unsure, let a model look (as search/deep)")
    ] = False
    prestart: Annotated[
        bool,
        Meta(
            description="as-you-type: when unsure, prepare this client's deep search in the "
            "background (no model turn) for a later search/deep of the same query"
        ),
    ] = False
    provider: Provider = None
    model: Model = None


def _now(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise InvalidArgument("now", f"expected an ISO 8601 time, got {text!r}") from None


@method("sessions/search_chats", FindParams, ChatSearchJson, "read")
def search_chats(call: Call, p: FindParams) -> ChatSearchJson:
    """Top-level chats matching `query`, best first, and whether the index is sure.

    Returns chats, never entry bodies. Time phrases resolve against `now`
    (default: the server's clock). `deep: true` answers as search/deep (the
    same document plus the deep fields). `prestart: true` (the UI's as-you-type
    search over a WebSocket or stdio) pre-starts this client's deep search
    when the index is unsure and a model is configured: client built,
    connection warmed, cards cut from redacted bodies, no model turn; the next
    search/deep of the same query uses it once, and it expires unused after
    three minutes.
    """
    if p.deep:
        return _deep(call, p.query, p.now, p.limit, p.harness, p.provider, p.model)
    now = _now(p.now)
    result = call.forest.search_chats(p.query, now, p.limit, p.harness)
    if p.prestart and not result.confident and call.client.transport != "http":
        cfg = ProviderConfig.resolve(p.provider, p.model)
        if cfg is not None:
            call.server.prestarts.start(
                call.client.id,
                call.forest,
                p.query,
                cfg,
                now=now,
                limit=p.limit,
                harness=p.harness,
                search=result,
            )
    return result.to_json()


class DeepFindParams(Params):
    query: Query
    now: Annotated[str, Meta(description="ISO 8601; time phrases resolve against it")] | None = None
    limit: Annotated[int, Meta(ge=1, le=MAX_HITS)] = 8
    harness: str | None = None
    provider: Provider = None
    model: Model = None


def _deep(
    call: Call,
    query: str,
    now_text: str | None,
    limit: int,
    harness: str | None,
    provider: str | None,
    model: str | None,
) -> DeepSearchJson:
    cfg = ProviderConfig.resolve(provider, model)
    prepared = call.server.prestarts.take(call.client.id, query, limit, harness)
    found = deep_search(
        call.forest, query, cfg, now=_now(now_text), limit=limit, harness=harness, prepared=prepared
    )
    return found.to_json()


@method("search/deep", DeepFindParams, DeepSearchJson, "read")
def search_deep(call: Call, p: DeepFindParams) -> DeepSearchJson:
    """Find a chat with the model tier: the index first, a model only when it is unsure.

    T1 and the gate as sessions/search_chats; when the gate is unsure and a
    provider is configured (params, else the server's FOREST_PROVIDER /
    FOREST_MODEL; keys and base URLs from the SDKs' variables), a bounded,
    tool-free model search (3 lookups, 2,000 lookup tokens, 8 s of model
    time) over redacted cards. Any overrun, bad reply or provider error
    returns the index's answer with `fallback` saying which (`quota` for
    quota and rate limits). Uses this client's pre-started search when it was
    for the same query. Each model search is recorded as a hidden chat_search
    session (search/usage).
    """
    return _deep(call, p.query, p.now, p.limit, p.harness, p.provider, p.model)


class UsageParams(Params):
    pass


@method("search/usage", UsageParams, list[UsageRecordJson], "read")
def search_usage(call: Call, p: UsageParams) -> list[UsageRecordJson]:
    """Model usage of every deep search, oldest first (task_family chat_search)."""
    return deep_usage(call.forest)


# --- import and export ------------------------------------------------------------------


class ExportParams(Params):
    session_id: Id
    format: Literal["native", "yoagent"] = "native"


@method("sessions/export", ExportParams, ExportJson, "read")
def export(call: Call, p: ExportParams) -> ExportJson:
    """The session as JSONL text: native (every entry, round-trips) or yoagent."""
    out = io.StringIO()
    if p.format == "native":
        count = call.forest.export_jsonl(p.session_id, out)
    else:
        count = call.forest.export_yoagent(p.session_id, out)[0]
    return {"session_id": p.session_id, "format": p.format, "entries": count,
            "text": out.getvalue()}  # fmt: skip


class ImportParams(Params):
    format: Annotated[str, Meta(extra_json_schema={"enum": list(FORMATS)})]
    path: Annotated[str, Meta(min_length=1, description="inside one of the --import-root's")]
    skip_bad: bool = False


@method("sessions/import", ImportParams, ImportReportJson, "write")
def import_chats(call: Call, p: ImportParams) -> ImportReportJson:
    """Import every chat of a file or directory on the server's machine.

    Only paths inside the directories the server was started with
    (`--import-root`) are read. Each chat is its own transaction; failed chats
    are reported in `failed`, the others imported.
    """
    path = call.server.import_path(p.path)
    report = call.forest.import_chats(p.format, path, skip_bad=p.skip_bad)
    for chat in report.chats:
        if not (chat.created or chat.added):
            continue
        first = chat.entries - chat.added + 1 if chat.added else None
        last = chat.entries if chat.added else None
        ids: tuple[str, ...] | None = ()
        if chat.added and chat.added <= MAX_NOTIFIED_IDS:
            page = call.forest.entries_after(chat.session_id, chat.entries - chat.added, chat.added)
            ids = tuple(e.id for e in page)
        elif chat.added:
            ids = None
        status = call.forest.session(chat.session_id).status
        call.server.set_status(chat.session_id, status)
        call.changed(Change(chat.session_id, "imported", chat.head, status, ids, first, last))
    return report.to_json()


# --- the change feed and the document itself (on the event loop) ------------------------


class SubscribeParams(Params):
    session_id: Id | None = None
    since: Annotated[int, Meta(ge=0)] | None = None
    epoch: str | None = None


@dataclass(frozen=True, slots=True)
class Subscribed:
    """A subscribe answer plus the subscription to release once it has been sent."""

    answer: SubscriptionJson
    release: Callable[[], None]


@method("sessions/subscribe", SubscribeParams, SubscriptionJson, "loop")
def subscribe(call: Call, p: SubscribeParams) -> Subscribed:
    """Receive `sessions/changed` for one session (or all) over a WebSocket or stdio.

    With `since` and `epoch` from the last notification seen, the changes after
    it are replayed first when this server still has them; otherwise the
    answer says `resync` (read what you show again: `sessions/entries` from the
    last sequence you hold).
    """
    push = call.client.push
    if push is None:
        raise InvalidArgument(
            "transport", "sessions/subscribe needs a connection the server can push to: "
            "a WebSocket (/ws) or stdio, not HTTP POST"
        )  # fmt: skip
    hub = call.server.hub
    sub, answer = hub.subscribe(push, p.session_id, p.since, p.epoch)
    return Subscribed(answer, lambda: sub.release(hub.epoch))


class UnsubscribeParams(Params):
    subscription: Id


@method("sessions/unsubscribe", UnsubscribeParams, UnsubscribedJson, "loop")
def unsubscribe(call: Call, p: UnsubscribeParams) -> UnsubscribedJson:
    """Stop a subscription of this connection; `removed` is false if it was not one."""
    push = call.client.push
    removed = push is not None and call.server.hub.unsubscribe(p.subscription, push)
    return {"subscription": p.subscription, "removed": removed}


class NoParams(Params):
    pass


@method("rpc.discover", NoParams, dict[str, Any], "loop")
def discover(call: Call, p: NoParams) -> dict[str, Any]:
    """This API as an OpenRPC document: every method, its params and result schemas, errors."""
    from .openrpc import document

    return document()


# Methods registered from their own modules (same registry, same document).
from . import talk  # noqa: E402, F401  (the web UI's model replies)
