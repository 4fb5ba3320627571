"""The in-memory conversation tree: a port of yoagent 0.18's `Session` (src/session.rs).

Owns `SessionEntry`, `Session` (append, fork by seeking, checkpoints, `append_new`
reconciliation) and its JSONL form, which stays byte-compatible with files Rust writes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from sessionforest.errors import (
    DuplicateId,
    EmptySession,
    HistoryDiverged,
    InvalidPayload,
    JsonlParseError,
    UnknownCheckpoint,
    UnknownEntry,
    UnknownParent,
)
from sessionforest.jsontext import NonFinite, encode

Clock = Callable[[], int]


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(slots=True)
class SessionEntry:
    """One message in the tree. Treat as read-only: only `Session.checkpoint` sets `label`."""

    id: str
    parent_id: str | None
    message: dict[str, Any]
    timestamp: int
    label: str | None = None


class Session:
    """A tree of messages with a movable head; appending after a seek forks a branch."""

    __slots__ = ("_by_id", "_children", "_clock", "_entries", "_head", "_next_seq")

    def __init__(self, clock: Clock | None = None) -> None:
        self._entries: list[SessionEntry] = []
        self._head: str | None = None
        self._next_seq = 0
        # Rust scans `entries` for every lookup; these keep lookups O(1) on long sessions.
        self._by_id: dict[str, SessionEntry] = {}
        self._children: dict[str, list[str]] = {}
        self._clock: Clock = clock if clock is not None else _wall_clock_ms

    @classmethod
    def from_messages(
        cls, messages: Iterable[dict[str, Any]], clock: Clock | None = None
    ) -> Session:
        session = cls(clock)
        for message in messages:
            session.append(message)
        return session

    # --- building the tree ------------------------------------------------------

    def append(self, message: dict[str, Any]) -> str:
        _require_object(message)
        self._next_seq += 1
        entry = SessionEntry(
            id=f"e{self._next_seq}",
            parent_id=self._head,
            message=message,
            timestamp=self._clock(),
        )
        self._insert(entry)
        self._head = entry.id
        return entry.id

    def append_new(self, history: Sequence[dict[str, Any]]) -> int:
        """Append the messages of `history` beyond the current path; return how many.

        `history` must start with exactly the path's messages; if it does not (for
        example compaction rewrote them) nothing is appended and HistoryDiverged says
        at which index the two first differ.
        """
        path = self.path_messages()
        if len(history) < len(path):
            raise HistoryDiverged(index=len(history))
        for index, known in enumerate(path):
            if not _same_json(history[index], known):
                raise HistoryDiverged(index=index)
        fresh = history[len(path) :]
        # Validate first so a bad message cannot leave half the history appended.
        for message in fresh:
            _require_object(message)
        for message in fresh:
            self.append(message)
        return len(fresh)

    def seek(self, entry_id: str) -> None:
        if entry_id not in self._by_id:
            raise UnknownEntry(entry_id)
        self._head = entry_id

    def checkpoint(self, label: str) -> None:
        if self._head is None:
            raise EmptySession()
        self._by_id[self._head].label = label

    def seek_checkpoint(self, label: str) -> None:
        # A reverse scan, as in Rust: "latest" means last inserted, not last labelled,
        # and a label overwritten on an entry must stop matching it.
        for entry in reversed(self._entries):
            if entry.label == label:
                self._head = entry.id
                return
        raise UnknownCheckpoint(label)

    # --- reading the tree -------------------------------------------------------

    @property
    def head(self) -> str | None:
        return self._head

    def path_ids(self) -> list[str]:
        """Ids from the root to the head (empty when there is no head)."""
        ids: list[str] = []
        current = self._head
        # Iterative on purpose: chains can be far deeper than the recursion limit.
        while current is not None:
            ids.append(current)
            current = self._by_id[current].parent_id
        ids.reverse()
        return ids

    def path_messages(self) -> list[dict[str, Any]]:
        return [self._by_id[entry_id].message for entry_id in self.path_ids()]

    def entries(self) -> list[SessionEntry]:
        return list(self._entries)

    def entry(self, entry_id: str) -> SessionEntry | None:
        return self._by_id.get(entry_id)

    def children(self, entry_id: str) -> list[SessionEntry]:
        return [self._by_id[child] for child in self._children.get(entry_id, ())]

    def branch_tips(self) -> list[str]:
        return [entry.id for entry in self._entries if not self._children[entry.id]]

    def __len__(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Session):
            return NotImplemented
        return (
            self._head == other._head
            and self._next_seq == other._next_seq
            and self._entries == other._entries
        )

    def __repr__(self) -> str:
        return f"Session(entries={len(self._entries)}, head={self._head!r})"

    # --- JSONL ------------------------------------------------------------------

    def to_jsonl(self) -> str:
        """One compact JSON object per entry, joined by newlines, no trailing newline."""
        lines: list[str] = []
        for entry in self._entries:
            # Built as a dict so the key order matches serde's field order.
            record: dict[str, Any] = {
                "id": entry.id,
                "parent_id": entry.parent_id,
                "message": entry.message,
                "timestamp": entry.timestamp,
            }
            if entry.label is not None:
                record["label"] = entry.label
            lines.append(orjson.dumps(record).decode("utf-8"))
        return "\n".join(lines)

    @classmethod
    def from_jsonl(cls, text: str, clock: Clock | None = None) -> Session:
        """Rebuild a session; the head is the entry on the last non-blank line."""
        session = cls(clock)
        for number, raw in enumerate(text.split("\n"), start=1):
            line = raw.strip()
            if not line:
                continue
            entry = _parse_line(line, number)
            if entry.id in session._by_id:
                raise DuplicateId(entry.id, line=number)
            if entry.parent_id is not None and entry.parent_id not in session._by_id:
                raise UnknownParent(entry.id, entry.parent_id, line=number)
            session._insert(entry)
            session._head = entry.id
            seq = _seq_of(entry.id)
            if seq is not None and seq > session._next_seq:
                session._next_seq = seq
        return session

    def _insert(self, entry: SessionEntry) -> None:
        self._entries.append(entry)
        self._by_id[entry.id] = entry
        self._children[entry.id] = []
        if entry.parent_id is not None:
            self._children[entry.parent_id].append(entry.id)


def _require_object(message: object) -> None:
    # Rust's type system guarantees this; here it keeps to_jsonl output loadable.
    if not isinstance(message, dict):
        raise TypeError(f"a session message must be a dict, got {type(message).__name__}")
    # serde_json::Value cannot hold NaN or Infinity either; orjson would write null.
    try:
        encode(message)
    except NonFinite as exc:
        raise InvalidPayload("session message", exc.path, exc.reason) from exc
    except orjson.JSONEncodeError:
        pass  # other unencodable values surface from to_jsonl, as they always have


def _seq_of(entry_id: str) -> int | None:
    # Unbounded ints (Rust parses u64) so a fresh e<n+1> can never collide with a loaded id.
    digits = entry_id[1:]
    if entry_id.startswith("e") and digits.isascii() and digits.isdigit():
        return int(digits)
    return None


def _parse_line(line: str, number: int) -> SessionEntry:
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise JsonlParseError(number, f"invalid JSON: {exc}") from exc
    return _parse_record(record, number)


def _parse_record(record: Any, number: int) -> SessionEntry:
    """Line `number`'s parsed JSON as an entry, as serde would take it."""
    if not isinstance(record, dict):
        raise JsonlParseError(number, f"expected a JSON object, got {_json_type(record)}")

    def field(name: str, expected: str, ok: Callable[[object], bool], required: bool) -> Any:
        if name not in record:
            if required:
                raise JsonlParseError(number, f"missing field `{name}`")
            return None
        value = record[name]
        if not ok(value):
            raise JsonlParseError(
                number, f"field `{name}` must be {expected}, got {_json_type(value)}"
            )
        return value

    def is_str(v: object) -> bool:
        return isinstance(v, str)

    def is_opt_str(v: object) -> bool:
        return v is None or isinstance(v, str)

    def is_u64(v: object) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**64

    # serde treats an absent Option field as None, so parent_id and label may be missing.
    return SessionEntry(
        id=field("id", "a string", is_str, True),
        parent_id=field("parent_id", "a string or null", is_opt_str, False),
        message=field("message", "a JSON object", lambda v: isinstance(v, dict), True),
        timestamp=field("timestamp", "a non-negative integer", is_u64, True),
        label=field("label", "a string or null", is_opt_str, False),
    )


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def _same_json(a: object, b: object) -> bool:
    """JSON equality as serde_json's Value sees it: true != 1 and 1 != 1.0, unlike Python's ==.

    Iterative so deeply nested messages cannot exhaust the recursion limit.
    """
    stack: list[tuple[object, object]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        kind = _json_type(x)
        if kind != _json_type(y):
            return False
        if kind == "number" and isinstance(x, int) != isinstance(y, int):
            return False
        if isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif x != y:
            return False
    return True
