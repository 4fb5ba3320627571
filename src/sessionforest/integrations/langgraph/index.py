"""What a LangGraph thread's forest session holds, and the index the saver reads it by.

A thread is one forest session (`langgraph:<thread id>`), rooted in a hidden
start mark. Below the start grows the checkpoint tree:

- one `checkpoint` entry per checkpoint (label `step N`, a readable summary)
  whose `langgraph` field holds the serialised checkpoint, its metadata, and
  a blob for each channel the checkpoint wrote (`new_versions`), so
  unchanged channels are not stored again;
- below it, its pending writes (hidden `provider.notification` entries, `op:
  writes`, naming their checkpoint), one below the other: the checkpoint and
  its writes are its run, and a child checkpoint hangs below the end of its
  parent's run. A linear thread is then one line, each entry below the one
  before, so every append is below the head (the store's cheapest append),
  and a time-travel fork (a run from an old checkpoint, `update_state` on
  one) is a branch parting at the end of that checkpoint's run. A subgraph's
  first checkpoint hangs below the run of the parent graph's checkpoint that
  ran it (its metadata's `parents`);
- LangGraph's background executor may send a checkpoint's writes before the
  checkpoint itself, or after its child (about one step in six on a one-node
  graph): those hang below the thread's newest entry, and so does a
  checkpoint when only saver records follow the end of its parent's run
  (`ThreadIndex.recent` looks back 64 entries), so the line stays one line;
- the marks that make checkpoints unreachable for the saver while every entry
  stays as it was (hidden notifications too), below the thread's newest
  entry: `delete_thread` (everything before it) and `forget` (the listed
  checkpoints and their writes: `prune`, `delete_for_runs`).

Stores written before 2026-12-03 hang every write and mark on one line of its
own below the start (the saver's log) instead: reading needs no parent link,
so they read the same, and new entries follow the layout above (a write for
an old checkpoint hangs below the checkpoint).

`ThreadIndex` replays those entries in sequence order into lookups
(checkpoint by (namespace, id), writes by checkpoint, blobs by (namespace,
channel, version)) and the ends of the runs; entries are immutable, so the
index only ever reads the entries appended since it last looked.
"""

from __future__ import annotations

import base64
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ...model import Entry

PROVIDER = "langgraph"
FIELD = "langgraph"
START_LABEL = "langgraph:start"
START = {"label": START_LABEL, "summary": "A LangGraph thread (its checkpoints follow)."}

Typed = tuple[str, bytes]
Stored = list[Any]  # [type, base64 text]
CheckpointKey = tuple[str, str]  # (namespace, checkpoint id)
WriteKey = tuple[str, int]  # (task id, index)
RECENT = 64  # how many of the newest entries `ThreadIndex.recent` keeps


def pack(typed: Typed) -> Stored:
    return [typed[0], base64.b64encode(typed[1]).decode("ascii")]


def unpack(stored: Stored) -> Typed:
    return str(stored[0]), base64.b64decode(stored[1])


def is_start(entry: Entry) -> bool:
    return entry.kind == "checkpoint" and entry.payload.get("label") == START_LABEL


def mark(op: str, **fields: Any) -> tuple[str, dict[str, Any], str | None]:
    """A saver record (writes or a mark) as (kind, payload, visibility)."""
    return "provider.notification", {"provider": PROVIDER, "event": {"op": op, **fields}}, None


@dataclass(slots=True)
class Write:
    task_id: str
    channel: str
    value: Stored
    task_path: str


@dataclass(slots=True)
class ThreadIndex:
    """The saver's view of one thread, replayed from its entries."""

    session_id: str
    thread_id: str
    start: str | None = None  # the start mark's entry id
    seen: int = 0  # the last sequence replayed
    checkpoints: dict[CheckpointKey, Entry] = field(default_factory=dict)
    writes: dict[CheckpointKey, dict[WriteKey, Write]] = field(default_factory=dict)
    blobs: dict[tuple[str, str, Any], Stored | None] = field(default_factory=dict)
    # The end of the run of every checkpoint ever placed: the checkpoint or its last
    # write below it (where a child goes, even after the saver forgot it: the tree
    # keeps its shape).
    tails: dict[CheckpointKey, str] = field(default_factory=dict)
    last: str | None = None  # the newest entry (where the head is, unless moved)
    # The newest entries: each one's parent, whether it is a saver record (writes, a
    # mark) and the namespace of a saver checkpoint: how far the newest entry
    # continues a run (`_continues`).
    recent: OrderedDict[str, tuple[str | None, bool, str | None]] = field(
        default_factory=OrderedDict
    )

    def replay(self, entries: Iterable[Entry]) -> None:
        for entry in entries:
            if entry.sequence <= self.seen:
                continue
            self._apply(entry)
            self.seen = entry.sequence

    def _apply(self, entry: Entry) -> None:
        payload = entry.payload
        record = entry.kind == "provider.notification" and payload.get("provider") == PROVIDER
        data = payload.get(FIELD) if entry.kind == "checkpoint" else None
        key = (str(data["ns"]), str(data["id"])) if isinstance(data, dict) else None
        self.last = entry.id
        self.recent[entry.id] = (entry.parent_id, record, key[0] if key else None)
        if len(self.recent) > RECENT:
            self.recent.popitem(last=False)
        if entry.kind == "checkpoint":
            if is_start(entry):
                self.start = entry.id
                return
            if key is None or not isinstance(data, dict):
                return  # a checkpoint a person made: not the saver's
            self.checkpoints[key] = entry
            for channel, version, stored in data.get("blobs", ()):
                self.blobs[(key[0], channel, _version(version))] = stored
            self.tails[key] = entry.id
            return
        if not record:
            return
        event = payload.get("event") or {}
        op = event.get("op")
        if op == "writes":
            key = (str(event["ns"]), str(event["checkpoint"]))
            tail = self.tails.get(key)
            if tail is not None and self._continues(tail, entry.parent_id):
                self.tails[key] = entry.id  # (the old layout's log line does not)
            bucket = self.writes.setdefault(key, {})
            for task_id, idx, channel, value, task_path in event["writes"]:
                wkey = (str(task_id), int(idx))
                if wkey[1] >= 0 and wkey in bucket:
                    continue  # a retried put_writes: the first one stands
                bucket[wkey] = Write(str(task_id), str(channel), value, str(task_path))
        elif op == "delete_thread":
            self.checkpoints.clear()
            self.writes.clear()
            self.blobs.clear()
        elif op == "forget":
            for ns, cid in event.get("checkpoints", ()):
                key = (str(ns), str(cid))
                self.checkpoints.pop(key, None)
                self.writes.pop(key, None)

    def _continues(self, tail: str, entry: str | None, ns: str | None = None) -> bool:
        """Whether `entry` is `tail` or below it among the newest entries, with only
        saver records between (or checkpoints of namespace `ns` too)."""
        for _ in range(RECENT):
            if entry == tail:
                return True
            known = self.recent.get(entry) if entry is not None else None
            if known is None or not (known[1] or (ns is not None and known[2] == ns)):
                return False
            entry = known[0]
        return False

    # --- where the saver's next entries hang ----------------------------------------

    def below_checkpoint(self, ns: str, parent: str | None, parents: Any = None) -> str | None:
        """The entry a new checkpoint hangs below: the end of its parent's run (or
        the start), or the newest entry when only saver records (writes sent early
        or late) follow that end. A subgraph's first checkpoint (`parents`: its
        metadata's namespace -> checkpoint map of the graphs around it) hangs below
        the run of the checkpoint that ran it, or the newest entry when that one
        is not placed yet."""
        below = self.start
        if parent:
            below = self.tails.get((ns, parent)) or self.start
        elif isinstance(parents, dict) and parents:
            # The innermost enclosing graph's checkpoint (the longest namespace).
            ends = [self.tails.get((str(n), str(parents[n]))) for n in sorted(parents, key=len)]
            below = next((e for e in reversed(ends) if e is not None), self.last or self.start)
        if below is not None and self._continues(below, self.last):
            return self.last
        return below

    def below_writes(self, ns: str, cid: str) -> str | None:
        """The entry new writes of a checkpoint hang below: the newest entry when it is
        the end of the checkpoint's run or below it on the namespace's line (writes
        sent late, after the next checkpoint), or when the checkpoint is not placed
        yet (writes sent early); else the end of its run (a fork from an older
        checkpoint, a subgraph's result after the subgraph's branch)."""
        tail = self.tails.get((ns, cid))
        if tail is None or self._continues(tail, self.last, ns):
            return self.last or self.start
        return tail

    def below_mark(self) -> str | None:
        """The entry a mark hangs below: the newest entry."""
        return self.last or self.start

    def latest(self, ns: str) -> Entry | None:
        ids = [cid for (n, cid) in self.checkpoints if n == ns]
        return self.checkpoints[(ns, max(ids))] if ids else None

    def keys(self, ns: str | None = None) -> list[CheckpointKey]:
        """Every reachable checkpoint (of `ns`), newest id first."""
        found = [k for k in self.checkpoints if ns is None or k[0] == ns]
        return sorted(found, key=lambda k: k[1], reverse=True)


def _version(version: Any) -> Any:
    """A channel version as a lookup key (JSON keeps ints, floats and strings apart)."""
    return tuple(version) if isinstance(version, list) else version
