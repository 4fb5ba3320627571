"""Backends the conformance suite runs on; every test here takes `forest`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sessionforest import Forest

BACKENDS = ["sqlite"]


@pytest.fixture(params=BACKENDS)
def forest(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Forest]:
    store = Forest.open(tmp_path / "forest.db")
    yield store
    store.close()
