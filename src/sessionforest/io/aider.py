"""Aider chat histories (`<repo>/.aider.chat.history.md`) as chats, one per run.

`# aider chat started at YYYY-MM-DD HH:MM:SS` opens a run (a chat; the file
names no session ids, so a run's id is the file and its start line's time
and position among runs of that time). `#### ` lines are the user's (a
`/command` among them is kept as the user typed it, never a title), `> `
lines are aider's own output (the run's banner, tool and command output, token
counts, "Applied edit", "Commit <sha> <message>") kept as hidden
notifications, and the rest are the model's replies (SEARCH/REPLACE blocks as
written). A reply that aider committed is stamped with that commit (the
stamp's `head` is the short sha aider printed). There are no structured tool
calls, and one time per run: every entry of a run has its start time.

`forest import aider DIR` finds every `.aider.chat.history.md` below DIR.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from ..gitstamp import STAMP_VERSION
from ..ids import iso
from ..model import ChatSpec
from ..wrappers import title_of
from .blocks import text
from .common import MAX_LINE, Ids, unreadable
from .report import ImportRun, Notes, failures

FORMAT = "aider"
HARNESS = "aider"
HIDDEN = "hidden"
FILE_NAME = ".aider.chat.history.md"
_START = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
_COMMIT = re.compile(r"^> Commit ([0-9a-f]{7,40})\b(.*)$")
_MODEL = re.compile(r"^> (?:Main model|Models?): (\S+)")


def accept(path: Path) -> bool:
    return path.name == FILE_NAME or path.name.endswith(".chat.history.md")


def import_file(run: ImportRun, path: Path, notes: Notes) -> None:
    raw = path.read_bytes()
    if run.progress is not None:
        run.progress.advance(len(raw))
    try:
        body = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        run.bad.bad(path, None, unreadable(raw, exc, "file", 1) + "; file not imported")
        return
    runs = _runs(body.splitlines())
    if not runs:
        notes.add("no '# aider chat started at' line: no run to import")
        return
    counts: dict[str, int] = {}
    for start, number, lines in runs:
        counts[start] = counts.get(start, 0) + 1
        source_id = f"{path.resolve()}#{start}#{counts[start]}"
        with failures(run.report, path, notes):
            _run(run, path, source_id, start, number, lines)


def _runs(lines: list[str]) -> list[tuple[str, int, list[tuple[int, str]]]]:
    """(start time, its line number, the run's numbered lines) per run."""
    runs: list[tuple[str, int, list[tuple[int, str]]]] = []
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            line = line[:MAX_LINE]
        found = _START.match(line)
        if found is not None:
            runs.append((found.group(1), number, []))
        elif runs:
            runs[-1][2].append((number, line.rstrip()))
    return runs


def _run(
    run: ImportRun,
    path: Path,
    source_id: str,
    start: str,
    number: int,
    lines: list[tuple[int, str]],
) -> None:
    ids = Ids(FORMAT, source_id)
    created = iso(datetime.fromisoformat(start).astimezone())
    spec = ChatSpec(
        ids.session,
        "",
        HARNESS,
        created,
        FORMAT,
        str(path),
        source_id,
        origin_cwd=str(path.resolve().parent),
    )
    with run.bulk.bulk_chat(spec, path) as writer:
        chat = _Chat(writer, ids, created)
        for block_line, kind, block in _blocks(lines):
            chat.block(block_line, kind, block)
        chat.flush()
        writer.title = chat.title or f"aider run at {start}"
    run.report.add(writer.result, FORMAT, path, source_id)


def _blocks(lines: list[tuple[int, str]]) -> list[tuple[int, str, list[str]]]:
    """Consecutive lines of one kind: "user" (####), "output" (>), "reply" (the rest)."""
    out: list[tuple[int, str, list[str]]] = []
    for number, line in lines:
        if line.startswith("####"):
            kind, content = "user", line[5:] if line.startswith("#### ") else line[4:]
        elif line.startswith(">"):
            kind, content = "output", line
        else:
            kind, content = "reply", line
        if out and out[-1][1] == kind:
            out[-1][2].append(content)
        else:
            out.append((number, kind, [content]))
    return out


class _Chat:
    def __init__(self, writer: Any, ids: Ids, time: str) -> None:
        self.writer = writer
        self.ids = ids
        self.time = time
        self.head: str | None = None
        self.title = ""
        self.model: str | None = None
        self.reply: tuple[int, str] | None = None  # a reply waiting for its commit line

    def _add(
        self,
        number: int,
        kind: str,
        payload: dict[str, Any],
        visibility: str | None = None,
        stamp: dict[str, Any] | None = None,
    ) -> None:
        entry = self.ids.entry(f"#{number}")
        self.writer.add(
            entry, self.head, kind, payload, self.time, visibility, number, f"line {number}", stamp
        )
        self.head = entry
        self.writer.head = entry

    def block(self, number: int, kind: str, lines: list[str]) -> None:
        words = "\n".join(lines).strip("\n")
        if kind == "reply":
            if not words.strip():
                return
            self.flush()
            self.reply = (number, words)
            return
        if kind == "output":
            commit = next((m for m in map(_COMMIT.match, lines) if m is not None), None)
            for line in lines:
                found = _MODEL.match(line)
                if found is not None and self.model is None:
                    self.model = found.group(1)
            self.flush(commit.group(1) if commit else None)
            output = "\n".join(line[2:] if line.startswith("> ") else line[1:] for line in lines)
            event = {"output": output.strip("\n")}
            if commit is not None:
                event["commit"] = commit.group(1)
            self._add(
                number, "provider.notification", {"provider": "aider", "event": event}, HIDDEN
            )
            return
        self.flush()
        if not words.strip():
            return
        payload: dict[str, Any] = {"content": [text(words)]}
        if words.lstrip().startswith("/"):
            payload["command"] = True  # an aider command (/diff, /undo, /run ...), typed as is
        elif not self.title:
            self.title = title_of(words)
        self._add(number, "user.message", payload)

    def flush(self, commit: str | None = None) -> None:
        """Write the waiting reply, stamped with the commit aider made of it (if any)."""
        if self.reply is None:
            return
        number, words = self.reply
        self.reply = None
        payload: dict[str, Any] = {"content": [text(words)], "provider": "aider"}
        if self.model:
            payload["model"] = self.model
        stamp = None
        if commit is not None:
            stamp = {
                "v": STAMP_VERSION,
                "head": commit,
                "dirty": None,
                "dirty_files": 0,
                "source": "aider commit",
            }
        self._add(number, "assistant.message", payload, stamp=stamp)
