"""The change feed: `sessions/changed` for every write this server committed, in order.

Every write runs on the server's one writer thread (app.py), which hands each
committed change to `Hub.publish` on the event loop in commit order; the hub
numbers them (`seq`, from 1, no gaps, per server run `epoch`), keeps the last
`history` for replay (and no more than `history_bytes` of them: a change lists
up to 1,000 entry ids) and pushes each to the subscriptions that want it.

Fan-out is off the event loop: `publish` only numbers and remembers, then one
fan-out thread serialises each change once and splices in each subscription's
id, and hands each connection its notifications in one call on the loop,
where they are queued in order (a subscription still held back for its
subscribe answer keeps them for its replay). A connection holds at most
`per_client` subscriptions (`max_subscriptions`): before both, 31 sockets with
9,900 subscriptions each froze the loop for 5.5 s on every append.

Catch-up after a reconnect: subscribe with `since` = the last `seq` seen and
the `epoch` it came with. Same epoch and still in history: the missed changes
are replayed before any new one (none lost, none twice). Otherwise the answer
says `resync`; per session, `sessions/entries(after_sequence=...)` reads
exactly the entries missed, since entry sequences are durable.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import InvalidArgument
from ..ids import new_id
from ..model import Entry, ImportReport
from ..wire import ChangeJson, SubscriptionJson
from .limits import MAX_NOTIFIED_IDS

if TYPE_CHECKING:
    from ..forest import Forest

# A notification for one client: a document, or one already serialised (the fan-out's).
Push = Callable[[Any], None]
HISTORY_BYTES = 16 * 2**20  # Limits.history_bytes
PER_CLIENT = 64  # Limits.max_subscriptions


@dataclass(frozen=True, slots=True)
class Change:
    """One committed change, as the writer thread saw it."""

    session_id: str
    change: str  # created | appended | head_moved | status | imported | renamed
    head: str | None
    status: str
    entry_ids: tuple[str, ...] | None = ()
    first_sequence: int | None = None
    last_sequence: int | None = None
    # A rename's new title: not sent (read it with sessions/get), but remembered
    # (watcher.OwnCommits) so the watcher does not announce this server's rename again.
    title: str | None = None


def appended(entries: Sequence[Entry], status: str) -> Change:
    """The change one commit of `entries` (one chain of one session, in order) made:
    the head is the last of them, their ids and sequence range are listed."""
    first, last = entries[0], entries[-1]
    ids = tuple(e.id for e in entries)
    return Change(first.session_id, "appended", last.id, status, ids, first.sequence, last.sequence)


def imported(forest: Forest, report: ImportReport) -> list[Change]:
    """The changes an import made (sessions/import, the file mirror): one per chat it
    created or added to, naming the entries added (up to MAX_NOTIFIED_IDS of them;
    None past that: read them by sequence) and the chat's status as it is now."""
    found = []
    for chat in report.chats:
        if not (chat.created or chat.added):
            continue
        first = chat.entries - chat.added + 1 if chat.added else None
        last = chat.entries if chat.added else None
        ids: tuple[str, ...] | None = ()
        if chat.added and chat.added <= MAX_NOTIFIED_IDS:
            page = forest.entries_after(chat.session_id, chat.entries - chat.added, chat.added)
            ids = tuple(e.id for e in page)
        elif chat.added:
            ids = None
        status = forest.session(chat.session_id).status
        found.append(Change(chat.session_id, "imported", chat.head, status, ids, first, last))
    return found


@dataclass(slots=True)
class Subscription:
    id: str
    session_id: str | None  # None: every session
    push: Push
    # Changes held back until the subscribe answer has gone out (then replayed first).
    held: list[tuple[int, Change]] | None = field(default_factory=list)

    def wants(self, change: Change) -> bool:
        return self.session_id is None or self.session_id == change.session_id

    def release(self, epoch: str) -> None:
        """Send what was held (the replay, then anything published meanwhile); go live."""
        held, self.held = self.held or [], None
        for seq, change in held:
            self.push(notification(self.id, epoch, seq, change))


def _size(change: Change) -> int:
    """About what a remembered change holds in memory, in bytes."""
    return 256 + 80 * len(change.entry_ids or ())


def _spliced(epoch: str, seq: int, change: Change) -> tuple[bytes, bytes]:
    """The notification serialised once, in two parts around the subscription id."""
    params = notification("", epoch, seq, change)["params"]
    del params["subscription"]
    rest = orjson.dumps(params)[1:]  # without its opening brace
    head = b'{"jsonrpc":"2.0","method":"sessions/changed","params":{"subscription":"'
    return head, b'",' + rest + b"}"


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
    """Numbers, remembers and fans out changes. Used on the event loop, except for the
    fan-out thread's serialising (see the module docstring)."""

    def __init__(
        self, history: int, *, history_bytes: int = HISTORY_BYTES, per_client: int = PER_CLIENT
    ) -> None:
        self.epoch = new_id()
        self.seq = 0
        self._history: deque[tuple[int, Change]] = deque(maxlen=history)
        self._history_limit = history_bytes
        self.history_bytes = 0
        self.per_client = per_client
        self._subscriptions: dict[str, Subscription] = {}
        self._fanout: queue.SimpleQueue[Any] | None = None

    def publish(self, changes: Iterable[Change]) -> None:
        batch = []
        for change in changes:
            self.seq += 1
            self._remember(self.seq, change)
            batch.append((self.seq, change))
        subs = list(self._subscriptions.values())
        if not subs or not batch:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on a loop (a test, a tool): fan out here
            self._deliver(_fan_out(self.epoch, batch, subs))
            return
        if self._fanout is None:
            self._fanout = queue.SimpleQueue()
            threading.Thread(
                target=self._fan_out_forever, args=(self._fanout,), name="forest-fanout",
                daemon=True,
            ).start()  # fmt: skip
        self._fanout.put((loop, self.epoch, batch, subs))

    def _remember(self, seq: int, change: Change) -> None:
        if len(self._history) == self._history.maxlen and self._history:
            self.history_bytes -= _size(self._history[0][1])
        self._history.append((seq, change))
        self.history_bytes += _size(change)
        while self.history_bytes > self._history_limit and len(self._history) > 1:
            self.history_bytes -= _size(self._history.popleft()[1])

    def _fan_out_forever(self, jobs: queue.SimpleQueue[Any]) -> None:
        while True:
            loop, epoch, batch, subs = jobs.get()
            out = _fan_out(epoch, batch, subs)
            try:
                loop.call_soon_threadsafe(self._deliver, out)
            except RuntimeError:
                return  # the loop is closed: the server is gone

    def _deliver(self, out: dict[Push, list[tuple[Subscription, int, Change, bytes]]]) -> None:
        """On the loop: each connection's notifications, in order (held ones kept)."""
        for push, items in out.items():
            for sub, seq, change, data in items:
                if self._subscriptions.get(sub.id) is not sub:
                    continue  # unsubscribed (or its client left) meanwhile
                if sub.held is not None:
                    sub.held.append((seq, change))
                else:
                    push(orjson.Fragment(data))

    def subscribe(
        self, push: Push, session_id: str | None, since: int | None, epoch: str | None
    ) -> tuple[Subscription, SubscriptionJson]:
        """A held subscription (release it once the answer is sent) and that answer."""
        if sum(1 for s in self._subscriptions.values() if s.push == push) >= self.per_client:
            raise InvalidArgument(
                "subscription",
                f"this connection already has {self.per_client} subscriptions; unsubscribe "
                "one, or subscribe once to every session (no session_id)",
            )
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


def _fan_out(
    epoch: str, batch: list[tuple[int, Change]], subs: list[Subscription]
) -> dict[Push, list[tuple[Subscription, int, Change, bytes]]]:
    """Each connection's notifications for `batch`: serialised once per change."""
    out: dict[Push, list[tuple[Subscription, int, Change, bytes]]] = {}
    for seq, change in batch:
        head, tail = b"", b""
        for sub in subs:
            if not sub.wants(change):
                continue
            if not head:
                head, tail = _spliced(epoch, seq, change)
            data = head + sub.id.encode() + tail
            out.setdefault(sub.push, []).append((sub, seq, change, data))
    return out
