"""Tests of the SQLite backend itself: a real store file, never the backend parameter.

What every backend must do is in tests/conformance; what is here is how
SQLite does it (PRAGMAs, WAL, FTS5 and trigram tables, triggers, migrations,
files on disk), so these tests open the SQLite store directly.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sessionforest import Forest

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)  # a Wednesday, as in the search tests


@pytest.fixture
def forest(tmp_path: Path) -> Iterator[Forest]:
    store = Forest.open(tmp_path / "forest.db", clock=lambda: NOW)
    yield store
    store.close()
