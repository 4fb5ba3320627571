"""The server's limits, in one place: each refusal names the limit it hit.

Numbers chosen for one user's local store: generous for real clients (a turn
of 1,000 entries, a 16 MiB tool output), small enough that one request or
connection cannot hold the server's memory or its single writer hostage. Every
one is listed in docs/api.md ("Security and limits").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    max_body: int = 16 * 2**20  # bytes of one HTTP body, WebSocket message or stdio line
    max_batch: int = 100  # requests in one JSON-RPC batch
    max_depth: int = 64  # nesting of arrays and objects in one request
    # Open TCP connections (HTTP and WebSocket). At the cap a new one evicts the
    # oldest that is doing nothing (no request yet, idle between requests, a
    # WebSocket not yet authenticated); only when all are busy is it refused (503).
    max_connections: int = 256
    max_websockets: int = 32  # authenticated WebSockets (each holds an outbox, subscriptions)
    max_inflight: int = 16  # requests one WebSocket or stdio client may have running
    max_outbox: int = 10_000  # messages queued to one client before it is cut off as too slow
    history: int = 10_000  # changes kept for `sessions/subscribe(since=...)` to replay
    history_bytes: int = 16 * 2**20  # ... and the bytes they may hold (entry ids listed)
    # Deadlines of a connection that has not earned its keep yet (seconds).
    header_timeout: float = 10.0  # a request's headers, from connect or the last response
    keep_alive: float = 5.0  # idle between two requests of one HTTP connection
    auth_timeout: float = 10.0  # a WebSocket's first message when it must carry the token
    max_header_bytes: int = 64 * 2**10  # bytes a request may send before its headers end
    # Answers: one response, and a whole batch's answers together.
    max_response: int = 64 * 2**20
    max_batch_response: int = 64 * 2**20
    max_subscriptions: int = 64  # live `sessions/subscribe`s of one connection
    # How long a stop waits for running requests before it ends the process anyway.
    shutdown_grace: float = 10.0
    # A stamp (git status plus hashing the dirty files) that takes longer records
    # "unknown" with the reason instead of holding up the append (gitstamp.STAMP_SECONDS).
    stamp_seconds: float = 5.0
    # A search (find or recall) still running after this long stops (SearchStopped,
    # -32004), as does one whose client went away: no reader thread stays pinned.
    search_seconds: float = 30.0


# Per-parameter limits live in the method definitions (methods.py), where the
# OpenRPC document publishes them: query length, page sizes, items per append.
MAX_QUERY = 1_000  # characters of a search query
MAX_PAGE = 1_000  # entries or sessions in one page
MAX_HITS = 100  # hits of one search
MAX_ITEMS = 1_000  # entries of one `sessions/append_many`
MAX_NOTIFIED_IDS = 1_000  # entry ids listed in one `sessions/changed`
MAX_PREVIEWS = 500  # entries of one `sessions/previews`
MAX_COUNTED = 200  # chats of one `sessions/counts` (a screenful of the list, many times over)
MAX_INT = 2**63 - 1  # any integer param: what the stores' 64-bit columns hold
LOG_DEFAULT = 1_000  # entries `sessions/log` returns when no `limit` is given


def may_nest(raw: bytes | str, limit: int) -> bool:
    """Whether the JSON text `raw` could nest deeper than `limit`: each level opens a
    bracket, so a text with at most `limit` of them cannot (brackets in strings only
    make this say yes more often). Most requests are answered here, in C."""
    if isinstance(raw, str):
        return raw.count("[") + raw.count("{") > limit
    return raw.count(b"[") + raw.count(b"{") > limit


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
