"""What conformance tests need beyond the public `Forest` API, in backend-neutral terms.

A backend subclasses `Harness` and implements its abstract primitives: where a
fresh store lives, reading every row back, writing rows past the API, a
statement trace and the bulk writer's batch knobs. The named damage operations
(an orphan parent, a cycle, a head pointing nowhere, ...) are built on those
primitives here, so integrity and repair tests hold no SQL. Tables and columns
are named as in the forest schema, which every backend keeps.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest

Row = dict[str, Any]
Dump = dict[str, list[Row]]

# The tables every backend has, with the key column `update_row` and
# `delete_row` find a row by.
KEYS = {
    "sessions": "id",
    "session_entries": "id",
    "session_heads": "session_id",
    "workspaces": "id",
    "agents": "id",
}
CONVERSATION_TABLES = ("sessions", "session_entries", "session_heads")
TREE_TABLES = ("workspaces", "agents")


class Refused(Exception):
    """The database itself refused a write made past the API; the message is the database's."""


class Harness(ABC):
    """Opens stores of one backend and reaches behind the API where a test must.

    Every store it opens is closed when the test (or module) ends, so tests
    need not close what they open; closing one early is fine.
    """

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._opened: list[Forest] = []
        self._where: dict[int, str] = {}

    # --- opening -----------------------------------------------------------------

    @abstractmethod
    def new_location(self) -> str:
        """A location no store exists at yet, in the form `Forest.open` takes."""

    def open(self, location: str, **options: Any) -> Forest:
        """`Forest.open(location, **options)`: clock, durability, readonly, ..."""
        forest = Forest.open(location, **options)
        self._opened.append(forest)
        self._where[id(forest)] = location
        return forest

    def fresh(self, **options: Any) -> Forest:
        """A new, empty store at a fresh location."""
        return self.open(self.new_location(), **options)

    def location(self, forest: Forest) -> str:
        """Where `forest` lives, for another handle, a child process or `forest --db`."""
        return self._where[id(forest)]

    def another(self, forest: Forest, **options: Any) -> Forest:
        """A second, independent handle on the same store (as another process has)."""
        return self.open(self.location(forest), **options)

    def reopen(self, forest: Forest, **options: Any) -> Forest:
        """Close `forest` and open its store again."""
        forest.close()
        return self.another(forest, **options)

    def close(self) -> None:
        for forest in reversed(self._opened):
            forest.close()
        self._opened.clear()

    # --- reading behind the API ----------------------------------------------------

    @abstractmethod
    def dump(self, forest: Forest, *tables: str) -> Dump:
        """Every row of `tables` (none named: of every table the backend owns).

        Rows are {column: value} dicts read through the harness's own
        connection, in a canonical order (session_entries by session and
        sequence, the other forest tables by key), so two dumps of the same
        store compare equal exactly when no row changed.
        """

    @abstractmethod
    def statements(self, forest: Forest) -> AbstractContextManager[list[str]]:
        """Inside the block, the list fills with every statement `forest` issues."""

    @abstractmethod
    def changes(self, forest: Forest) -> int:
        """How many rows `forest` has inserted, updated or deleted since it was opened."""

    # --- writing behind the API (no validation; the database may still refuse) -------

    @abstractmethod
    def insert_rows(self, forest: Forest, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        """Insert rows as given (JSON columns as JSON text); raises Refused if the database does."""

    @abstractmethod
    def update_row(self, forest: Forest, table: str, key: str, **values: Any) -> None:
        """Set columns of the row keyed `key` (see KEYS); no such row: nothing happens."""

    @abstractmethod
    def delete_row(self, forest: Forest, table: str, key: str) -> None:
        """Delete the row keyed `key`; raises Refused if the database does."""

    @abstractmethod
    def delete_session_row(self, forest: Forest, session_id: str) -> None:
        """Delete a session row past the database's guard, which stays in place after."""

    # --- the bulk writer's knobs -----------------------------------------------------

    @property
    @abstractmethod
    def bulk_batch(self) -> int:
        """How many rows the importers' bulk writer queues before it writes them."""

    @abstractmethod
    def tune_bulk(
        self,
        monkeypatch: pytest.MonkeyPatch,
        *,
        batch: int | None = None,
        recent: int | None = None,
    ) -> None:
        """Write every `batch` rows; remember only the `recent` last ids in memory.

        Small values make a short import take the paths a huge one takes.
        """

    # --- composed: rows as an older, newer or buggy writer left them ------------------

    def add_entry(
        self,
        forest: Forest,
        session_id: str,
        entry_id: str,
        parent_id: str | None,
        sequence: int,
        *,
        version: int = 2,
        kind: str = "user.message",
        payload: Any = None,
        visibility: str = "context",
        created_at: str = "2024-01-01T00:00:00.000Z",
    ) -> None:
        """One entry row, unchecked (default payload: a user message saying "x")."""
        if payload is None:
            payload = {"content": [{"type": "text", "text": "x"}]}
        self.add_entries(
            forest,
            [(entry_id, session_id, parent_id, sequence, version, kind, payload)],
            visibility=visibility,
            created_at=created_at,
        )

    def add_entries(
        self,
        forest: Forest,
        rows: Iterable[tuple[str, str, str | None, int, int, str, Any]],
        *,
        visibility: str = "context",
        created_at: str = "2024-01-01T00:00:00.000Z",
    ) -> None:
        """Many (id, session, parent, sequence, version, kind, payload) rows at once."""
        self.insert_rows(
            forest,
            "session_entries",
            (
                {
                    "id": entry_id,
                    "session_id": session_id,
                    "parent_entry_id": parent_id,
                    "sequence": sequence,
                    "semantic_schema_version": version,
                    "kind": kind,
                    "payload": json.dumps(payload, separators=(",", ":"), ensure_ascii=False),
                    "context_visibility": visibility,
                    "created_at": created_at,
                }
                for entry_id, session_id, parent_id, sequence, version, kind, payload in rows
            ),
        )

    def point_head(self, forest: Forest, session_id: str, entry_id: str | None) -> None:
        """Make the session's head `entry_id` (any id at all), creating its head row if need be."""
        if any(
            r["session_id"] == session_id
            for r in self.dump(forest, "session_heads")["session_heads"]
        ):
            self.update_row(forest, "session_heads", session_id, active_entry_id=entry_id)
        else:
            row = {"session_id": session_id, "active_entry_id": entry_id, "updated_at": "t"}
            self.insert_rows(forest, "session_heads", [row])

    def set_quarantine(self, forest: Forest, session_id: str, reason: str | None) -> None:
        """Fence the session off (or release it) without `check` having judged it."""
        self.update_row(forest, "sessions", session_id, quarantine=reason)

    # --- composed: named damage ------------------------------------------------------

    def orphan_parent(
        self, forest: Forest, session_id: str, entry_id: str, sequence: int, **row: Any
    ) -> None:
        """An entry whose parent ("vanished") does not exist."""
        self.add_entry(forest, session_id, entry_id, "vanished", sequence, **row)

    def cross_session_parent(
        self, forest: Forest, session_id: str, entry_id: str, foreign_entry: str, sequence: int
    ) -> None:
        """An entry whose parent is an entry of another session."""
        self.add_entry(forest, session_id, entry_id, foreign_entry, sequence)

    def cycle(self, forest: Forest, session_id: str, a: str, b: str, sequence: int) -> None:
        """Two entries (at `sequence` and the next) each naming the other as parent."""
        self.add_entry(forest, session_id, a, b, sequence)
        self.add_entry(forest, session_id, b, a, sequence + 1)

    def unreadable_version(
        self,
        forest: Forest,
        session_id: str,
        entry_id: str,
        parent_id: str | None,
        sequence: int,
        version: int = 99,
        **row: Any,
    ) -> None:
        """An entry at a semantic schema version this sessionforest cannot read."""
        self.add_entry(forest, session_id, entry_id, parent_id, sequence, version=version, **row)

    def head_nowhere(self, forest: Forest, session_id: str, ghost: str = "ghost") -> None:
        """Point the head at an id that is no entry of the store."""
        self.point_head(forest, session_id, ghost)

    def head_elsewhere(self, forest: Forest, session_id: str, foreign_entry: str) -> None:
        """Point the head at an entry of another session."""
        self.point_head(forest, session_id, foreign_entry)
