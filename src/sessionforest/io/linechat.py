"""What the line-format importers (Codex, Gemini CLI JSONL, Copilot CLI) share.

`LineChat` is one chat being read record by record: its conversation head,
a separate chain of hidden notifications (records that are no turn, kept
as they were so nothing is lost and the conversation never forks on them),
the user turns a rewind counts back over, and the state a later import
resumes from (`snapshot`/`restore`: the attributes in `KEPT`). `read`
drives one: it opens the chat's transaction, reads the file from a cursor,
keeps the cursor before a half-written last line, and records the result.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..model import ChatSpec, SessionVisibility
from ..store.base import ChatWriter
from .common import Ids, Lines, objects
from .position import Cursor
from .report import UNMAPPABLE, ImportRun, Notes

HIDDEN = "hidden"
# What makes a file a chat: until one of these is read, it is only a harness's context.
TURNS = frozenset({"user.message", "assistant.message", "tool.completed", "tool.started"})
Item = tuple[str, dict[str, Any], str | None]  # (kind, payload, visibility or default)


class LineChat:
    """One chat's records -> entries; a format subclasses it with `feed`."""

    PROVIDER = ""  # the provider name a hidden notification carries
    # Attributes a cursor carries (each format adds its own).
    KEPT: tuple[str, ...] = ()
    _BASE = ("time", "head", "meta_tip", "turns", "title", "first_prompt", "entries", "spoken")

    def __init__(self, writer: ChatWriter, ids: Ids, notes: Notes, time: str, path: Path) -> None:
        self.writer = writer
        self.ids = ids
        self.notes = notes
        self.path = path
        self.time = time
        self.head: str | None = None  # the conversation's last entry
        self.meta_tip: str | None = None  # the hidden chain's last entry
        self.turns: list[str | None] = []  # the entry before each user turn (rewinds)
        self.title = ""  # a name the source gives the chat
        self.first_prompt = ""
        self.entries = 0  # conversation entries written (or met) so far
        self.spoken = False  # a turn was read: a chat with none yet (context only) is not written

    # --- what a format provides ---

    def feed(self, number: int, obj: dict[str, Any]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Called once the file is read: the chat's title."""
        self.writer.title = self.title or self.first_prompt or self.writer.title

    # --- resuming ---

    def snapshot(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in (*self._BASE, *self.KEPT)}

    def restore(self, state: dict[str, Any]) -> None:
        for name in (*self._BASE, *self.KEPT):
            if name in state:
                setattr(self, name, state[name])
        self.writer.continuing = True
        self.writer.title = state.get("title") or self.writer.title

    # --- writing ---

    def say(
        self,
        key: str,
        item: Item,
        number: int | None,
        source: str | None = None,
        parent: str | bool | None = True,
    ) -> str:
        """Add a conversation entry under the head (or `parent`) and move the head to it.

        An entry this import already has (the same record under the same parent,
        as a re-done turn or a fork's copy of its parent's turns is) is not added
        again: the head just moves to it.
        """
        kind, payload, visibility = item
        under = self.head if parent is True else parent if isinstance(parent, str) else None
        entry = self.ids.entry(key)
        if not self.writer.seen(entry):
            self.writer.add(entry, under, kind, payload, self.time, visibility, number, source)
        self.head = entry
        self.writer.head = entry
        self.entries += 1
        self.spoken = self.spoken or kind in TURNS
        return entry

    def user_turn(self) -> None:
        """The next entry starts a user turn (what a rewind of N turns goes back over)."""
        self.turns.append(self.head)
        self.spoken = True

    def rewind(self, turns: int, number: int) -> None:
        """Drop the last `turns` user turns: the next entry branches from before them."""
        if turns <= 0:
            return
        if turns > len(self.turns):
            self.notes.add(
                f"line {number}: a rewind of {turns} turns, but only {len(self.turns)} "
                "were read: the next turn starts a new root"
            )
            self.turns, self.head = [], None
            return
        self.head = self.turns[-turns]
        del self.turns[-turns:]

    def notify(self, number: int, event: Any, key: str | None = None) -> None:
        """Keep a record that is no turn as a hidden notification on its own chain."""
        entry = self.ids.entry(key or f"#{number}")
        payload = {"provider": self.PROVIDER, "event": event}
        if not self.writer.seen(entry):
            self.writer.add(
                entry, self.meta_tip, "provider.notification", payload, self.time, HIDDEN, number
            )
        self.meta_tip = entry
        if self.head is None and self.entries == 0:
            self.writer.head = entry


class _NoTurnYet(Exception):
    """A chat file with no user turn (yet): not written; a later import reads it again."""


def read(
    run: ImportRun,
    path: Path,
    notes: Notes,
    start: Cursor | None,
    spec: ChatSpec,
    make: Callable[[ChatWriter], LineChat],
    first_line: int = 0,
) -> Cursor:
    """Read `path` from `start` (else from line `first_line` + 1) into the chat `spec`
    names, each record through the LineChat `make` returns; returns where it stopped.

    A file with no turn yet (a harness writes its metadata and context first)
    is not written: noted, and left for a later import from `start`."""
    try:
        return _read(run, path, start, spec, make, first_line, notes)
    except _NoTurnYet:
        notes.add("no turn yet: nothing imported; a later import reads it again")
        return start or Cursor()


def _read(
    run: ImportRun,
    path: Path,
    start: Cursor | None,
    spec: ChatSpec,
    make: Callable[[ChatWriter], LineChat],
    first_line: int,
    notes: Notes,
) -> Cursor:
    bad = run.bad
    with run.bulk.bulk_chat(spec, path) as writer, path.open("rb") as handle:
        chat = make(writer)
        mark = start.mark if start is not None else None
        reader = Lines(handle, run.progress, start=mark)
        if start is not None:
            handle.seek(start.mark.offset)
            chat.restore(start.state)
        cut: Cursor | None = None
        for number, obj in objects(path, reader, bad, notes):
            if number <= first_line:
                continue
            if reader.partial and cut is None:
                cut = Cursor(reader.mark(), chat.snapshot())
            try:
                chat.feed(number, obj)
            except UNMAPPABLE as exc:
                bad.unmappable(path, number, exc)
            del obj
        cursor = cut or Cursor(reader.mark(), chat.snapshot())
        if not chat.spoken:
            raise _NoTurnYet()  # rolls the chat's transaction back: nothing of it is written
        chat.close()
    hidden = spec.visibility == SessionVisibility.HIDDEN
    run.report.add(writer.result, spec.source_format, path, spec.source_id, hidden)
    return cursor
