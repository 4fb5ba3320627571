"""Entries and the tree's shape: immutable nodes, skeleton nodes, a snapshot of a tree.

Entries are frozen values. `payload` is the semantic content exactly as it was
validated (see `kinds.py` for the per-kind contracts); the controller-owned
`stamp` travels beside it and never inside it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from enum import StrEnum
from itertools import repeat
from operator import attrgetter
from typing import Any, ClassVar, NamedTuple, NotRequired, TypedDict

import msgspec
import orjson

from ..errors import TooLarge
from ..legacy import LEGACY_KINDS, upgrade
from .value import Value, derive

JsonObject = dict[str, Any]


class EntryJson(TypedDict):
    """One immutable entry as JSON (`Entry.to_json`, which reads these keys in this order).

    A TypedDict, not a Value: `Entry` is the lazy hot-path class below, and its
    documents (this, LogEntryJson) are built as dicts."""

    id: str
    session_id: str
    parent_id: str | None
    sequence: int
    kind: str
    payload: JsonObject
    context_visibility: str
    semantic_schema_version: int
    created_at: str
    stamp: JsonObject | None


class LogEntryJson(EntryJson):
    """An entry of a path, marked when its worktree stamp has diverged; a user message
    the harness wrote carries `wrapper`, its wrapper's name (wrappers.label)."""

    diverged: bool
    wrapper: NotRequired[str]


# Entry.to_json's keys, and one call that reads them all.
ENTRY_KEYS = tuple(EntryJson.__annotations__)
_entry_values = attrgetter(*ENTRY_KEYS)


class Visibility(StrEnum):
    """Whether the projector may put an entry into an agent's restored context."""

    CONTEXT = "context"  # eligible for context
    HIDDEN = "hidden"  # inspect-only: shown (collapsed) in tools, never sent to a model


class Entry:
    """One immutable node of a session's conversation tree.

    Not a dataclass: branch walks build thousands of these, so an entry just
    wraps its stored row (one slot write) and decodes the payload and stamp
    JSON, upgrading v1 payloads and legacy kinds, on first access. Attributes
    cannot be set or deleted.
    """

    # _row: (id, session_id, parent_id, sequence, semantic_schema_version,
    #        stored kind, payload JSON, context_visibility, created_at, stamp JSON)
    __slots__ = ("_payload", "_row", "_stamp")

    _row: tuple[Any, ...]
    _payload: Any  # the decoded payload, or _LAZY until first read
    _stamp: Any  # the decoded stamp, or _LAZY until first read

    def __init__(
        self,
        id: str,
        session_id: str,
        parent_id: str | None,
        sequence: int,
        kind: str,
        payload: dict[str, Any],
        context_visibility: str,
        semantic_schema_version: int,
        created_at: str,
        stamp: dict[str, Any] | None = None,
    ) -> None:
        row = (id, session_id, parent_id, sequence, semantic_schema_version, kind, None,
               context_visibility, created_at, None)  # fmt: skip
        _set_row(self, row)
        _set_payload(self, payload)
        _set_stamp(self, stamp)

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Entry:
        """Wrap a stored row; extra trailing columns (such as a depth) are ignored."""
        entry = _new(cls)
        _set_row(entry, row)
        # A marker, not an unset slot: a first read then tests it instead of
        # catching AttributeError, which costs more than the decode itself.
        _set_payload(entry, _LAZY)
        _set_stamp(entry, _LAZY)
        return entry

    @classmethod
    def from_rows(cls, rows: Sequence[tuple[Any, ...]]) -> list[Entry]:
        """`from_row` of each row, with no Python frame per row: a first read of a
        2,000-entry path builds its entries in about half the time."""
        entries = list(map(_new, repeat(cls, len(rows))))
        deque(map(_set_row, entries, rows), 0)
        deque(map(_set_payload, entries, repeat(_LAZY)), 0)
        deque(map(_set_stamp, entries, repeat(_LAZY)), 0)
        return entries

    @classmethod
    def from_decoded(
        cls,
        ids: Sequence[str],
        session_id: str,
        parents: Sequence[str | None],
        sequences: Sequence[int],
        versions: Sequence[int],
        kinds: Sequence[str],
        payloads: Sequence[Any],
        visibilities: Sequence[str],
        created: Sequence[str],
        stamps: Sequence[Any],
    ) -> list[Entry]:
        """Entries from columns whose payloads and stamps are already decoded (a path
        chunk's, store/sqlite/chunks.py; of versions read as stored): each entry takes
        its payload as given, so the caller hands over objects no one else holds. No
        Python frame per entry; the rows keep no JSON text (`stored_bytes` encodes)."""
        n = len(ids)
        rows = zip(ids, repeat(session_id, n), parents, sequences, versions, kinds,
                   repeat(None, n), visibilities, created, repeat(None, n),
                   strict=True)  # fmt: skip
        entries = list(map(_new, repeat(cls, n)))
        deque(map(_set_row, entries, rows), 0)
        deque(map(_set_payload, entries, payloads), 0)
        deque(map(_set_stamp, entries, stamps), 0)
        return entries

    @property
    def id(self) -> str:
        return self._row[0]  # type: ignore[no-any-return]

    @property
    def session_id(self) -> str:
        return self._row[1]  # type: ignore[no-any-return]

    @property
    def parent_id(self) -> str | None:
        return self._row[2]  # type: ignore[no-any-return]

    @property
    def sequence(self) -> int:
        return self._row[3]  # type: ignore[no-any-return]

    @property
    def semantic_schema_version(self) -> int:
        return self._row[4]  # type: ignore[no-any-return]

    @property
    def context_visibility(self) -> str:
        return self._row[7]  # type: ignore[no-any-return]

    @property
    def created_at(self) -> str:
        return self._row[8]  # type: ignore[no-any-return]

    @property
    def kind(self) -> str:
        stored: str = self._row[5]
        return LEGACY_KINDS.get(stored, stored)

    @property
    def payload(self) -> dict[str, Any]:
        payload = self._payload
        if payload is not _LAZY:
            return payload  # type: ignore[no-any-return]
        row = self._row
        payload = orjson.loads(row[6])
        if row[4] == 1 or row[5] in LEGACY_KINDS:
            payload = upgrade(row[5], payload, row[4])[1]
        _set_payload(self, payload)
        return payload  # type: ignore[no-any-return]

    @property
    def stamp(self) -> dict[str, Any] | None:
        stamp = self._stamp
        if stamp is not _LAZY:
            return stamp  # type: ignore[no-any-return]
        raw = self._row[9]
        stamp = orjson.loads(raw) if raw is not None else None
        _set_stamp(self, stamp)
        return stamp

    @property
    def stored_bytes(self) -> int:
        """Bytes of the payload's and stamp's JSON as stored, read without decoding them:
        a lower bound of this entry's JSON (a reader can refuse before building it)."""
        row = self._row
        payload = row[6] if row[6] is not None else orjson.dumps(self._payload)
        stamp = row[9] if row[9] is not None else (orjson.dumps(self._stamp) if self._stamp
                                                    not in (None, _LAZY) else b"")  # fmt: skip
        return len(payload) + len(stamp)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Entry is immutable: cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Entry is immutable: cannot delete {name}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Entry):
            return NotImplemented
        return self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash((self._row[1], self._row[0]))

    def __repr__(self) -> str:
        return (
            f"Entry(id={self.id!r}, session_id={self.session_id!r}, parent_id={self.parent_id!r}, "
            f"sequence={self.sequence}, kind={self.kind!r}, payload={self.payload!r})"
        )

    def to_json(self) -> EntryJson:
        """The stable JSON shape used by the CLI and the server (EntryJson's keys)."""
        return dict(zip(ENTRY_KEYS, _entry_values(self), strict=True))  # type: ignore[return-value]


# What a lazily decoded slot holds until its first read.
_LAZY: Any = object()

# Slot descriptors' __set__ bypasses Entry.__setattr__, which refuses writes.
_new = object.__new__
_set_row = Entry.__dict__["_row"].__set__
_set_payload = Entry.__dict__["_payload"].__set__
_set_stamp = Entry.__dict__["_stamp"].__set__


def refuse_past(entries: Sequence[Entry], max_bytes: int, what: str) -> None:
    """TooLarge when `entries`' stored JSON is over `max_bytes`: counted without decoding,
    so a reader refuses a huge answer before building it (about 4 copies of it, measured
    in benchmarks/bench_hostile.py)."""
    size = sum(e.stored_bytes for e in entries)
    if size > max_bytes:
        advice = "ask for less: a smaller `limit`, or page with its params"
        raise TooLarge(what, size, max_bytes, advice, at_least=True)


class Node(NamedTuple):
    """A skeleton node: the tree shape without payloads, cheap to load in bulk."""

    id: str
    parent_id: str | None
    sequence: int
    kind: str
    context_visibility: str
    semantic_schema_version: int


class Divergence(Value, frozen=True):
    """How an entry's stamp compares with the worktree now."""

    wire_name: ClassVar[str] = "DivergenceJson"

    state: str = msgspec.field(name="divergence")  # "match" | "diverged" | "unknown"
    # Derived: what differs when diverged ("head" | "dirty" | "both"), else None.
    differs: str | None = None
    head_differs: bool = False
    dirty_differs: bool = False
    reason: str = ""
    stamp: dict[str, Any] | None = None
    current: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        derive(self, "differs", self.what or None)

    @property
    def what(self) -> str:
        if self.state != "diverged":
            return ""
        if self.head_differs and self.dirty_differs:
            return "both"
        return "head" if self.head_differs else "dirty"


class CheckpointRef(Value, frozen=True):
    """A checkpoint of a snapshot: its entry and label."""

    wire_name: ClassVar[str] = "CheckpointRefJson"

    id: str
    label: str


class SnapshotNode(Value, frozen=True):
    """A node of the tree's skeleton as a snapshot shows it (no payload)."""

    wire_name: ClassVar[str] = "NodeJson"

    id: str
    parent_id: str | None
    sequence: int
    kind: str
    context_visibility: str
    active: bool  # on the active path


class Snapshot(Value, frozen=True):
    """One consistent view of a session's tree, as a UI or CLI draws it: its JSON holds
    the divergence of `selected` (its keys, flattened in)."""

    wire_name: ClassVar[str] = "SnapshotJson"
    flattened: ClassVar[tuple[str, ...]] = ("divergence",)

    session_id: str
    head: str | None
    selected: str | None
    active_path: tuple[str, ...]
    tips: tuple[str, ...]
    checkpoints: tuple[CheckpointRef, ...]
    nodes: tuple[SnapshotNode, ...]
    divergence: Divergence
