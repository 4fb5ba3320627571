"""The contract every forest backend implements.

`tests/conformance/` runs one suite against every backend through this
protocol, so a backend is done when that suite passes on it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import IO, Any, Protocol

from ..model import CheckReport, Entry, Node, RepairReport, SessionInfo


class Store(Protocol):
    def close(self) -> None: ...

    def create_session(
        self,
        title: str = "",
        harness: str = "",
        cwd: Any = None,
        *,
        session_id: str | None = None,
        visibility: str = ...,
        created_at: str | None = None,
    ) -> str: ...

    def session(self, session_id: str) -> SessionInfo: ...

    def sessions(
        self, *, include_hidden: bool = True, order: str = "created"
    ) -> list[SessionInfo]: ...

    def resolve_session(self, ref: str) -> str: ...

    def resolve_entry(self, session_id: str, ref: str) -> str: ...

    def set_status(self, session_id: str, status: str) -> None: ...

    def bind(self, session_id: str, directory: Any) -> SessionInfo: ...

    def append(
        self,
        session_id: str,
        kind: str,
        payload: dict[str, Any],
        parent: str | None = None,
        visibility: str | None = None,
        expect_head: Any = ...,
        created_at: str | None = None,
        stamp: dict[str, Any] | None = None,
    ) -> Entry: ...

    def append_many(
        self,
        session_id: str,
        items: Sequence[tuple[str, dict[str, Any], str | None]],
        parent: str | None = None,
        expect_head: Any = ...,
    ) -> list[Entry]: ...

    def move_head(self, session_id: str, entry_id: str, *, expect_head: Any = ...) -> None: ...

    def checkpoint(self, session_id: str, label: str, summary: str | None = None) -> Entry: ...

    def seek_checkpoint(self, session_id: str, label: str) -> Entry: ...

    def head(self, session_id: str) -> str | None: ...

    def entry(self, session_id: str, entry_id: str) -> Entry: ...

    def active_path(self, session_id: str) -> list[Entry]: ...

    def entries(self, session_id: str) -> list[Entry]: ...

    def iter_entries(self, session_id: str, batch: int = 1000) -> Iterator[Entry]: ...

    def skeleton(self, session_id: str) -> list[Node]: ...

    def children(self, session_id: str, entry_id: str) -> list[Entry]: ...

    def tips(self, session_id: str) -> list[Entry]: ...

    def checkpoints(self, session_id: str) -> list[Entry]: ...

    def check(self, *, quarantine: bool = True) -> CheckReport: ...

    def repair(self, session_id: str) -> RepairReport: ...

    def export_jsonl(self, session_id: str, out: IO[str]) -> int: ...

    def import_jsonl(self, path: Any) -> str: ...
