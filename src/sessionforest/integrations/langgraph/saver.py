"""`ForestSaver`: a LangGraph checkpointer keeping each thread as a forest session.

    saver = ForestSaver("forest.db")            # or ForestSaver(forest), or a postgresql:// URL
    graph = builder.compile(checkpointer=saver)
    graph.invoke(inputs, {"configurable": {"thread_id": "t1"}})

One forest session per thread (index.py says what its entries are). Every
method has its async twin (`aget_tuple`, `alist`, `aput`, ...: the store work
on a worker thread), so `graph.ainvoke` works with the same saver;
`AsyncForestSaver.from_conn_string` is the async-context form.

Deleting: entries are immutable, so `delete_thread`, `prune` and
`delete_for_runs` append a mark the saver honours (index.py): what they name
is gone for every saver and graph, while `forest log`/`tree` still show the
entries and the forest's own history keeps them. A deleted thread starts
again empty below its start mark. `copy_thread` appends the source's
reachable checkpoints and writes to the target thread, oldest first, keeping
their ids.

Reads: each saver keeps an index of the threads it touched (at most
`MAX_THREADS`, least recently used dropped), catching up with entries other
processes appended (one query) before every read or write.
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from ... import Forest
from ...errors import HeadMoved, SessionExists, UnknownSession
from ...ids import id_problem
from ...model import Entry
from .index import FIELD, START, ThreadIndex, mark, pack, unpack

HARNESS = "langgraph"
PREFIX = "langgraph:"
HASHED = "langgraph:sha256:"
MAX_THREADS = 256
PAGE = 1000


def session_id_for(thread_id: str) -> str:
    """The forest session of a thread: `langgraph:<thread id>` (hashed when that is
    not a valid id: whitespace, control characters, over 128 characters)."""
    sid = PREFIX + thread_id
    if id_problem(sid) is None and not sid.startswith(HASHED):
        return sid
    return HASHED + hashlib.sha256(thread_id.encode()).hexdigest()[:48]


class ForestSaver(BaseCheckpointSaver[int]):
    """LangGraph checkpoints, pending writes and forks as forest sessions."""

    def __init__(
        self,
        forest: Forest | str | os.PathLike[str] | None = None,
        *,
        serde: SerializerProtocol | None = None,
    ) -> None:
        """`forest`: an open Forest (left open by `close`), or a location to open
        (None: `FOREST_DB`, else the default store; closed by `close`)."""
        super().__init__(serde=serde)
        self._owned = not isinstance(forest, Forest)
        self.forest = forest if isinstance(forest, Forest) else Forest.open(forest)
        self._threads: OrderedDict[str, ThreadIndex] = OrderedDict()
        self._lock = threading.RLock()

    @classmethod
    @contextmanager
    def from_conn_string(cls, location: str) -> Iterator[ForestSaver]:
        """A saver over the store at `location`, closed at the end of the block."""
        saver = cls(location)
        try:
            yield saver
        finally:
            saver.close()

    def close(self) -> None:
        if self._owned:
            self.forest.close()

    # --- reading -------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        conf = config["configurable"]
        thread_id = str(conf["thread_id"])
        ns = str(conf.get("checkpoint_ns", ""))
        with self._lock:
            index = self._index(thread_id, create=False)
            if index is None:
                return None
            cid = get_checkpoint_id(config)
            entry = index.checkpoints.get((ns, cid)) if cid else index.latest(ns)
            if entry is None:
                return None
            return self._tuple(index, entry)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        conf = config["configurable"] if config else {}
        ns = conf.get("checkpoint_ns")
        only = get_checkpoint_id(config) if config else None
        bound = get_checkpoint_id(before) if before else None
        threads = [str(conf["thread_id"])] if config is not None else self._all_threads()
        left = limit
        for thread_id in threads:
            with self._lock:
                index = self._index(thread_id, create=False)
                if index is None:
                    continue
                found: list[CheckpointTuple] = []
                for key in index.keys(ns):
                    if (only and key[1] != only) or (bound and key[1] >= bound):
                        continue
                    entry = index.checkpoints[key]
                    metadata = self._metadata(entry)
                    if filter and not all(metadata.get(k) == v for k, v in filter.items()):
                        continue
                    if left is not None and left <= 0:
                        break
                    if left is not None:
                        left -= 1
                    found.append(self._tuple(index, entry, metadata))
            yield from found
            if left is not None and left <= 0:
                return

    # --- writing -------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        conf = config["configurable"]
        thread_id = str(conf["thread_id"])
        ns = str(conf.get("checkpoint_ns", ""))
        parent_id = conf.get("checkpoint_id")
        body = dict(checkpoint)
        values: dict[str, Any] = body.pop("channel_values")  # type: ignore[assignment]
        blobs = [
            [channel, version, pack(self.serde.dumps_typed(values[channel]))
             if channel in values else None]
            for channel, version in new_versions.items()
        ]  # fmt: skip
        merged = get_checkpoint_metadata(config, metadata)
        data = {
            "thread": thread_id,
            "ns": ns,
            "id": checkpoint["id"],
            "parent": parent_id,
            "checkpoint": pack(self.serde.dumps_typed(body)),
            "metadata": pack(self.serde.dumps_typed(merged)),
            "blobs": blobs,
        }
        step = merged.get("step", "?")
        payload = {
            "label": f"step {step}",
            "summary": _summary(checkpoint["id"], dict(merged), new_versions, values),
            FIELD: data,
        }
        with self._lock:
            index = cast(ThreadIndex, self._index(thread_id, create=True))
            below = index.below_checkpoint(ns, parent_id, merged.get("parents"))
            self._append(index, "checkpoint", payload, None, below)
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                                 "checkpoint_id": checkpoint["id"]}}  # fmt: skip

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        conf = config["configurable"]
        thread_id = str(conf["thread_id"])
        ns = str(conf.get("checkpoint_ns", ""))
        cid = str(conf["checkpoint_id"])
        with self._lock:
            index = cast(ThreadIndex, self._index(thread_id, create=True))
            have = index.writes.get((ns, cid), {})
            rows = []
            for i, (channel, value) in enumerate(writes):
                idx = WRITES_IDX_MAP.get(channel, i)
                if idx >= 0 and (task_id, idx) in have:
                    continue  # already stored: put_writes is retried as a whole
                rows.append([task_id, idx, channel, pack(self.serde.dumps_typed(value)),
                             task_path])  # fmt: skip
            if not rows:
                return
            self._record(index, mark("writes", ns=ns, checkpoint=cid, writes=rows), ns, cid)

    def delete_thread(self, thread_id: str) -> None:
        """Make every checkpoint and write of the thread unreachable (entries stay)."""
        with self._lock:
            index = self._index(str(thread_id), create=False)
            if index is None or not (index.checkpoints or index.writes):
                return
            self._record(index, mark("delete_thread"))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Make the checkpoints of these runs (and their writes) unreachable, in every
        thread. Reads the metadata of every thread this store holds: a rare, whole-store
        operation."""
        runs = {str(r) for r in run_ids}
        if not runs:
            return
        for thread_id in self._all_threads():
            with self._lock:
                index = self._index(thread_id, create=False)
                if index is None:
                    continue
                doomed = [key for key, entry in index.checkpoints.items()
                          if str(self._metadata(entry).get("run_id")) in runs]  # fmt: skip
                self._forget(index, doomed)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """`keep_latest`: only each namespace's newest checkpoint (with its writes and
        every blob it reads) stays reachable; `delete`: none does."""
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}")
        for thread_id in thread_ids:
            with self._lock:
                index = self._index(str(thread_id), create=False)
                if index is None:
                    continue
                keep = set()
                if strategy == "keep_latest":
                    for ns in {k[0] for k in index.checkpoints}:
                        keep.add(index.keys(ns)[0])
                self._forget(index, [k for k in index.checkpoints if k not in keep])

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Append the source's reachable checkpoints and writes to the target, oldest
        first, with their ids (the target's tree has the same shape)."""
        with self._lock:
            source = self._index(str(source_thread_id), create=False)
            if source is None or not source.checkpoints:
                return
            target = cast(ThreadIndex, self._index(str(target_thread_id), create=True))
            order = sorted(source.checkpoints.items(), key=lambda kv: kv[1].sequence)
            for (ns, cid), entry in order:
                payload = dict(entry.payload)
                payload[FIELD] = {**payload[FIELD], "thread": target.thread_id}
                parents = self._metadata(entry).get("parents")
                below = target.below_checkpoint(ns, payload[FIELD].get("parent"), parents)
                self._append(target, "checkpoint", payload, None, below)
                writes = source.writes.get((ns, cid))
                if writes:
                    rows = [[w.task_id, idx, w.channel, w.value, w.task_path]
                            for (_, idx), w in writes.items()]  # fmt: skip
                    record = mark("writes", ns=ns, checkpoint=cid, writes=rows)
                    self._record(target, record, ns, cid)

    # --- the async twins (the store work on a worker thread) -----------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(lambda: self.prune(thread_ids, strategy=strategy))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    # --- the index -------------------------------------------------------------------

    def _index(self, thread_id: str, *, create: bool) -> ThreadIndex | None:
        """The thread's index, caught up with the store (None: no such thread and
        `create` is false)."""
        index = self._threads.get(thread_id)
        if index is None:
            sid = session_id_for(thread_id)
            try:
                self.forest.session(sid)
            except UnknownSession:
                if not create:
                    return None
                with suppress(SessionExists):  # another process made it first
                    self.forest.create_session(thread_id[:200], HARNESS, session_id=sid)
            if self.forest.head(sid) is None:
                with suppress(HeadMoved):  # another writer started it first
                    self.forest.append(sid, "checkpoint", START, expect_head=None)
            index = ThreadIndex(sid, thread_id)
            self._threads[thread_id] = index
            if len(self._threads) > MAX_THREADS:
                self._threads.popitem(last=False)
        self._threads.move_to_end(thread_id)
        self._catch_up(index)
        return index

    def _catch_up(self, index: ThreadIndex) -> None:
        while True:
            page = self.forest.entries_after(index.session_id, index.seen, PAGE)
            index.replay(page)
            if len(page) < PAGE:
                return

    def _append(
        self,
        index: ThreadIndex,
        kind: str,
        payload: dict[str, Any],
        visibility: str | None,
        parent: str | None,
    ) -> Entry:
        entry = self.forest.append(index.session_id, kind, payload, parent, visibility)
        if entry.sequence == index.seen + 1:
            index.replay([entry])
        else:
            self._catch_up(index)  # another writer appended meanwhile: replay in order
        return entry

    def _record(
        self,
        index: ThreadIndex,
        record: tuple[str, dict[str, Any], str | None],
        ns: str | None = None,
        cid: str | None = None,
    ) -> None:
        """Append a saver record: writes (of checkpoint `cid` in `ns`) below the end of
        their checkpoint's run, a mark below the thread's newest entry (index.py)."""
        kind, payload, visibility = record
        below = index.below_mark() if cid is None else index.below_writes(str(ns), cid)
        self._append(index, kind, payload, visibility, below)

    def _forget(self, index: ThreadIndex, keys: Sequence[tuple[str, str]]) -> None:
        if keys:
            self._record(index, mark("forget", checkpoints=[list(k) for k in keys]))

    def _all_threads(self) -> builtins.list[str]:
        """Every thread this store holds (its sessions with the langgraph harness)."""
        threads = []
        for info in self.forest.sessions():
            if info.harness != HARNESS or not info.id.startswith(PREFIX):
                continue
            if not info.id.startswith(HASHED):
                threads.append(info.id[len(PREFIX) :])
                continue
            for entry in self.forest.entries_after(info.id, 0, 8):  # a long id: ask an entry
                data = entry.payload.get(FIELD)
                if isinstance(data, dict):
                    threads.append(str(data["thread"]))
                    break
        return threads

    def _metadata(self, entry: Entry) -> dict[str, Any]:
        return cast(
            dict[str, Any], self.serde.loads_typed(unpack(entry.payload[FIELD]["metadata"]))
        )

    def _tuple(
        self, index: ThreadIndex, entry: Entry, metadata: dict[str, Any] | None = None
    ) -> CheckpointTuple:
        data = entry.payload[FIELD]
        ns, cid, parent = str(data["ns"]), str(data["id"]), data.get("parent")
        checkpoint = cast(dict[str, Any], self.serde.loads_typed(unpack(data["checkpoint"])))
        values = {}
        for channel, version in checkpoint.get("channel_versions", {}).items():
            stored = index.blobs.get((ns, channel, version))
            if stored is not None:
                values[channel] = self.serde.loads_typed(unpack(stored))
        checkpoint["channel_values"] = values
        writes = sorted(
            index.writes.get((ns, cid), {}).items(),
            key=lambda kv: writes_sort_key(kv[1].task_path, *kv[0]),
        )
        where = {"thread_id": index.thread_id, "checkpoint_ns": ns}
        return CheckpointTuple(
            config={"configurable": {**where, "checkpoint_id": cid}},
            checkpoint=cast(Checkpoint, checkpoint),
            metadata=cast(CheckpointMetadata, metadata or self._metadata(entry)),
            parent_config=(
                {"configurable": {**where, "checkpoint_id": parent}} if parent else None
            ),
            pending_writes=[
                (w.task_id, w.channel, self.serde.loads_typed(unpack(w.value))) for _, w in writes
            ],
        )


class AsyncForestSaver(ForestSaver):
    """The same saver, opened as an async context (`async with ...from_conn_string(...)`)."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, location: str) -> AsyncIterator[AsyncForestSaver]:  # type: ignore[override]
        saver = await asyncio.to_thread(cls, location)
        try:
            yield saver
        finally:
            await asyncio.to_thread(saver.close)


def _summary(
    cid: str, metadata: dict[str, Any], versions: ChannelVersions, values: dict[str, Any]
) -> str:
    """What a person reads in `forest log`: the step, what it wrote, the last message."""
    parts = [f"LangGraph checkpoint {cid} (step {metadata.get('step', '?')}, "
             f"{metadata.get('source', 'unknown')})"]  # fmt: skip
    if versions:
        parts.append("wrote " + ", ".join(sorted(map(str, versions))))
    messages = values.get("messages")
    if isinstance(messages, list) and messages:
        content = getattr(messages[-1], "content", messages[-1])
        if isinstance(content, str) and content.strip():
            parts.append(content.strip()[:300])
    return "; ".join(parts)
