"""The facade's half of the live mirror: import a followed file from where it stopped.

`import_followed` is what `forest watch`, `forest serve --watch` and the
Claude Code hook call for a transcript file that changed: it reads the file's
stored position (the `followed_sources` row of its real path), imports what
the file holds past it (`Forest.import_source`: only complete lines; a file
that shrank or was replaced is read again whole, which changes nothing that
is stored) and stores the position it returns. The row is written after the
import's own transactions committed, so a kill between the two leaves the
position behind the chats, never ahead: the next import reads those lines
again and finds them stored (ids come from the source), so nothing is lost
and nothing is stored twice.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from .errors import ForestError
from .forest_trees import TreeFacade
from .store.base.sources import FollowedSource

if TYPE_CHECKING:
    from .io.position import SourcePosition
    from .model import FollowReport, ImportReport
    from .store.base import Backend, BulkStore, Handoff

# An error stored for a file is cut to this many characters (a status line).
ERROR_CHARS = 500


def source_key(path: str | os.PathLike[str]) -> str:
    """The key a followed file's row is kept under: its real, absolute path (a hook
    and a watcher name the same file the same way, whatever links lie between)."""
    return os.path.realpath(os.fspath(Path(path).expanduser()))


class FollowFacade(TreeFacade):
    """The live-mirror half of `Forest` (see the module docstring)."""

    _backend: Backend

    def import_source(
        self,
        fmt: str,
        path: str | os.PathLike[str],
        position: SourcePosition | dict[str, Any] | None = None,
        *,
        skip_bad: bool = False,
    ) -> tuple[ImportReport, SourcePosition]:
        raise NotImplementedError

    def import_followed(
        self, fmt: str, path: str | os.PathLike[str], *, skip_bad: bool = True
    ) -> FollowReport:
        """Import what `path` (a `fmt` source) holds past its stored position and store
        the new one. A bad line is skipped and reported (`skip_bad`): a live file
        must not stop being followed over one line. A store error raises, with
        nothing of the file's row changed; a file that cannot be read raises too,
        its row noting why."""
        from .io.position import fits

        key = source_key(path)
        sources = self._backend.sources
        stored = sources.followed(key)
        before: dict[str, Any] | None = None
        start: SourcePosition | None = None
        if stored is not None and stored.format == fmt:
            before = orjson.loads(stored.position) or None
            start = _position(before) if before is not None else None
            if start is None:
                before = None  # none kept (only failures so far) or an older shape
        restarted = False
        if start is not None and start.offset > 0:
            try:
                size = os.stat(key).st_size
            except OSError:
                size = -1  # gone: import_source says so
            restarted = size >= 0 and not fits(start, fmt, Path(key), size)
        try:
            report, after = self.import_source(fmt, key, before, skip_bad=skip_bad)
        except ForestError as exc:
            self._note_failure(key, fmt, stored, str(exc))
            raise
        position = after.to_json()
        chat = _main_chat(report) or (stored.chat if stored is not None else None)
        error = _failure(report)
        if before != position or stored is None or stored.error != error or stored.chat != chat:
            sources.keep_followed(
                FollowedSource(
                    key, fmt, orjson.dumps(position).decode(), after.offset, chat,
                    self._now(), error,
                )
            )  # fmt: skip
        from .model import FollowReport  # with the importers' values, not at the facade's import

        return FollowReport(key, fmt, report, restarted, chat)

    def followed_sources(self) -> list[FollowedSource]:
        """Every file the live mirror follows, with where its import stands."""
        return self._backend.sources.all_followed()

    def forget_followed(self, path: str | os.PathLike[str]) -> None:
        """Forget where the mirror stood in `path` (deleted or replaced: a file made
        there later is read from its start). Its chats stay."""
        self._backend.sources.forget_followed(source_key(path))

    # --- hand-offs: transcripts `forest resume` wrote (store/base/handoffs.py) ---

    def keep_handoff(self, handoff: Handoff) -> None:
        """Record (or replace) the hand-off of a transcript written for a harness."""
        self._backend.handoffs.keep_handoff(handoff)

    def handoff(self, fmt: str, source_id: str) -> Handoff | None:
        """The hand-off of the transcript `fmt`'s importer reads as `source_id`, if any."""
        return self._backend.handoffs.handoff(fmt, source_id)

    def handoffs(self, session_id: str) -> list[Handoff]:
        """Every hand-off of a chat, oldest first."""
        return self._backend.handoffs.handoffs(session_id)

    def _importing(self) -> BulkStore:
        """The store an import writes through: a transcript a hand-off names joins the
        chat it continues (io/handoff.py)."""
        from .io.handoff import Joining

        return Joining(self._backend.bulk, self._backend.handoffs)

    def _note_failure(self, key: str, fmt: str, stored: FollowedSource | None, why: str) -> None:
        try:
            position = stored.position if stored is not None else "{}"
            offset = stored.offset if stored is not None else 0
            chat = stored.chat if stored is not None else None
            row = FollowedSource(key, fmt, position, offset, chat, self._now(), why[:ERROR_CHARS])
            self._backend.sources.keep_followed(row)
        except ForestError:
            pass  # the store itself fails: the caller reports the first error


def _position(data: Any) -> SourcePosition | None:
    from .io.position import SourcePosition

    try:
        return SourcePosition.from_json(data)
    except ForestError:
        return None  # a position of an older shape: the import starts over


def _main_chat(report: ImportReport) -> str | None:
    """The chat a person reads (the first top-level one the import touched)."""
    for chat in report.chats:
        if not chat.hidden:
            return chat.session_id
    return report.chats[0].session_id if report.chats else None


def _failure(report: ImportReport) -> str | None:
    if not report.failed:
        return None
    first = report.failed[0]
    where = f"line {first.line}: " if first.line is not None else ""
    return f"{where}{first.reason}"[:ERROR_CHARS]
