"""Caches bounded in bytes: what a store keeps in memory beside what it stores.

Every in-memory cache of derived state (a store's remembered append states
and paths, the semantic leg's embedded texts) is a `Budgeted` map: least
recently used out once the sizes of what it holds pass its budget. A size is
counted by the caller (`size` of a value), so a cached path holding a 60 MB
payload counts as 60 MB, not as one row; a value larger than the whole
budget is not kept at all.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

# What a cached row costs beyond its strings' characters: the tuple, the int
# objects, the str headers (CPython: ~50 bytes a str, ~28 an int, 56 + 8 a slot).
ROW_OVERHEAD = 200
MiB = 1 << 20


def row_bytes(row: Iterable[Any]) -> int:
    """About what one cached row of strings, numbers and None holds in memory."""
    size = ROW_OVERHEAD
    for value in row:
        if isinstance(value, str | bytes):
            size += len(value)
    return size


def text_bytes(text: str | bytes) -> int:
    """About what one cached string holds (its characters plus its header)."""
    return len(text) + sys.getsizeof("")


class Budgeted(Generic[K, V]):
    """A map of at most `budget` bytes (as `size` counts each value), least recently
    used out first; safe to share between threads."""

    def __init__(self, budget: int, size: Callable[[V], int]) -> None:
        self.budget = budget
        self._size = size
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self.used = 0  # bytes held
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K) -> V | None:
        """The value kept under `key` (now the most recently used), or None."""
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            self._items.move_to_end(key)
            return found[0]

    def peek(self, key: K) -> V | None:
        """The value kept under `key`, leaving the order as it is."""
        found = self._items.get(key)
        return None if found is None else found[0]

    def put(self, key: K, value: V) -> None:
        """Keep `value` under `key` (a value larger than the budget is not kept, and
        drops what `key` held), then drop the least recently used past the budget."""
        size = self._size(value)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.used -= old[1]
            if size > self.budget:
                return
            self._items[key] = (value, size)
            self.used += size
            while self.used > self.budget:
                _, (_, dropped) = self._items.popitem(last=False)
                self.used -= dropped

    def pop(self, key: K) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.used -= old[1]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.used = 0
