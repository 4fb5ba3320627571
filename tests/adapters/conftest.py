"""Fixtures for the stream adapter tests: a real SQLite forest and the recorded streams.

`replay` feeds a recorded stream into an adapter the way a harness would, and
`turn` reads back what one stream left in a session, checking the invariants
every recorded turn must keep.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Entry, Forest
from sessionforest.adapters import AssembledMessage, StreamAdapter

FIXTURES = Path(__file__).parent / "fixtures"

Events = list[dict[str, Any]]


def read_stream(name: str) -> Events:
    lines = (FIXTURES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture
def forest(tmp_path: Path) -> Iterator[Forest]:
    store = Forest.open(tmp_path / "forest.db")
    yield store
    store.close()


@pytest.fixture
def sid(forest: Forest) -> str:
    return forest.create_session(title="adapter test")


@pytest.fixture
def stream() -> Callable[[str], Events]:
    return read_stream


def _replay(
    adapter: StreamAdapter, events: Sequence[object], *, close: bool = True
) -> AssembledMessage | None:
    result = None
    for event in events:
        result = adapter.feed(event) or result
    closed = adapter.close() if close else None
    return result or closed


@pytest.fixture
def replay() -> Callable[..., AssembledMessage | None]:
    return _replay


def _turn(forest: Forest, sid: str) -> tuple[list[Entry], Entry]:
    """The (notifications, assistant message) of a session holding exactly one stream."""
    entries = forest.entries(sid)
    assert [e.id for e in forest.active_path(sid)] == [e.id for e in entries], "one chain"
    assert not any(e.kind.endswith(".delta") for e in entries)
    *notes, message = entries
    assert message.kind == "assistant.message"
    assert message.context_visibility == "context"
    assert forest.head(sid) == message.id, "the head ends on the message"
    assert {e.kind for e in notes} <= {"provider.notification"}
    assert {e.context_visibility for e in notes} <= {"hidden"}
    return notes, message


@pytest.fixture
def turn() -> Callable[[Forest, str], tuple[list[Entry], Entry]]:
    return _turn
