"""Synthetic but valid forest data, written fast with raw executemany.

Sessions are trees: a spine (the active path, head at its end) with abandoned
side branches, payloads are realistic v2 user/assistant messages of ~200-500
bytes, ids are time-ordered like the library's, sequences are gap-free and
every session has its `sessions` and `session_heads` rows. Sessions are
written interleaved, so a long session's rows are scattered over the file as
they would be in a store that many agents write to at once.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

import harness
from sessionforest.store.sqlite.migrations import released

INSERT_ENTRY = (
    "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
    "semantic_schema_version, kind, payload, context_visibility, created_at, stamp) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_SESSION = (
    "INSERT INTO sessions(id, title, harness, cwd, created_at, status, visibility) "
    "VALUES (?, ?, ?, ?, ?, 'active', 'top-level')"
)
# An upsert: a session row already made its head row (migration session_listing).
INSERT_HEAD = (
    "INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, ?) "
    "ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id, "
    "updated_at = excluded.updated_at"
)

_PROSE = (
    "the agent ran tests on the branch and a fixture failed because the migration renamed "
    "a column so we reverted the change then retried with a smaller patch that keeps old "
    "rows readable while new writes use the typed payload please check the parser handles "
    "empty lines and unicode before we merge this into main and tag a release tomorrow "
    "sqlite index query plan latency throughput commit head branch rewind checkpoint"
)
WORDS = _PROSE.split()

_EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def text(rng: random.Random, low: int, high: int) -> str:
    target = rng.randint(low, high)
    words = " ".join(rng.choices(WORDS, k=target // 3))
    return words[:target].strip().capitalize() + "."


def user_payload(rng: random.Random, low: int = 160, high: int = 400) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text(rng, low, high)}]}


def assistant_payload(rng: random.Random) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": text(rng, 90, 300)}],
        "model": "claude-sonnet-4-5",
        "provider": "anthropic",
        "stop_reason": "end_turn",
        "usage": {"input_tokens": rng.randint(500, 90_000), "output_tokens": rng.randint(20, 900)},
    }


class Corpus:
    """Pre-serialised payload pools, so building a store costs no JSON encoding per row."""

    SIZE = 4096

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        self.turns = (
            ("user.message", [orjson.dumps(user_payload(rng)).decode() for _ in range(self.SIZE)]),
            (
                "assistant.message",
                [orjson.dumps(assistant_payload(rng)).decode() for _ in range(self.SIZE)],
            ),
        )
        self.count = 0

    def next(self, turn: int) -> tuple[str, str]:
        kind, pool = self.turns[turn & 1]
        self.count += 1
        return kind, pool[(self.count * 7919) % self.SIZE]


class Mint:
    """Time-ordered ids and RFC 3339 times on a synthetic 1 ms/entry clock.

    Ids have the length (26 characters) and ordering (millisecond prefix, then
    random bits) of `sessionforest.ids.new_id`, in hex because it is far
    cheaper to mint a million of them; index behaviour depends only on those two.
    """

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self.ms = _EPOCH_MS
        self._second = -1
        self._prefix = ""

    def id(self) -> str:
        self.ms += 1
        return f"{self.ms:012x}{self._rng.getrandbits(56):014x}"

    def now(self) -> str:
        second, milli = divmod(self.ms, 1000)
        if second != self._second:
            self._second = second
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self._prefix}.{milli:03d}Z"


@dataclass(frozen=True, slots=True)
class Shape:
    """A session: `spine` entries root to head; every `fork_every`-th spine entry
    also has an abandoned side branch of `fork_len` entries (a rewind)."""

    spine: int
    fork_every: int = 0
    fork_len: int = 0

    @property
    def total(self) -> int:
        forks = self.spine // self.fork_every if self.fork_every else 0
        return self.spine + forks * self.fork_len


@dataclass(slots=True)
class SessionRef:
    sid: str
    shape: Shape
    created_at: str = ""
    head: str | None = None
    count: int = 0
    updated_at: str = ""


def _rows(ref: SessionRef, mint: Mint, corpus: Corpus) -> Iterator[tuple[Any, ...]]:
    shape = ref.shape

    def row(parent: str | None, turn: int) -> tuple[Any, ...]:
        ref.count += 1
        kind, payload = corpus.next(turn)
        eid, now = mint.id(), mint.now()
        if ref.count == 1:
            ref.created_at = now
        ref.updated_at = now
        return (eid, ref.sid, parent, ref.count, 2, kind, payload, "context", now, None)

    tip: str | None = None
    for j in range(shape.spine):
        spine_row = row(tip, j)
        tip = ref.head = spine_row[0]
        yield spine_row
        if shape.fork_every and (j + 1) % shape.fork_every == 0:
            branch_tip = tip
            for k in range(shape.fork_len):
                side = row(branch_tip, j + 1 + k)
                branch_tip = side[0]
                yield side


def populate(
    conn: sqlite3.Connection,
    total: int,
    targets: dict[str, Shape],
    *,
    concurrent: int,
    seed: int,
) -> dict[str, SessionRef]:
    """Write exactly `total` entries in one transaction: `targets` plus filler sessions
    of a few hundred entries, with `concurrent` sessions being written at any time.
    Returns the target sessions by name."""
    rng = random.Random(seed)
    mint = Mint(seed)
    corpus = Corpus(seed)
    budget = total - sum(shape.total for shape in targets.values())
    if budget < 0:
        raise ValueError(f"targets need more than {total} entries")
    named = {name: SessionRef(mint.id(), shape) for name, shape in targets.items()}
    every = list(named.values())

    def filler() -> Iterator[tuple[Any, ...]] | None:
        nonlocal budget
        if budget <= 0:
            return None
        shape = Shape(rng.randint(160, 320), rng.randint(25, 60), rng.randint(2, 6))
        if shape.total > budget:
            shape = Shape(budget)
        budget -= shape.total
        ref = SessionRef(mint.id(), shape)
        every.append(ref)
        return _rows(ref, mint, corpus)

    def stream() -> Iterator[tuple[Any, ...]]:
        active = [_rows(ref, mint, corpus) for ref in named.values()]
        while len(active) < concurrent and (more := filler()) is not None:
            active.append(more)
        while active:
            i = rng.randrange(len(active))
            try:
                yield next(active[i])
            except StopIteration:
                replacement = filler()
                if replacement is not None:
                    active[i] = replacement
                else:
                    active[i] = active[-1]
                    active.pop()

    conn.execute("BEGIN IMMEDIATE")
    # Index once at the end with the migration's own backfill SQL instead of
    # row by row through the triggers: the same index, built in a fraction of
    # the time (these stores serve the path and skeleton reads, not search).
    # Session rows go in after their entries (their times come from them),
    # which sessions_no_adoption would refuse: it is off while the store is built.
    triggers = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
        "AND (name LIKE 'search_%' OR name = 'sessions_no_adoption')"
    ).fetchall()
    for name, _sql in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DELETE FROM search_sessions")
    conn.executemany(INSERT_ENTRY, stream())
    conn.executemany(
        INSERT_SESSION,
        [
            (r.sid, f"session {n}", "bench", "/work/project", r.created_at)
            for n, r in enumerate(every)
        ],
    )
    conn.executemany(INSERT_HEAD, [(r.sid, r.head, r.updated_at) for r in every])
    # The released session_search_index migration's backfill: what it runs between
    # creating the index and creating its triggers.
    for sql in (s for s in released("session_search_index") if not s.startswith("CREATE")):
        conn.execute(sql)
    for _name, sql in triggers:
        conn.execute(sql)
    conn.execute("COMMIT")
    return named


def build_store(
    path: Path, total: int, targets: dict[str, Shape], *, concurrent: int, seed: int
) -> dict[str, SessionRef]:
    """A fresh store at `path` (schema from Forest.open) holding `total` entries."""
    harness.fresh_store(path)
    conn = harness.raw_connect(path)
    # Build-time only: a big page cache for this connection. Timed connections
    # never see it (cache_size is per connection and not persisted).
    conn.execute("PRAGMA cache_size = -524288")
    try:
        refs = populate(conn, total, targets, concurrent=concurrent, seed=seed)
        harness.checkpoint(conn)
    finally:
        conn.close()
    return refs


# --- the shared large store (active path and skeleton workloads) -----------------------


@dataclass(frozen=True, slots=True)
class BigStore:
    path: Path
    total: int
    sessions: dict[str, SessionRef]
    build_s: float


BIG_TARGETS = {
    # Active paths exactly 1,000 and 10,000 deep, with abandoned side branches.
    "path-1k": Shape(1_000, 100, 3),
    "path-10k": Shape(10_000, 100, 3),
    # 10,400 spine + 520 side branches of 5 = 13,000 entries.
    "skeleton-13k": Shape(10_400, 20, 5),
}

_big: dict[bool, BigStore] = {}


def big_store(quick: bool) -> BigStore:
    """The 1M-entry store (200k in quick mode), built once per run and shared."""
    if quick not in _big:
        total, concurrent = (200_000, 8) if quick else (1_000_000, 32)
        path = harness.WORK / ("big-quick.db" if quick else "big.db")
        start = time.perf_counter()
        refs = build_store(path, total, BIG_TARGETS, concurrent=concurrent, seed=11)
        _big[quick] = BigStore(path, total, refs, time.perf_counter() - start)
    return _big[quick]


def drop_big_stores() -> None:
    for store in _big.values():
        harness.remove_db(store.path)
    _big.clear()
