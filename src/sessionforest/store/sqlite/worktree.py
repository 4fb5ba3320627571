"""Sessions and their directories: binding, and how entries compare with the worktree now.

A session bound to a directory has every controller append stamped (see
gitstamp.py); imported chats start unbound, their recorded directory kept as
data (`origin_cwd`) until `bind`. Divergence compares an entry's stamp with
a fresh one, and `snapshot` reads everything the UI draws in one transaction.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ...errors import InvalidArgument, SessionBound, UnknownSession
from ...gitstamp import Divergence, Stamper, compare
from ...model import Entry, Node, SessionInfo, Snapshot


class WorktreeMixin:
    """`bind`, `divergence`, `current_stamp` and `snapshot` for `Forest`."""

    _conn: sqlite3.Connection
    _stamper: Stamper
    # session -> bound directory. A directory, once bound, never changes;
    # None may become one (`bind`), which appends notice in APPEND_STATE.
    _cwd: dict[str, str | None]

    if TYPE_CHECKING:

        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _readable(self, session_id: str) -> str | None: ...
        def session(self, session_id: str) -> SessionInfo: ...
        def entry(self, session_id: str, entry_id: str) -> Entry: ...
        def skeleton(self, session_id: str) -> list[Node]: ...
        def active_path(self, session_id: str) -> list[Entry]: ...
        def checkpoints(self, session_id: str) -> list[Entry]: ...

    def bind(self, session_id: str, directory: str | os.PathLike[str]) -> SessionInfo:
        """Bind the session to `directory`: its appends are stamped with that worktree from now.

        Imported chats start unbound; where they were recorded is kept as
        `origin_cwd`, data that never makes git run. A bound directory never
        changes (stamps must stay comparable): binding again to the same one
        is a no-op, another one raises SessionBound. The directory must exist.
        """
        path = os.path.abspath(directory)
        if not os.path.isdir(path):
            raise InvalidArgument("directory", f"{path} does not exist or is not a directory")
        with self._write() as conn:
            row = conn.execute("SELECT cwd FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                raise UnknownSession(session_id)
            if row[0] is not None and row[0] != path:
                raise SessionBound(session_id, row[0], path)
            conn.execute("UPDATE sessions SET cwd = ? WHERE id = ?", (path, session_id))
        self._cwd[session_id] = path
        return self.session(session_id)

    def _rebound(self, session_id: str, cwd: str | None) -> dict[str, Any] | None:
        """The session was bound (by another Forest) after we cached it as unbound.

        Rare (once per bind), so the stamp is taken inside the write lock.
        """
        self._cwd[session_id] = cwd
        return self._stamper.stamp(cwd) if cwd is not None else None

    def _session_cwd(self, session_id: str, *, recheck: bool = False) -> str | None:
        """The bound directory; `recheck` asks again when it was cached as unbound."""
        found = self._cwd.get(session_id)
        if found is not None or (session_id in self._cwd and not recheck):
            return found
        row = self._conn.execute("SELECT cwd FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            return None  # the append itself reports the unknown session
        self._cwd[session_id] = row[0]
        return row[0]  # type: ignore[no-any-return]

    def divergence(self, session_id: str, entry_id: str | None = None) -> Divergence:
        """Compare an entry's stamp (default: the head's) with the worktree now."""
        head = self._readable(session_id)
        target = entry_id or head
        if target is None:
            return Divergence("unknown", reason="session has no entries")
        entry = self.entry(session_id, target)
        return self._compare(session_id, entry.stamp)

    def current_stamp(self, session_id: str) -> dict[str, Any] | None:
        """The stamp the worktree of the session's directory would get now (None: none)."""
        cwd = self._session_cwd(session_id, recheck=True)
        return self._stamper.stamp(cwd) if cwd is not None else None

    def _compare(self, session_id: str, stamp: dict[str, Any] | None) -> Divergence:
        cwd = self._session_cwd(session_id, recheck=True)
        if cwd is None:
            return Divergence("unknown", reason="session is not bound to a directory", stamp=stamp)
        if not os.path.isdir(cwd):
            return Divergence("unknown", reason=f"directory {cwd} does not exist", stamp=stamp)
        current = self._stamper.stamp(cwd)
        why = "" if current is not None else self._stamper.refusal(cwd)
        return compare(stamp, current, why)

    def snapshot(self, session_id: str, entry: str | None = None) -> Snapshot:
        """The tree skeleton, active path, tips, checkpoints and the divergence of
        `entry` (default: the head), read in one transaction so they agree."""
        conn = self._conn
        conn.execute("BEGIN")
        try:
            head = self._readable(session_id)
            nodes = self.skeleton(session_id)
            path = [e.id for e in self.active_path(session_id)]
            checkpoints = [(c.id, str(c.payload["label"])) for c in self.checkpoints(session_id)]
            selected = entry or head
            stamp = self.entry(session_id, selected).stamp if selected is not None else None
        finally:
            conn.execute("COMMIT")
        parents = {n.parent_id for n in nodes}
        tips = [n.id for n in nodes if n.id not in parents]
        if selected is None:
            divergence = Divergence("unknown", reason="session has no entries")
        else:
            divergence = self._compare(session_id, stamp)
        return Snapshot(session_id, head, selected, tuple(nodes), tuple(path), tuple(tips),
                        tuple(checkpoints), divergence)  # fmt: skip
