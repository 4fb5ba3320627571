"""Sessions and their directories, for the facade: stamping, binding, divergence.

A session bound to a directory has every controller append stamped (see
gitstamp.py); imported chats start unbound, their recorded directory kept as
data (`origin_cwd`) until `bind`. Stamps are taken before a backend's write
lock (git status must not hold up other writers); when another process bound
the session meanwhile, the backend asks for a stamp again inside its lock.

Each stamp is bounded (`stamp_seconds`, gitstamp.STAMP_SECONDS): one that
takes longer is recorded as unknown with the reason. A caller with one writer
thread (the server) takes stamps ahead on other threads (`stamping`) and hands
them to the appends it then runs (`stamped`), so a slow worktree never holds up
another session's append.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from .errors import InvalidArgument
from .gitstamp import STAMP_SECONDS, Divergence, Stamper, compare
from .rules.append import stamp_text
from .store.base import UNSTAMPED, Stamping, Store


class Worktrees:
    """The stamper and the bound directories one facade has seen (a cache: a
    directory, once bound, never changes; an unbound one may become bound)."""

    def __init__(self, store: Store, stamp_seconds: float | None = STAMP_SECONDS) -> None:
        self._store = store
        self._stamper = Stamper()
        self.stamp_seconds = stamp_seconds
        self._cwd: dict[str, str | None] = {}
        self._unbound: dict[str, Stamping] = {}
        self._ahead = threading.local()  # stamps taken ahead, for this thread's appends

    def bind(self, session_id: str, directory: str | os.PathLike[str]) -> None:
        path = os.path.abspath(directory)
        if not os.path.isdir(path):
            raise InvalidArgument("directory", f"{path} does not exist or is not a directory")
        self._store.bind(session_id, path)
        self._cwd[session_id] = path
        self._unbound.pop(session_id, None)

    def directory(self, session_id: str, *, recheck: bool = False) -> str | None:
        """The bound directory; `recheck` asks again when it was cached as unbound."""
        found = self._cwd.get(session_id)
        if found is not None or (session_id in self._cwd and not recheck):
            return found
        exists, cwd = self._store.bound_directory(session_id)
        if exists:  # an unknown session is reported by the call that needs it
            self._cwd[session_id] = cwd
        return cwd

    def stamp(self, cwd: str | None) -> dict[str, Any] | None:
        return self._stamper.stamp(cwd, self.stamp_seconds) if cwd is not None else None

    @contextmanager
    def stamped(self, stamps: Mapping[str, Stamping]) -> Iterator[None]:
        """Within the block, this thread's appends to these sessions take these stamps
        (taken ahead by `stamping` on another thread) instead of stamping again."""
        before = getattr(self._ahead, "stamps", None)
        self._ahead.stamps = {**(before or {}), **stamps}
        try:
            yield
        finally:
            self._ahead.stamps = before

    def stamping(self, session_id: str) -> Stamping:
        """How an append to `session_id` is stamped.

        The stamp is taken now, outside any write lock; if the backend finds the
        committed binding differs (another process bound the session since), it
        calls `restamp` for that directory inside its lock. An unbound session's
        Stamping is made once and reused: most appends are to unbound sessions.
        """
        ahead: Mapping[str, Stamping] | None = getattr(self._ahead, "stamps", None)
        if ahead is not None and session_id in ahead:
            return ahead[session_id]  # taken ahead for this append (`stamped`)
        cwd = self.directory(session_id)
        if cwd is None:
            found = self._unbound.get(session_id)
            if found is None:
                found = self._unbound[session_id] = Stamping(
                    None, None, self._restamper(session_id)
                )
            return found
        return Stamping(cwd, stamp_text(self.stamp(cwd)), self._restamper(session_id))

    def known_unbound(self, session_id: str) -> Stamping | None:
        """`stamping(session_id)` when this facade already knows the session is unbound
        (no store read, no git): None when it does not know. For a caller that would
        otherwise hop to a stamping thread for a dictionary lookup (the server)."""
        if session_id in self._cwd and self._cwd[session_id] is None:
            return self._unbound.get(session_id)
        return None

    def _restamper(self, session_id: str) -> Callable[[str | None], str | None]:
        def restamp(actual: str | None) -> str | None:
            self._cwd[session_id] = actual
            self._unbound.pop(session_id, None)
            return stamp_text(self.stamp(actual))

        return restamp

    def compare(self, session_id: str, stamp: dict[str, Any] | None) -> Divergence:
        cwd = self.directory(session_id, recheck=True)
        if cwd is None:
            return Divergence("unknown", reason="session is not bound to a directory", stamp=stamp)
        if not os.path.isdir(cwd):
            return Divergence("unknown", reason=f"directory {cwd} does not exist", stamp=stamp)
        current = self._stamper.stamp(cwd, self.stamp_seconds)
        why = "" if current is not None else self._stamper.refusal(cwd)
        return compare(stamp, current, why)

    def current(self, session_id: str) -> dict[str, Any] | None:
        """The stamp the session's worktree would get now (None: no bound repository)."""
        return self.stamp(self.directory(session_id, recheck=True))


__all__ = ["UNSTAMPED", "Worktrees"]
