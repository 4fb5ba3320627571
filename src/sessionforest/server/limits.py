"""The server's limits, in one place: each refusal names the limit it hit.

Numbers chosen for one user's local store: generous for real clients (a turn
of 1,000 entries, a 16 MiB tool output), small enough that one request or
connection cannot hold the server's memory or its single writer hostage.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    max_body: int = 16 * 2**20  # bytes of one HTTP body, WebSocket message or stdio line
    max_batch: int = 100  # requests in one JSON-RPC batch
    max_depth: int = 64  # nesting of arrays and objects in one request
    max_connections: int = 64  # open HTTP connections and WebSockets together
    max_websockets: int = 32  # of which WebSockets (each holds an outbox and subscriptions)
    max_inflight: int = 16  # requests one WebSocket or stdio client may have running
    max_outbox: int = 10_000  # messages queued to one client before it is cut off as too slow
    history: int = 10_000  # changes kept for `sessions/subscribe(since=...)` to replay


# Per-parameter limits live in the method definitions (methods.py), where the
# OpenRPC document publishes them: query length, page sizes, items per append.
MAX_QUERY = 1_000  # characters of a search query
MAX_PAGE = 1_000  # entries or sessions in one page
MAX_HITS = 100  # hits of one search
MAX_ITEMS = 1_000  # entries of one `sessions/append_many`
MAX_NOTIFIED_IDS = 1_000  # entry ids listed in one `sessions/changed`
MAX_PREVIEWS = 500  # entries of one `sessions/previews`


def depth_exceeds(value: object, limit: int) -> bool:
    """Whether `value` nests arrays and objects deeper than `limit` (iterative: a
    hostile request cannot exhaust the stack)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
