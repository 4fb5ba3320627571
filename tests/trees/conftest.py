"""A real SQLite forest on a pinned clock, and a way to snapshot its tables."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest

Snapshot = Callable[..., dict[str, list[tuple[Any, ...]]]]


@pytest.fixture
def forest(tmp_path: Path) -> Iterator[Forest]:
    moments = (datetime(2025, 1, 1, tzinfo=UTC) + timedelta(seconds=n) for n in range(10**9))
    store = Forest.open(tmp_path / "forest.db", clock=lambda: next(moments))
    yield store
    store.close()


@pytest.fixture
def snapshot(forest: Forest) -> Snapshot:
    """Every row of the named tables, read through a second connection."""

    def take(*tables: str) -> dict[str, list[tuple[Any, ...]]]:
        with closing(sqlite3.connect(forest.path)) as conn:
            return {t: conn.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in tables}

    return take
