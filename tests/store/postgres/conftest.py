"""PostgreSQL-only tests: each gets a fresh store (a schema of the run's test database)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.backends.postgres import _unavailable, new_schema_url
from sessionforest import Forest


@pytest.fixture
def pg_url() -> str:
    why = _unavailable()
    if why is not None:
        pytest.skip(f"postgres: {why}")
    return new_schema_url()


@pytest.fixture
def pg_forest(pg_url: str) -> Iterator[Forest]:
    forest = Forest.open(pg_url)
    yield forest
    forest.close()
