"""Bulk writes through the importers, on the backend under test: `dump` is every row it owns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import Forest

Dump = Callable[[], dict[str, list[dict[str, Any]]]]


@pytest.fixture
def dump(forest: Forest, harness: Harness) -> Dump:
    """Every row of every table the backend owns, read through the harness's own connection."""

    def take() -> dict[str, list[dict[str, Any]]]:
        return harness.dump(forest)

    return take
