"""`ForestSession`: the OpenAI Agents SDK's `Session` protocol over a forest session.

`Runner.run(agent, input, session=ForestSession("chat-1", forest))` keeps the
conversation as a forest session of the same id. The session starts with one
hidden checkpoint, its *start* (label `openai-agents:start`); every SDK item
after it is one entry (items.py maps them to typed kinds and back). What the
SDK sees is the active path after the last start mark:

- `pop_item()` moves the head back one item; the item stays in the tree (a
  branch the next `add_items` leaves beside it);
- `clear_session()` moves the head to the start: the next items make a new,
  empty branch, and the old history stays reachable (`forest tree`);
- `branch_from(index)` / `seek(entry_id)` rerun from an earlier turn (or go
  back to any branch) by moving the head; no row is copied;
- under `OpenAIResponsesCompactionSession` the compacted items replace the
  history through the two hooks that SDK looks for on its underlying session
  (`_atomic_replace_items`, `_get_compaction_snapshot`): one transaction that
  appends the compacted items as a new branch beside what they replace, so a
  compaction is one tree, never a second copy.

A session another writer made (an imported chat) has no start mark at its
root: there `clear_session` appends a start mark below the head instead.

Every call runs the blocking store work on a worker thread
(`asyncio.to_thread`), as the SDK's own `SQLiteSession` does. The methods take
the run context as the keyword `wrapper` (the SDK then passes it); with
`scope=` a function of that context names a separate forest session per
scope (a tenant, a user), `"{session_id}.{scope}"`.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any, cast

from agents.items import TResponseInputItem
from agents.memory.session_settings import SessionSettings, coerce_session_settings
from agents.run_context import RunContextWrapper

from ... import Forest
from ...errors import HeadMoved, InvalidArgument, SessionExists, UnknownSession
from ...model import Entry
from .items import Item, to_entry, to_items

START_LABEL = "openai-agents:start"
START = {
    "label": START_LABEL,
    "summary": "An empty OpenAI Agents session: clear_session() moves the head back here.",
}
HARNESS = "openai-agents"

Wrapper = RunContextWrapper[Any] | None


def is_start(entry: Entry) -> bool:
    return entry.kind == "checkpoint" and entry.payload.get("label") == START_LABEL


class ForestSession:
    """An OpenAI Agents SDK session kept as a forest session (every branch kept)."""

    def __init__(
        self,
        session_id: str,
        forest: Forest | str | os.PathLike[str] | None = None,
        *,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        title: str = "",
        cwd: str | os.PathLike[str] | None = None,
        scope: Callable[[RunContextWrapper[Any]], str] | None = None,
    ) -> None:
        """`forest`: an open Forest (left open by `close`), or a location to open
        (None: `FOREST_DB`, else the default store; closed by `close`). `cwd` binds
        the forest session to a directory, so every item is stamped with its git state."""
        self.session_id = session_id
        self.session_settings: SessionSettings | None = (
            SessionSettings() if session_settings is None
            else coerce_session_settings(session_settings)
        )  # fmt: skip
        self._owned = not isinstance(forest, Forest)
        self.forest = forest if isinstance(forest, Forest) else Forest.open(forest)
        self._title = title
        self._cwd = cwd
        self._scope = scope
        self._ready: dict[str, str | None] = {}  # forest session id -> its root start mark
        self._lock = threading.Lock()
        self._ensure(session_id)

    # --- the Session protocol ---------------------------------------------------------

    async def get_items(
        self, limit: int | None = None, *, wrapper: Wrapper = None
    ) -> list[TResponseInputItem]:
        """The latest `limit` items (all when None and no settings limit), oldest first."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        sid = self._sid(wrapper)
        return cast(list[TResponseInputItem], await asyncio.to_thread(self._get, sid, limit))

    async def add_items(self, items: list[TResponseInputItem], *, wrapper: Wrapper = None) -> None:
        """Append the items below the head, in one transaction (all or nothing)."""
        if not items:
            return
        sid = self._sid(wrapper)
        mapped = [to_entry(cast(Item, item)) for item in items]
        await asyncio.to_thread(self.forest.append_many, sid, mapped)

    async def pop_item(self, *, wrapper: Wrapper = None) -> TResponseInputItem | None:
        """Move the head back past the most recent item and return it (it stays stored)."""
        sid = self._sid(wrapper)
        return cast(TResponseInputItem | None, await asyncio.to_thread(self._pop, sid))

    async def clear_session(self, *, wrapper: Wrapper = None) -> None:
        """Start an empty branch: the head goes back to the start; history stays."""
        await asyncio.to_thread(self._clear, self._sid(wrapper))

    # --- beyond the SDK's sessions --------------------------------------------------

    async def branch_from(self, index: int, *, wrapper: Wrapper = None) -> str:
        """Rerun from item `index` (0-based, as `get_items()` numbers them): the head
        moves to just before it, so the next items make a branch beside the rest.
        Returns the new head's entry id. Nothing is copied."""
        return await asyncio.to_thread(self._branch_from, self._sid(wrapper), index)

    async def seek(self, entry_id: str, *, wrapper: Wrapper = None) -> None:
        """Move the head to any entry of the session (an id, a prefix or a sequence)."""
        sid = self._sid(wrapper)

        def move() -> None:
            self.forest.move_head(sid, self.forest.resolve_entry(sid, entry_id))

        await asyncio.to_thread(move)

    def forest_session_id(self, wrapper: Wrapper = None) -> str:
        """The forest session the items of this run context go to."""
        return self._sid(wrapper)

    def close(self) -> None:
        """Close the store if this session opened it."""
        if self._owned:
            self.forest.close()

    # --- the hooks OpenAIResponsesCompactionSession probes --------------------------

    async def _atomic_replace_items(self, items: list[TResponseInputItem]) -> bool:
        """Replace the whole history with `items` in one transaction: a new branch
        from the start mark holding them (the old branch stays)."""
        sid = self.session_id
        mapped = [to_entry(cast(Item, item)) for item in items]

        def replace() -> bool:
            start = self._start(sid)
            if start is None:
                self.forest.append_many(sid, [("checkpoint", START, None), *mapped])
            elif mapped:
                self.forest.append_many(sid, mapped, parent=start)
            else:
                self.forest.move_head(sid, start)
            return True

        return await asyncio.to_thread(replace)

    async def _get_compaction_snapshot(
        self, limit: int, *, prune_prefix: Callable[[TResponseInputItem], bool] | None = None
    ) -> Any:
        """The last `limit` items and a `replace_suffix(start, output)` that puts
        `output` on a new branch beside items[start:], unless the head moved since.

        `prune_prefix` (expiring old items) is not applied: a forest forgets nothing."""
        from agents.memory.session import _CompactionSnapshot

        sid = self.session_id
        pairs, complete, head = await asyncio.to_thread(self._read, sid, limit)
        items = [item for _, group in pairs for item in group]
        owners = [entry for entry, group in pairs for _ in group]
        firsts = {i for i in range(len(owners)) if i == 0 or owners[i] is not owners[i - 1]}

        async def replace_suffix(start: int, output: list[TResponseInputItem]) -> bool:
            if start >= len(owners) or start not in firsts:
                return False
            parent = owners[start].parent_id
            if parent is None:
                return False
            mapped = [to_entry(cast(Item, item)) for item in output]

            def replace() -> bool:
                try:
                    if mapped:
                        self.forest.append_many(sid, mapped, parent=parent, expect_head=head)
                    else:
                        self.forest.move_head(sid, parent, expect_head=head)
                except HeadMoved:
                    return False
                return True

            return await asyncio.to_thread(replace)

        return _CompactionSnapshot(cast(list[TResponseInputItem], items), complete, replace_suffix)

    # --- the store work (worker threads) ----------------------------------------------

    def _sid(self, wrapper: Wrapper) -> str:
        if self._scope is None or wrapper is None:
            return self.session_id
        sid = f"{self.session_id}.{self._scope(wrapper)}"
        if sid not in self._ready:
            self._ensure(sid)
        return sid

    def _ensure(self, sid: str) -> None:
        """Create the forest session with its start mark, unless it exists."""
        with self._lock:
            if sid in self._ready:
                return
            try:
                self.forest.session(sid)
            except UnknownSession:
                with suppress(SessionExists):  # another process made it first
                    self.forest.create_session(self._title, HARNESS, self._cwd, session_id=sid)
            if self.forest.head(sid) is None:
                with suppress(HeadMoved):  # another writer started it first
                    self.forest.append(sid, "checkpoint", START, expect_head=None)
            root = self.forest.entries_after(sid, 0, 1)
            self._ready[sid] = root[0].id if root and is_start(root[0]) else None

    def _start(self, sid: str) -> str | None:
        """The start mark at the root of the session (None: a foreign session)."""
        if sid not in self._ready:
            self._ensure(sid)
        return self._ready[sid]

    def _read(
        self, sid: str, limit: int | None
    ) -> tuple[list[tuple[Entry, list[Item]]], bool, str | None]:
        """(entry, its items) for the last `limit` items after the last start mark,
        whether that reaches the start, and the head they were read at."""
        window = None if limit is None else max(limit, 16)
        while True:
            path = self.forest.active_path(sid, limit=window)
            head = path[-1].id if path else None
            whole = window is None or len(path) < window  # the path up to its root
            pairs: list[tuple[Entry, list[Item]]] = []
            count, stop, started = 0, -1, False
            for i in range(len(path) - 1, -1, -1):
                entry = path[i]
                if is_start(entry):
                    started = True
                    break
                group = to_items(entry.kind, entry.payload)
                if group:
                    pairs.append((entry, group))
                    count += len(group)
                if limit is not None and count >= limit:
                    stop = i
                    break
            pairs.reverse()
            if stop >= 0:  # enough items: complete when nothing but the start precedes them
                before = path[stop - 1] if stop > 0 else None
                complete = count == limit and (
                    (before is None and whole) or (before is not None and is_start(before))
                )
                return (_trim(pairs, limit) if limit is not None else pairs), complete, head
            if started or whole:
                return pairs, True, head
            window = cast(int, window) * 4

    def _get(self, sid: str, limit: int | None) -> list[Item]:
        if limit is not None and limit <= 0:
            return []
        pairs, _, _ = self._read(sid, limit)
        return [item for _, group in pairs for item in group]

    def _pop(self, sid: str) -> Item | None:
        while True:
            head = self.forest.head(sid)
            if head is None:
                return None
            entry = self.forest.entry(sid, head)
            if is_start(entry):
                return None
            group = to_items(entry.kind, entry.payload)
            try:
                if entry.parent_id is None:
                    self.forest.append(sid, "checkpoint", START, expect_head=head)
                else:
                    self.forest.move_head(sid, entry.parent_id, expect_head=head)
            except HeadMoved:
                continue  # another writer moved it: pop from where it is now
            if group:
                return group[-1]

    def _clear(self, sid: str) -> None:
        start = self._start(sid)
        if start is None:
            self.forest.append(sid, "checkpoint", START)
        else:
            self.forest.move_head(sid, start)

    def _branch_from(self, sid: str, index: int) -> str:
        pairs, _, _ = self._read(sid, None)
        position = 0
        for entry, group in pairs:
            if position == index:
                if entry.parent_id is None:
                    raise InvalidArgument("index", f"{index} is the root of {sid}")
                self.forest.move_head(sid, entry.parent_id)
                return entry.parent_id
            position += len(group)
            if position > index:
                break
        head = self.forest.head(sid)
        if position == index and head is not None:
            return head  # the end: nothing to leave behind
        raise InvalidArgument(
            "index", f"{index} does not start an item of {sid} (it has {position} items)"
        )


def _trim(pairs: list[tuple[Entry, list[Item]]], limit: int) -> list[tuple[Entry, list[Item]]]:
    """The last `limit` items (the oldest entry may give only its last items)."""
    out: list[tuple[Entry, list[Item]]] = []
    left = limit
    for entry, group in reversed(pairs):
        if left <= 0:
            break
        out.append((entry, group[-left:]))
        left -= len(group)
    out.reverse()
    return out
