"""The change feed: `sessions/changed` for every write this server committed, in order.

Every write runs on the server's one writer thread (app.py), which hands each
committed change to `Hub.publish` on the event loop in commit order; the hub
numbers them (`seq`, from 1, no gaps, per server run `epoch`), keeps the last
`history` for replay and pushes each to the subscriptions that want it.

Catch-up after a reconnect: subscribe with `since` = the last `seq` seen and
the `epoch` it came with. Same epoch and still in history: the missed changes
are replayed before any new one (none lost, none twice). Otherwise the answer
says `resync`; per session, `sessions/entries(after_sequence=...)` reads
exactly the entries missed, since entry sequences are durable.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..ids import new_id
from ..model import Entry
from ..wire import ChangeJson, SubscriptionJson

Push = Callable[[dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Change:
    """One committed change, as the writer thread saw it."""

    session_id: str
    change: str  # created | appended | head_moved | status | imported
    head: str | None
    status: str
    entry_ids: tuple[str, ...] | None = ()
    first_sequence: int | None = None
    last_sequence: int | None = None


def appended(entries: Sequence[Entry], status: str) -> Change:
    """The change one commit of `entries` (one chain of one session, in order) made:
    the head is the last of them, their ids and sequence range are listed."""
    first, last = entries[0], entries[-1]
    ids = tuple(e.id for e in entries)
    return Change(first.session_id, "appended", last.id, status, ids, first.sequence, last.sequence)


@dataclass(slots=True)
class Subscription:
    id: str
    session_id: str | None  # None: every session
    push: Push
    # Changes held back until the subscribe answer has gone out (then replayed first).
    held: list[tuple[int, Change]] | None = field(default_factory=list)

    def wants(self, change: Change) -> bool:
        return self.session_id is None or self.session_id == change.session_id

    def deliver(self, epoch: str, seq: int, change: Change) -> None:
        if self.held is not None:
            self.held.append((seq, change))
            return
        self.push(notification(self.id, epoch, seq, change))

    def release(self, epoch: str) -> None:
        """Send what was held (the replay, then anything published meanwhile); go live."""
        held, self.held = self.held or [], None
        for seq, change in held:
            self.push(notification(self.id, epoch, seq, change))


def notification(subscription: str, epoch: str, seq: int, change: Change) -> dict[str, Any]:
    params: ChangeJson = {
        "subscription": subscription,
        "epoch": epoch,
        "seq": seq,
        "session_id": change.session_id,
        "change": change.change,
        "head": change.head,
        "status": change.status,
        "entry_ids": list(change.entry_ids) if change.entry_ids is not None else None,
        "first_sequence": change.first_sequence,
        "last_sequence": change.last_sequence,
    }
    return {"jsonrpc": "2.0", "method": "sessions/changed", "params": params}


class Hub:
    """Numbers, remembers and fans out changes. Used on the event loop only."""

    def __init__(self, history: int) -> None:
        self.epoch = new_id()
        self.seq = 0
        self._history: deque[tuple[int, Change]] = deque(maxlen=history)
        self._subscriptions: dict[str, Subscription] = {}

    def publish(self, changes: Iterable[Change]) -> None:
        for change in changes:
            self.seq += 1
            self._history.append((self.seq, change))
            for sub in list(self._subscriptions.values()):
                if sub.wants(change):
                    sub.deliver(self.epoch, self.seq, change)

    def subscribe(
        self, push: Push, session_id: str | None, since: int | None, epoch: str | None
    ) -> tuple[Subscription, SubscriptionJson]:
        """A held subscription (release it once the answer is sent) and that answer."""
        sub = Subscription(new_id(), session_id, push)
        replay: list[tuple[int, Change]] = []
        resync = False
        if since is not None:
            oldest = self._history[0][0] if self._history else self.seq + 1
            if epoch != self.epoch or since > self.seq or since < oldest - 1:
                resync = True
            else:
                replay = [(s, c) for s, c in self._history if s > since and sub.wants(c)]
        assert sub.held is not None
        sub.held.extend(replay)
        self._subscriptions[sub.id] = sub
        answer: SubscriptionJson = {
            "subscription": sub.id,
            "session_id": session_id,
            "epoch": self.epoch,
            "seq": self.seq,
            "replayed": len(replay),
            "resync": resync,
        }
        return sub, answer

    def unsubscribe(self, subscription: str, push: Push | None = None) -> bool:
        """Drop a subscription (only the client's own, when `push` is given)."""
        sub = self._subscriptions.get(subscription)
        if sub is None or (push is not None and sub.push != push):
            return False
        del self._subscriptions[subscription]
        return True

    def drop(self, push: Push) -> None:
        """Forget every subscription of a client that went away."""
        for key in [k for k, s in self._subscriptions.items() if s.push == push]:
            del self._subscriptions[key]

    def count(self) -> int:
        return len(self._subscriptions)
