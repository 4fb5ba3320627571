"""Which directories of the server's machine a client may name: `sessions/import` reads
only inside `--import-root`s, and a remote client binds a session only inside
`--bind-root`s.

Binding a session to a directory makes the server run git there on every append
(its stamps) and lets `sessions/status` report that repository's HEAD and how
many files are dirty. A client that could bind any path could read the state of
every repository the server's user owns (and make the server hash huge trees),
so over HTTP and WebSocket `cwd` must lie inside a bind root (symlinks
resolved); a server started without one binds nothing for such clients. The
stdio peer is the process that started the server, as its own user: it binds
what the CLI would. Sessions the user bound from the CLI stay as they are.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InvalidArgument


class Roots:
    """The directories given at start, resolved (symlinks followed) once."""

    def __init__(
        self, roots: tuple[Path, ...], argument: str, option: str, what: str, noun: str
    ) -> None:
        self.roots = tuple(Path(os.path.realpath(r)) for r in roots)
        self._argument = argument
        self._option = option
        self._what = what
        self._noun = noun

    def resolve(self, path: str) -> Path:
        """`path`, resolved, if it lies inside a root; else InvalidArgument."""
        if not self.roots:
            raise InvalidArgument(
                self._argument,
                f"this server was started without {self._option}, so it {self._what} nothing",
            )
        real = Path(os.path.realpath(path))
        for root in self.roots:
            if real == root or real.is_relative_to(root):
                return real
        roots = ", ".join(str(r) for r in self.roots)
        raise InvalidArgument(
            self._argument, f"{path} is outside the {self._noun} ({self._option}: {roots})"
        )


class ImportRoots(Roots):
    def __init__(self, roots: tuple[Path, ...] = ()) -> None:
        super().__init__(roots, "path", "--import-root", "imports", "import roots")


class BindRoots(Roots):
    def __init__(self, roots: tuple[Path, ...] = ()) -> None:
        super().__init__(roots, "cwd", "--bind-root", "lets a remote client bind", "bind roots")
