"""The embedded SQLite backend (the default)."""

from .forest import Forest, default_path

__all__ = ["Forest", "default_path"]
