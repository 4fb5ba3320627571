"""What a LangGraph thread's forest session holds, and the index the saver reads it by.

A thread is one forest session (`langgraph:<thread id>`), rooted in a hidden
start mark. Below the start grow two things:

- the checkpoint tree: one `checkpoint` entry per checkpoint (label `step
  N`, a readable summary) whose `langgraph` field holds the serialised
  checkpoint, its metadata, and a blob for each channel the checkpoint wrote
  (`new_versions`), so unchanged channels are not stored again. Its parent
  entry is its parent checkpoint's, so a time-travel fork (a run from an old
  checkpoint, `update_state` on one) is a branch of the tree;
- the saver's log, one line of hidden `provider.notification` entries:
  pending writes (`op: writes`, naming their checkpoint; LangGraph may send
  a checkpoint's writes before the checkpoint itself, so they cannot hang
  below it) and the marks that make checkpoints unreachable for the saver
  while every entry stays as it was: `delete_thread` (everything before it)
  and `forget` (the listed checkpoints and their writes: `prune`,
  `delete_for_runs`).

`ThreadIndex` replays those entries in sequence order into lookups
(checkpoint by (namespace, id), writes by checkpoint, blobs by (namespace,
channel, version)); entries are immutable, so the index only ever reads the
entries appended since it last looked.
"""

from __future__ import annotations

import base64
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
    # The entry of every checkpoint ever placed (a child's parent entry, even after
    # the saver forgot it: the tree keeps its shape).
    placed: dict[CheckpointKey, str] = field(default_factory=dict)
    log: str | None = None  # the last entry of the saver's log

    def replay(self, entries: Iterable[Entry]) -> None:
        for entry in entries:
            if entry.sequence <= self.seen:
                continue
            self._apply(entry)
            self.seen = entry.sequence

    def _apply(self, entry: Entry) -> None:
        payload = entry.payload
        if entry.kind == "checkpoint":
            if is_start(entry):
                self.start = entry.id
                return
            data = payload.get(FIELD)
            if not isinstance(data, dict):
                return  # a checkpoint a person made: not the saver's
            key = (str(data["ns"]), str(data["id"]))
            self.checkpoints[key] = entry
            for channel, version, stored in data.get("blobs", ()):
                self.blobs[(key[0], channel, _version(version))] = stored
            self.placed[key] = entry.id
            return
        if entry.kind != "provider.notification" or payload.get("provider") != PROVIDER:
            return
        self.log = entry.id
        event = payload.get("event") or {}
        op = event.get("op")
        if op == "writes":
            key = (str(event["ns"]), str(event["checkpoint"]))
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
