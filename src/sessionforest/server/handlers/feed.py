"""The change feed's methods, on the event loop: `sessions/subscribe` (with replay
after a reconnect) and `sessions/unsubscribe`. The feed itself is changes.py."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from ...errors import InvalidArgument
from ...wire import SubscriptionJson, UnsubscribedJson
from ..context import Call
from ..registry import Group, Id, Params, Subscribed

group = Group("feed")


class SubscribeParams(Params):
    session_id: Id | None = None
    since: Annotated[int, Meta(ge=0)] | None = None
    epoch: str | None = None


@group.method("sessions/subscribe", SubscribeParams, SubscriptionJson, "loop")
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


@group.method("sessions/unsubscribe", UnsubscribeParams, UnsubscribedJson, "loop")
def unsubscribe(call: Call, p: UnsubscribeParams) -> UnsubscribedJson:
    """Stop a subscription of this connection; `removed` is false if it was not one."""
    push = call.client.push
    removed = push is not None and call.server.hub.unsubscribe(p.subscription, push)
    return {"subscription": p.subscription, "removed": removed}
