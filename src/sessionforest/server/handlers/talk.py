"""Talking to a model from the web UI: `chat/model`, `chat/reply`, `chat/stop`.

`chat/reply` projects the session's active branch (optionally after moving the
head to `parent`, which is how "regenerate" branches) and renders it for the
configured provider (`Forest.model_context`), streams the reply through
the shared provider layer (providers.py) and records it through the provider's
stream adapter, whose entries are written by the server's writer thread like
any `sessions/append_many` (so every subscriber is notified). While it streams,
the caller's connection gets `chat/delta` notifications with the text so far.
`chat/stop` ends a reply early (only one the same connection asked for): the
HTTP stream is closed and the adapter records what had finished as an
incomplete message.

The streaming runs on a thread of its own per reply (never on the writer or the
reader pool: a reply lasts seconds to minutes).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Annotated, Any, TypedDict

from msgspec import Meta

from ...errors import NoModelConfigured
from ...model import Entry
from ...providers import ProviderConfig, stream_adapter, stream_events
from ...wire import EntryJson
from ..changes import Change
from ..context import Call
from ..registry import Group, Id, NoParams, Params
from .entries import append_turn

group = Group("talk")

MAX_TOKENS = 4096


class ModelJson(TypedDict):
    configured: bool
    provider: str | None
    model: str | None
    api: str | None


@group.method("chat/model", NoParams, ModelJson, "loop")
def model(call: Call, p: NoParams) -> ModelJson:
    """Which model `chat/reply` talks to; `configured` is false when none is."""
    cfg = call.server.provider
    if cfg is None:
        return {"configured": False, "provider": None, "model": None, "api": None}
    return {"configured": True, "provider": cfg.provider, "model": cfg.model, "api": cfg.api}


class ReplyParams(Params):
    session_id: Id
    reply_id: Annotated[str, Meta(min_length=1, max_length=64, description="chosen by the "
                                  "caller; chat/stop and chat/delta name it")]  # fmt: skip
    parent: Id | None = None
    max_tokens: Annotated[int, Meta(ge=1, le=64_000)] = MAX_TOKENS


class ReplyJson(TypedDict):
    reply_id: str
    entry: EntryJson | None
    incomplete: bool
    stop_reason: str | None
    stopped: bool


@group.method("chat/reply", ReplyParams, ReplyJson, "loop")
async def reply(call: Call, p: ReplyParams) -> ReplyJson:
    """Ask the configured model to reply on the session's active branch; record its answer.

    With `parent`, the head moves there first (a new branch: "regenerate").
    Over a WebSocket, `chat/delta` notifications carry the text as it streams.
    The answer is the recorded `assistant.message` (incomplete when stopped).
    """
    server = call.server
    cfg = server.provider
    if cfg is None:
        raise NoModelConfigured()
    # Known by this client and its id: refused when this client already runs that id.
    stop = server.replies.begin(call.client.id, p.reply_id, cfg)
    try:
        return await _reply(call, p, cfg, stop)
    finally:
        server.replies.end(call.client.id, p.reply_id)


async def _reply(
    call: Call, p: ReplyParams, cfg: ProviderConfig, stop: threading.Event
) -> ReplyJson:
    server = call.server
    if p.parent is not None:
        await server.write(lambda c: _move(c, p.session_id, p.parent or ""), call)
    system, turns = await server.read(
        lambda: server.forest.model_context(p.session_id, cfg.provider)
    )
    loop = asyncio.get_running_loop()
    push = call.client.push

    def delta(text: str) -> None:
        if push is not None:
            note = {"reply_id": p.reply_id, "session_id": p.session_id, "text": text}
            loop.call_soon_threadsafe(push, {"jsonrpc": "2.0", "method": "chat/delta",
                                             "params": note})  # fmt: skip

    writer = _Writer(call, loop)

    def run() -> ReplyJson:
        adapter = stream_adapter(cfg, writer, p.session_id)
        events = stream_events(cfg, server.clients.get(cfg), system=system, messages=turns,
                               max_tokens=p.max_tokens)  # fmt: skip
        done = None
        try:
            for event in events:
                text = _text_delta(event)
                if text:
                    delta(text)
                done = adapter.feed(event)
                if done is not None or stop.is_set():
                    break
        finally:
            close = getattr(events, "close", None)  # a generator: closes the HTTP stream
            if close is not None:
                close()
        if done is None:
            done = adapter.close()  # stopped (or the stream broke off): incomplete
        entry = done.entry.to_json() if done is not None else None
        payload = done.payload if done is not None else {}
        return {"reply_id": p.reply_id, "entry": entry,
                "incomplete": bool(payload.get("incomplete", True)),
                "stop_reason": payload.get("stop_reason"),
                "stopped": stop.is_set()}  # fmt: skip

    return await asyncio.to_thread(run)


class StopParams(Params):
    reply_id: Annotated[str, Meta(min_length=1, max_length=64)]


class StopJson(TypedDict):
    reply_id: str
    stopping: bool


@group.method("chat/stop", StopParams, StopJson, "loop")
def stop(call: Call, p: StopParams) -> StopJson:
    """Stop a `chat/reply` this connection is running; it answers with what was recorded
    (incomplete). Another connection's reply is never stopped (`stopping` is false)."""
    stopping = call.server.replies.stop(call.client.id, p.reply_id)
    return {"reply_id": p.reply_id, "stopping": stopping}


def _move(call: Call, session_id: str, entry_id: str) -> None:
    call.forest.move_head(session_id, entry_id)
    call.changed(Change(session_id, "head_moved", entry_id, call.status_of(session_id)))


def _text_delta(event: dict[str, Any]) -> str:
    """The answer text an Anthropic or OpenAI Responses stream event adds, if any."""
    kind = event.get("type")
    if kind == "content_block_delta":
        d = event.get("delta") or {}
        return str(d.get("text") or "") if d.get("type") == "text_delta" else ""
    if kind == "response.output_text.delta":
        return str(event.get("delta") or "")
    return ""


class _Writer:
    """The adapters' TurnWriter: one `append_turn` on the server's writer thread."""

    def __init__(self, call: Call, loop: asyncio.AbstractEventLoop) -> None:
        self.call = call
        self.loop = loop

    def append_many(
        self, session_id: str, items: Sequence[tuple[str, dict[str, Any], str | None]]
    ) -> list[Entry]:
        write = self.call.server.write(
            lambda c: append_turn(c, session_id, items), self.call, stamp_for=session_id
        )
        return asyncio.run_coroutine_threadsafe(write, self.loop).result()
