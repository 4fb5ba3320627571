"""Where a hand-off's transcript goes, and writing it as a new file (never over one).

Every target writes the same way: the folder is made (or refused with the
reason: a file where a folder should be, no permission), the transcript is
written to a temporary name in it and linked into place only when complete,
so a harness (or the live mirror) never reads half a transcript, and an
existing file is never replaced.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import ResumeRefused


@dataclass(frozen=True, slots=True)
class Written:
    """A transcript a target wrote, as its importer will read it back."""

    path: Path
    new_id: str  # the harness's own id of the new session
    argv: list[str]  # the command that continues it, run in `cwd`
    format: str  # the importer reading it (io/importers.py)
    source_id: str  # its source id as that importer derives it
    lines: dict[int, str]  # line number -> the entry that line carries (its last)
    prefix: int  # lines written


def home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def folder(target: str, path: Path) -> Path:
    """`path` made (with its parents) and writable, or ResumeRefused naming it."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResumeRefused(target, f"folder {path}", exc.strerror or str(exc)) from None
    if not path.is_dir() or not os.access(path, os.W_OK | os.X_OK):
        raise ResumeRefused(target, f"folder {path}", "not a writable folder")
    return path


def write_new(target: str, path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Write `records` as JSONL at `path`, which must not exist (linked in when whole)."""
    fd, temporary = tempfile.mkstemp(prefix=".forest-resume-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for record in records:
                out.write(orjson.dumps(record) + b"\n")
        try:
            os.link(temporary, path)  # fails if the path exists: never over a file
        except FileExistsError:
            raise ResumeRefused(target, f"file {path}", "exists already") from None
        except OSError as exc:
            raise ResumeRefused(target, f"file {path}", exc.strerror or str(exc)) from None
    finally:
        os.unlink(temporary)
