"""Where each harness keeps its history on this machine: `forest sources` and `forest import`.

Each `Harness` names its format, the variables it honours (looked at first, in
order: `CODEX_HOME`, `CLAUDE_CONFIG_DIR`, `XDG_DATA_HOME`, ...) and its
defaults. `find` lists every location that exists, with its files and chats
and what of it the store does not hold yet (`Location.new`: files no chat
was imported from; `Location.changed`: files written since their chats were
last imported). Nothing here reads a transcript's contents beyond counting
(an OpenCode database is opened read-only).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from . import aider, claude_code, cline, codex, copilot, gemini, opencode
from .common import walk


@dataclass(frozen=True, slots=True)
class Harness:
    """One harness: its CLI name, import format, harness id and where it keeps chats."""

    name: str  # `forest import NAME`
    format: str  # the importer (io/importers.READERS)
    harness: str  # the harness id its chats carry
    what: str  # in a sentence: "Codex CLI rollouts"
    roots: Callable[[], list[tuple[Path, str]]]  # (location, the variable or "default")
    accept: Callable[[Path], bool]  # the files of a location that are chats


def _env(name: str, *below: str) -> list[tuple[Path, str]]:
    value = os.environ.get(name)
    return [(Path(value).expanduser().joinpath(*below), name)] if value else []


def _home(*below: str) -> Path:
    return Path.home().joinpath(*below)


def _claude() -> list[tuple[Path, str]]:
    return [*_env("CLAUDE_CONFIG_DIR", "projects"), (_home(".claude", "projects"), "default")]


def _codex() -> list[tuple[Path, str]]:
    found = []
    for below in ("sessions", "archived_sessions"):
        found += [*_env("CODEX_HOME", below), (_home(".codex", below), "default")]
    return found


def _gemini() -> list[tuple[Path, str]]:
    return [*_env("GEMINI_CLI_HOME", ".gemini", "tmp"), (_home(".gemini", "tmp"), "default")]


def _data_home(*below: str) -> list[tuple[Path, str]]:
    return [*_env("XDG_DATA_HOME", *below), (_home(".local", "share", *below), "default")]


def _opencode() -> list[tuple[Path, str]]:
    database = os.environ.get("OPENCODE_DB")
    found = [(Path(database).expanduser(), "OPENCODE_DB")] if database else []
    for root, origin in _data_home("opencode"):
        found += [(root / "opencode.db", origin), (root / "storage", origin)]
    return found


def _copilot() -> list[tuple[Path, str]]:
    return [*_env("COPILOT_HOME", "session-state"), (_home(".copilot", "session-state"), "default")]


def _aider() -> list[tuple[Path, str]]:
    return [
        *_env("AIDER_CHAT_HISTORY_FILE"),
        (Path.cwd() / ".aider.chat.history.md", "the current directory"),
        (_home(".aider.chat.history.md"), "default"),
    ]


# VS Code and its forks keep an extension's storage under their user folder.
_EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
_CLINE = ("saoudrizwan.claude-dev", "rooveterinaryinc.roo-cline")


def _editor_roots() -> list[tuple[Path, str]]:
    config = os.environ.get("XDG_CONFIG_HOME")
    bases = [(Path(config), "XDG_CONFIG_HOME")] if config else []
    bases += [
        (_home(".config"), "default"),
        (_home("Library", "Application Support"), "default"),
    ]
    appdata = os.environ.get("APPDATA")
    if appdata:
        bases.append((Path(appdata), "APPDATA"))
    return bases


def _cline() -> list[tuple[Path, str]]:
    return [
        (base / editor / "User" / "globalStorage" / extension / "tasks", origin)
        for base, origin in _editor_roots()
        for editor in _EDITORS
        for extension in _CLINE
    ]


def _pi() -> list[tuple[Path, str]]:
    return [
        *_env("PI_CODING_AGENT_DIR", "sessions"),
        (_home(".pi", "agent", "sessions"), "default"),
    ]


def _is(name: str) -> Callable[[Path], bool]:
    return lambda path: path.name == name


HARNESSES: list[Harness] = [
    Harness("claude-code", claude_code.FORMAT, "claude-code", "Claude Code transcripts",
            _claude, lambda p: p.suffix == ".jsonl"),
    Harness("codex", codex.FORMAT, codex.HARNESS, "Codex CLI rollouts", _codex, codex.accept),
    Harness("gemini", gemini.FORMAT, gemini.HARNESS, "Gemini CLI chats", _gemini, gemini.accept),
    Harness("copilot", copilot.FORMAT, copilot.HARNESS, "GitHub Copilot CLI sessions",
            _copilot, copilot.accept),
    Harness("opencode", opencode.FORMAT, opencode.HARNESS, "OpenCode sessions", _opencode,
            lambda p: p.suffix == ".json"),
    Harness("aider", aider.FORMAT, aider.HARNESS, "Aider chat histories", _aider, aider.accept),
    Harness("cline", cline.FORMAT, cline.HARNESS, "Cline and Roo Code tasks", _cline, cline.accept),
    Harness("pi", "pi", "pi", "pi coding-agent sessions", _pi, lambda p: p.suffix == ".jsonl"),
]  # fmt: skip


def register(harness: Harness) -> None:
    """Add a harness (its importer module calls this once)."""
    if all(h.name != harness.name for h in HARNESSES):
        HARNESSES.append(harness)


@dataclass(slots=True)
class Location:
    """One place a harness keeps chats, as found now."""

    harness: Harness
    path: Path
    origin: str  # the variable that named it, or "default"
    files: list[Path] = field(default_factory=list)
    chats: int = 0
    imported: int = 0  # files some chat was imported from
    new: int = 0  # files no chat was imported from
    changed: int = 0  # files written after the newest entry imported from them

    def to_json(self) -> dict[str, Any]:
        return {
            "harness": self.harness.harness,
            "format": self.harness.format,
            "name": self.harness.name,
            "path": str(self.path),
            "from": self.origin,
            "files": len(self.files),
            "chats": self.chats,
            "imported": self.imported,
            "new": self.new,
            "changed": self.changed,
        }


# What the store says of each source file: (source path -> newest time a chat from it
# was written). The facade passes it in (sessions' source paths and update times).
Imported = dict[str, str]


def find(imported: Imported, harnesses: Iterable[Harness] | None = None) -> list[Location]:
    """Every location of every harness that exists, counted against `imported`."""
    out: list[Location] = []
    seen: set[Path] = set()
    for harness in harnesses or HARNESSES:
        for path, origin in harness.roots():
            try:
                resolved = path.resolve()
            except OSError:
                continue
            if resolved in seen or not path.exists():
                continue
            seen.add(resolved)
            out.append(_count(Location(harness, path, origin), imported))
    return out


def _count(location: Location, imported: Imported) -> Location:
    path, accept = location.path, location.harness.accept
    if path.is_file():
        location.files = [path]
    else:
        location.files = walk(path, accept).files
    if location.harness.format == "opencode":
        location.chats = (
            _opencode_sessions(path)
            if path.is_file()
            else sum(1 for f in location.files if f.parent.parent.name == "session")
        )
    elif location.harness.format == "aider":
        location.chats = sum(_aider_runs(f) for f in location.files)
    elif location.harness.format == "codex":
        # a rewind's segment file (`..-<thread>_<segment>.jsonl`) is its thread's chat
        location.chats = sum(1 for f in location.files if codex.segment_of(f) is None)
    elif location.harness.format == "gemini":
        # a session's stray file of a later minute (gemini.session_key) is that session's chat
        location.chats = len(
            {
                gemini.session_key(f) or str(f)
                for f in location.files
                if not f.name.startswith("checkpoint-")
            }
        )
    else:
        location.chats = sum(1 for f in location.files if not f.name.startswith("checkpoint-"))
    twin = _TWINS.get(location.harness.format)
    twins = _twins(imported, twin[0]) if twin else {}
    for file in location.files:
        when = imported.get(str(file))
        if when is None and twins and twin:
            key = twin[1](file)
            when = twins.get(key) if key is not None else None  # its session's chat holds it
        if when is None:
            location.new += 1
            continue
        location.imported += 1
        if _mtime(file) > _later(when):
            location.changed += 1
    return location


def _codex_thread(path: Path) -> str | None:
    """The Codex thread a rollout is of (the id its name ends with)."""
    name = path.name
    if name.startswith("rollout-") and name.endswith(".jsonl"):
        return name[: -len(".jsonl")][-36:]
    return None


# Files that are not a chat of their own, by format: (the key of an imported chat's source
# file, the key of such a file). A file whose key an imported chat's file has is imported:
# a Codex rewind's segment goes into its thread's chat; a Gemini session's stray file of a
# later minute (gemini.session_key) holds no turn of its own.
_TWINS: dict[str, tuple[Callable[[Path], str | None], Callable[[Path], str | None]]] = {
    "codex": (_codex_thread, codex.segment_of),
    "gemini": (gemini.session_key, gemini.session_key),
}


def _twins(imported: Imported, key_of: Callable[[Path], str | None]) -> dict[str, str]:
    """The keys of the imported source files, each with the time of its chat's newest entry."""
    keys: dict[str, str] = {}
    for path, when in imported.items():
        key = key_of(Path(path))
        if key is not None:
            keys[key] = max(keys.get(key, ""), when)
    return keys


# A file written this long after the newest entry imported from it has more to import
# (the store keeps when a chat's newest entry was written, not when it was imported).
SLACK_S = 2.0


def _later(when: str) -> float:
    try:
        return datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp() + SLACK_S
    except ValueError:
        return 0.0


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _opencode_sessions(path: Path) -> int:
    """Sessions in an OpenCode database, read-only (never migrated, never locked)."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return 0
    try:
        return int(conn.execute("SELECT count(*) FROM session").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def _aider_runs(path: Path) -> int:
    try:
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.startswith(b"# aider chat started at"))
    except OSError:
        return 0
