"""PostgreSQL-only tests: each gets a fresh store (a schema of the run's test database).

`pg_url` alone is a new, empty schema (the test's own open migrates it); with
`pg_forest` it is a migrated store lent from the harness's pool
(tests/conformance/backends/postgres.py), which `pg_forest` has open.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.backends.postgres import (
    _unavailable,
    give_back,
    migrated_store_url,
    new_schema_url,
)
from sessionforest import Forest


@pytest.fixture
def pg_url(request: pytest.FixtureRequest) -> Iterator[str]:
    why = _unavailable()
    if why is not None:
        pytest.skip(f"postgres: {why}")
    if "pg_forest" not in request.fixturenames:
        yield new_schema_url()
        return
    url = migrated_store_url()
    yield url
    give_back(url)


@pytest.fixture
def pg_forest(pg_url: str) -> Iterator[Forest]:
    forest = Forest.open(pg_url)
    yield forest
    forest.close()
