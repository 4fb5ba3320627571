"""Sealed chunks of a materialised path: its entries packed for a first read.

A first read of a long path through the row fetch costs about 1.3 us an entry
in the sqlite3 module alone (an object per cell, eight cells a row), then an
orjson decode per payload. A chunk holds `entries` consecutive path entries
(depths `depth`.. up to the entry of sequence `last_sequence`) as one msgpack
body of columns: ids, parents, sequences, versions, kinds, payloads and stamps
(decoded: maps, not JSON text), visibilities, times. One body decodes in C into
what the entries hand out (benchmarks/first_read_packed.py: 2,000 entries with
every payload read in 1.9 ms against 4.4 ms by rows).

- Right for good: entries are immutable and the path to a given entry never
  changes, so a chunk keyed by its last entry needs no invalidation. No
  operation deletes or rewrites an entry (migration 0005's triggers); only
  a repair drops a session's chunks, with its materialised path.
- Chunks start at depths that are multiples of CHUNK. A load takes, from depth
  0, the longest chunk at each such depth whose last entry is the path's entry
  at its last depth (the segments say which sequence that is), until one is
  short or missing, and reads the rest as rows (paths.rows). It trusts them
  only after checking, as for rows, that each entry's parent is the one before,
  the first is a root and the sequences are the segments'; otherwise it reads
  rows.
- Sealed off the append's path: an append only notes its session; the
  maintenance thread's steps once appends pause (SEAL_STEP entries each) and a
  writer's close seal the noted sessions' paths (a search's catch-up does
  not: it needs the index only), rewriting the last short
  chunk with the entries after it. A path shorter than CHUNK is never packed
  (its rows are read fast enough), nor are entries whose payload a read
  upgrades (schema version 1, legacy kinds): a chunk ends before the first.
- The cost: each packed entry is stored twice (its row and its chunk).
"""

from __future__ import annotations

import bisect
import sqlite3
from collections.abc import Sequence
from itertools import chain as chained
from typing import Any, Final, NamedTuple

import msgspec
import orjson

from ...legacy import LEGACY_KINDS
from ...model import Entry, Problem
from ...text import plural
from .rows import ENTRY_COLUMNS

CHUNK: Final = 256  # entries per full chunk; chunks start at its multiples
SEAL_AT_LEAST: Final = 32  # entries past the chunks before a catch-up seals a path
CURRENT_VERSION: Final = 2  # the version a chunk may hold (payloads read as stored)

# (ids, parents, sequences, versions, kinds, payloads, visibilities, created_at, stamps)
Columns = tuple[list[str], list[str | None], list[int], list[int], list[str], list[Any],
                list[str], list[str], list[Any]]  # fmt: skip
_decode = msgspec.msgpack.Decoder(Columns).decode
_encode = msgspec.msgpack.Encoder().encode

METAS = (
    "SELECT depth, entries, last_sequence FROM session_path_chunks "
    "WHERE session_id = ? AND depth < ? ORDER BY depth, entries DESC"
)
BODY = "SELECT body FROM session_path_chunks WHERE session_id = ? AND last_sequence = ?"
PUT = (
    "INSERT OR REPLACE INTO session_path_chunks(session_id, last_sequence, depth, entries, body) "
    "VALUES (?, ?, ?, ?, ?)"
)
DROP = "DELETE FROM session_path_chunks WHERE session_id = ? AND last_sequence = ?"
FORGET = "DELETE FROM session_path_chunks WHERE session_id = ?"
ALL = (
    "SELECT session_id, last_sequence, depth, entries, body FROM session_path_chunks {where} "
    "ORDER BY session_id, depth, last_sequence"
)
ALL_CHUNKS = ALL.format(where="")
SESSION_CHUNKS = ALL.format(where="WHERE session_id = :sid")
ROWS_BETWEEN = (
    f"SELECT {ENTRY_COLUMNS} FROM session_entries "
    "WHERE session_id = ? AND sequence >= ? AND sequence <= ? ORDER BY sequence"
)


class Link(NamedTuple):
    """One chunk of a path: where it starts, how many entries, its last's sequence."""

    depth: int
    entries: int
    last_sequence: int


class Depths:
    """Which sequence each depth of a path holds (paths.spans' ranges, root first)."""

    def __init__(self, ranges: Sequence[tuple[int, int]]) -> None:
        self.ranges = ranges
        self.starts: list[int] = []
        depth = 0
        for low, high in ranges:
            self.starts.append(depth)
            depth += high - low + 1
        self.length = depth

    def sequence(self, depth: int) -> int:
        i = bisect.bisect_right(self.starts, depth) - 1
        return self.ranges[i][0] + depth - self.starts[i]

    def sequences(self, low: int, high: int) -> list[int]:
        """The sequences of depths low..high-1."""
        return list(chained.from_iterable(range(a, b + 1) for a, b in self.after(low)))[
            : high - low
        ]

    def after(self, low: int) -> list[tuple[int, int]]:
        """The ranges holding depths low.. (as paths.spans gives them from `low`)."""
        found = []
        for (a, b), start in zip(self.ranges, self.starts, strict=True):
            end = start + b - a + 1
            if end > low:
                found.append((a + max(0, low - start), b))
        return found

    def between(self, low: int, high: int) -> list[tuple[int, int]]:
        """The ranges holding depths low..high-1."""
        found = []
        for (a, b), start in zip(self.ranges, self.starts, strict=True):
            end = start + b - a + 1
            if end > low and start < high:
                found.append((a + max(0, low - start), b - max(0, end - high)))
        return found


def chain(conn: sqlite3.Connection | sqlite3.Cursor, session_id: str, depths: Depths) -> list[Link]:
    """The chunks that hold the path's first depths, root side first (see the docstring)."""
    found: list[Link] = []
    at = 0
    for depth, entries, last in conn.execute(METAS, (session_id, depths.length)).fetchall():
        if depth != at:
            if depth < at:
                continue  # a shorter chunk at a depth already taken
            break
        if depth + entries > depths.length or depths.sequence(depth + entries - 1) != last:
            continue  # another branch's
        found.append(Link(depth, entries, last))
        at = depth + entries
        if entries < CHUNK:
            break
    return found


def bodies(
    conn: sqlite3.Connection | sqlite3.Cursor, session_id: str, links: list[Link]
) -> list[bytes]:
    found = []
    for link in links:
        row = conn.execute(BODY, (session_id, link.last_sequence)).fetchone()
        if row is None:
            return []
        found.append(row[0])
    return found


class Packed(NamedTuple):
    """A path's first `covered` depths as chunk bodies, checked once."""

    bodies: tuple[bytes, ...]
    counts: tuple[int, ...]
    covered: int
    last_id: str
    size: int  # bytes held


def read(
    conn: sqlite3.Connection | sqlite3.Cursor, session_id: str, depths: Depths
) -> tuple[Packed, list[Entry]] | None:
    """The packed first depths of the path and their entries, if chunks hold any and
    they are to be trusted: linked entry by entry from a root, at the segments'
    sequences, of versions read as stored; None otherwise (the caller reads rows)."""
    links = chain(conn, session_id, depths)
    if not links:
        return None
    found = bodies(conn, session_id, links)
    if len(found) != len(links):
        return None
    entries: list[Entry] = []
    ids: list[str] = []
    parents: list[str | None] = []
    sequences: list[int] = []
    for body, link in zip(found, links, strict=True):
        try:
            columns = _decode(body)
        except msgspec.DecodeError:
            return None
        got, parent, seqs, versions, kinds = columns[:5]
        if len(got) != link.entries or not _readable(versions, kinds):
            return None
        ids += got
        parents += parent
        sequences += seqs
        entries += _entries(session_id, columns)
    covered = links[-1].depth + links[-1].entries
    if parents[0] is not None or parents[1:] != ids[:-1]:
        return None
    if sequences != depths.sequences(0, covered):
        return None
    size = sum(map(len, found)) + 100 * covered
    counts = tuple(link.entries for link in links)
    return Packed(tuple(found), counts, covered, ids[-1], size), entries


def entries(session_id: str, packed: Packed, low: int) -> list[Entry]:
    """Fresh entries of the packed depths `low`.. (each load decodes its own payloads)."""
    found: list[Entry] = []
    start = 0
    for body, count in zip(packed.bodies, packed.counts, strict=True):
        if start + count > low:
            columns = _decode(body)
            cut = max(0, low - start)
            if cut:
                columns = tuple(c[cut:] for c in columns)  # type: ignore[assignment]
            found += _entries(session_id, columns)
        start += count
    return found


def _readable(versions: list[int], kinds: list[str]) -> bool:
    return {CURRENT_VERSION}.issuperset(versions) and LEGACY_KINDS.keys().isdisjoint(kinds)


def _entries(session_id: str, columns: Columns) -> list[Entry]:
    ids, parents, sequences, versions, kinds, payloads, visibilities, created, stamps = columns
    return Entry.from_decoded(
        ids, session_id, parents, sequences, versions, kinds, payloads, visibilities, created,
        stamps,
    )  # fmt: skip


# --- sealing (paths.seal, inside a write transaction) ----------------------------------


def sealable(piece: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The rows of `piece` before the first whose payload a read would upgrade."""
    for i, row in enumerate(piece):
        if row[4] != CURRENT_VERSION or row[5] in LEGACY_KINDS:
            return piece[:i]
    return piece


def pack(piece: list[tuple[Any, ...]]) -> bytes | None:
    """One chunk's body of `piece` (rows in ENTRY_COLUMNS' order); None: one of its
    payloads or stamps does not decode, or does not encode as msgpack."""
    ids, _, parents, sequences, versions, kinds, payloads, visibilities, created, stamps = zip(
        *piece, strict=True
    )
    try:
        decoded = list(map(orjson.loads, payloads))
        decoded_stamps = [None if stamp is None else orjson.loads(stamp) for stamp in stamps]
        return _encode((ids, parents, sequences, versions, kinds, decoded, visibilities,
                        created, decoded_stamps))  # fmt: skip
    except (orjson.JSONDecodeError, msgspec.EncodeError, OverflowError, TypeError):
        return None


# --- check -----------------------------------------------------------------------------


def problems(conn: sqlite3.Connection, session_id: str | None = None) -> list[Problem]:
    """Each chunk that is not what the entries and their parent links say: its rows
    must be the stored entries' (every column, payloads and stamps decoded), each
    entry's parent the one before, the first a root (depth 0) or the child of the
    last entry of a full chunk one CHUNK above."""
    query, args = (ALL_CHUNKS, {}) if session_id is None else (SESSION_CHUNKS, {"sid": session_id})
    found: list[Problem] = []
    # (session, depth) -> ids of the last entries of full chunks there.
    full: dict[tuple[str, int], set[str]] = {}
    # Stepped, not fetched: one body in memory at a time.
    for sid, last, depth, count, body in conn.execute(query, args):
        problem = _chunk_problem(conn, sid, last, depth, count, body, full)
        if problem is not None:
            found.append(Problem(sid, "path-mismatch", None, f"path chunk at depth {depth} "
                                 f"(to sequence {last}): {problem}"))  # fmt: skip
    return found


def _chunk_problem(
    conn: sqlite3.Connection,
    sid: str,
    last: int,
    depth: int,
    count: int,
    body: bytes,
    full: dict[tuple[str, int], set[str]],
) -> str | None:
    try:
        columns = _decode(body)
    except msgspec.DecodeError as exc:
        return f"unreadable ({exc})"
    ids, parents, sequences, versions, kinds, payloads, visibilities, created, stamps = columns
    if depth % CHUNK or not 0 < count <= CHUNK or len(ids) != count:
        return (f"holds {plural(len(ids), 'entry', 'entries')}, claims {count}, at depth "
                f"{depth} (chunks start at multiples of {CHUNK})")  # fmt: skip
    if any(len(c) != count for c in columns) or sequences[-1] != last:
        return "its columns disagree"
    if count == CHUNK:  # the chunks below it are checked on their own
        full.setdefault((sid, depth), set()).add(ids[-1])
    stored = {r[3]: r for r in conn.execute(ROWS_BETWEEN, (sid, sequences[0], last)).fetchall()}
    for i, sequence in enumerate(sequences):
        row = stored.get(sequence)
        if row is None:
            return f"holds sequence {sequence}, which no entry of the session has"
        if (ids[i], parents[i], versions[i], kinds[i], visibilities[i], created[i]) != (
            row[0], row[2], row[4], row[5], row[7], row[8]
        ):  # fmt: skip
            return f"entry {row[0]} differs from its row"
        # Compared encoded, not by ==: 1, 1.0 and true are equal in Python, not in
        # what a read hands out.
        try:
            same = _encode(orjson.loads(row[6])) == _encode(payloads[i]) and (
                _encode(None if row[9] is None else orjson.loads(row[9])) == _encode(stamps[i])
            )
        except (orjson.JSONDecodeError, msgspec.EncodeError, OverflowError, TypeError):
            same = False
        if not same:
            return f"entry {row[0]}'s payload or stamp differs from its row"
        if i and parents[i] != ids[i - 1]:
            return f"entry {ids[i]} does not name the entry before it as its parent"
    if depth == 0:
        if parents[0] is not None:
            return f"its first entry {ids[0]} is not a root"
    elif parents[0] not in full.get((sid, depth - CHUNK), set()):
        return f"its first entry's parent is not the last of a full chunk at depth {depth - CHUNK}"
    return None
