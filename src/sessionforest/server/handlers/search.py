"""Search methods: recall in one session, find a chat (T1 and the gate), deep search
(T2) with its pre-start, and the model usage deep searches recorded."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from msgspec import Meta

from ...errors import InvalidArgument
from ...providers import ProviderConfig
from ...wire import ChatSearchJson, DeepSearchJson, EntryHitJson, UsageRecordJson
from ..context import Call
from ..limits import MAX_HITS
from ..registry import Group, Id, Params, Query

group = Group("search")


class RecallParams(Params):
    session_id: Id
    query: Query
    limit: Annotated[int, Meta(ge=1, le=MAX_HITS)] = 10


@group.method("sessions/search_session_entries", RecallParams, list[EntryHitJson], "read")
def search_session_entries(call: Call, p: RecallParams) -> list[EntryHitJson]:
    """Entries of this one session matching `query`, best first (ended chats too)."""
    hits = call.forest.search_session_entries(
        p.session_id, p.query, p.limit, deadline=call.deadline
    )
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


@group.method("sessions/search_chats", FindParams, ChatSearchJson, "read")
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
    result = call.forest.search_chats(p.query, now, p.limit, p.harness, deadline=call.deadline)
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
    found = call.forest.deep_search(
        query, cfg, now=_now(now_text), limit=limit, harness=harness,
        prepared=prepared, clients=call.server.clients,
    )  # fmt: skip
    return found.to_json()


@group.method("search/deep", DeepFindParams, DeepSearchJson, "read")
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


@group.method("search/usage", UsageParams, list[UsageRecordJson], "read")
def search_usage(call: Call, p: UsageParams) -> list[UsageRecordJson]:
    """Model usage of every deep search, oldest first (task_family chat_search)."""
    return call.forest.deep_usage()
