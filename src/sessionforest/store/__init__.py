"""Storage backends behind the facade, and how a location picks one.

`open_backend(location)`: a path, `sqlite:///PATH` or nothing (`FOREST_DB`, else
the user data directory) opens the embedded SQLite backend. The contracts
every backend implements are in base.py.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import BackendUnavailable, InvalidArgument
from .sqlite import SQLiteBackend, default_path, open_sqlite

__all__ = ["default_path", "location_of", "open_backend"]

SQLITE_SCHEME = "sqlite://"


def location_of(location: str | os.PathLike[str] | None) -> str | os.PathLike[str] | None:
    """`location`, or `FOREST_DB` when it is None (a path or a URL)."""
    if location is None:
        return os.environ.get("FOREST_DB") or None
    return location


def open_backend(location: str | os.PathLike[str] | None, **options: Any) -> SQLiteBackend:
    """The backend `location` names; see the module docstring."""
    found = location_of(location)
    if isinstance(found, str) and "://" in found:
        if found.startswith(SQLITE_SCHEME):
            # sqlite:///tmp/x.db is /tmp/x.db; sqlite://x.db is x.db (relative).
            return open_sqlite(found[len(SQLITE_SCHEME) :], **options)
        scheme = found.split("://", 1)[0]
        if scheme in ("postgresql", "postgres"):
            raise BackendUnavailable("pip install 'sessionforest[postgres]'")
        raise InvalidArgument(
            "store location", f"unknown scheme {scheme}:// (use a path or sqlite://)"
        )
    return open_sqlite(found, **options)
