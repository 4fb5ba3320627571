"""How a location picks a storage backend, behind the facade.

`open_backend(location)`: a path, `sqlite:///PATH` or nothing (`FOREST_DB`, else
the user data directory) opens the embedded SQLite backend; `postgresql://...`
(or `postgres://...`) the PostgreSQL one (the `[postgres]` extra). The
contracts every backend implements are in base/.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import BackendUnavailable, InvalidArgument
from .base import Backend
from .sqlite import default_path, open_sqlite

__all__ = ["default_path", "location_of", "open_backend"]

SQLITE_SCHEME = "sqlite://"


def location_of(location: str | os.PathLike[str] | None) -> str | os.PathLike[str] | None:
    """`location`, or `FOREST_DB` when it is None (a path or a URL)."""
    if location is None:
        return os.environ.get("FOREST_DB") or None
    return location


def open_backend(location: str | os.PathLike[str] | None, **options: Any) -> Backend:
    """The backend `location` names; see the module docstring."""
    found = location_of(location)
    if isinstance(found, str) and "://" in found:
        if found.startswith(SQLITE_SCHEME):
            # sqlite:///tmp/x.db is /tmp/x.db; sqlite://x.db is x.db (relative).
            return open_sqlite(found[len(SQLITE_SCHEME) :], **options)
        scheme = found.split("://", 1)[0]
        if scheme in ("postgresql", "postgres"):
            try:
                from .postgres import open_postgres
            except ImportError as exc:
                raise BackendUnavailable("pip install 'sessionforest[postgres]'") from exc
            return open_postgres(found, **options)
        raise InvalidArgument(
            "store location",
            f"unknown scheme {scheme}:// (use a path, sqlite:// or postgresql://)",
        )
    return open_sqlite(found, **options)
