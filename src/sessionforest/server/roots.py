"""Which files `sessions/import` may read: only inside the server's `--import-root`s."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InvalidArgument


class ImportRoots:
    """The directories given at start, resolved (symlinks followed) once."""

    def __init__(self, roots: tuple[Path, ...] = ()) -> None:
        self.roots = tuple(Path(os.path.realpath(r)) for r in roots)

    def resolve(self, path: str) -> Path:
        """`path`, resolved, if it lies inside a root; else InvalidArgument."""
        if not self.roots:
            raise InvalidArgument(
                "path", "this server was started without --import-root, so it imports nothing"
            )
        real = Path(os.path.realpath(path))
        for root in self.roots:
            if real == root or real.is_relative_to(root):
                return real
        roots = ", ".join(str(r) for r in self.roots)
        raise InvalidArgument("path", f"{path} is outside the import roots ({roots})")
