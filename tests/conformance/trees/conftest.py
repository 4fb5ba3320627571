"""A store of the backend under test on a ticking pinned clock, and a way to snapshot its tables."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import Forest

Snapshot = Callable[..., dict[str, list[dict[str, Any]]]]


@pytest.fixture
def forest(harness: Harness) -> Forest:
    moments = (datetime(2025, 1, 1, tzinfo=UTC) + timedelta(seconds=n) for n in range(10**9))
    return harness.fresh(clock=lambda: next(moments))


@pytest.fixture
def snapshot(forest: Forest, harness: Harness) -> Snapshot:
    """Every row of the named tables, read through the harness's own connection."""

    def take(*tables: str) -> dict[str, list[dict[str, Any]]]:
        return harness.dump(forest, *tables)

    return take
