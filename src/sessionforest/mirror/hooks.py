"""Claude Code hooks: the zero-daemon mirror. Installing them, and running one.

`install` adds one command hook to each of Claude Code's `Stop`,
`SubagentStop`, `PreCompact` and `SessionEnd` events in a `settings.json`
(the user's, or a project's), beside whatever hooks are there: the file is
read as JSON, only our entries are added or replaced, and it is written back
whole through a temporary file and a rename (an unreadable file is refused,
never overwritten). `uninstall` removes exactly the entries `install` adds
(a command hook whose command is ours) and the groups and keys that leave
empty. `status` says what is installed where and what the last runs did.

The hook itself (`run`, behind `forest hook claude-code`) reads the hook's
JSON from stdin (`session_id`, `transcript_path`, `cwd`, `hook_event_name`),
imports that transcript from where its last import stopped
(`Forest.import_followed`) and the session's subagent transcripts that
changed, then exits 0 whatever happened: it must never slow or break Claude
Code. It prints nothing (Claude Code reads a hook's stdout), waits for a busy
store at most `BUSY_MS`, and writes one line per run to the hook log
(`log_path`), where `status` finds the last errors. Several hooks of several
sessions may run at once: each import is its own transactions, and two runs
for the same transcript take turns on a lock file (a run that finds it held
for `LOCK_WAIT` seconds goes on anyway: importing twice stores nothing twice).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import orjson
import platformdirs

from ..errors import InvalidArgument

FORMAT: Final = "claude-code"
EVENTS: Final = ("Stop", "SubagentStop", "PreCompact", "SessionEnd")
HOOK_TIMEOUT: Final = 30  # seconds Claude Code gives our hook before it stops waiting
BUSY_MS: Final = 10_000  # a store busy for longer: this run gives up, the next catches up
LOCK_WAIT: Final = 2.0
LOG_BYTES: Final = 256 * 1024  # the log is cut to its newer half past this
LOG_VARIABLE: Final = "FOREST_HOOK_LOG"


# --- where things are ---------------------------------------------------------------


def settings_path(project: Path | None) -> Path:
    """The user's `~/.claude/settings.json` (honouring CLAUDE_CONFIG_DIR), or a
    project's `DIR/.claude/settings.json`."""
    if project is not None:
        return project.expanduser().absolute() / ".claude" / "settings.json"
    home = os.environ.get("CLAUDE_CONFIG_DIR") or "~/.claude"
    return Path(home).expanduser().absolute() / "settings.json"


def log_path() -> Path:
    """Where hook runs are logged (FOREST_HOOK_LOG, else the user state directory)."""
    given = os.environ.get(LOG_VARIABLE)
    if given:
        return Path(given).expanduser()
    return Path(platformdirs.user_state_dir("sessionforest")) / "hooks.log"


def program() -> list[str]:
    """How a hook calls this sessionforest: the `forest` script beside this Python
    (a hook runs without the shell's PATH of a virtual environment), else Python
    running the CLI module."""
    script = Path(sys.executable).parent / "forest"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "sessionforest.cli.main"]


def hook_command(db: str | None) -> str:
    """The command line `install` writes (`db`: the store, as given at install)."""
    words = program()
    if db is not None:
        words += ["--db", db]
    return shlex.join([*words, "hook", FORMAT])


def is_ours(command: Any) -> bool:
    """Whether a hook command is one `install` writes (whichever store it names)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if words[-2:] != ["hook", FORMAT] or not words:
        return False
    first = Path(words[0]).name
    return first == "forest" or words[1:3] == ["-m", "sessionforest.cli.main"]


# --- the settings file --------------------------------------------------------------


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        found = orjson.loads(path.read_bytes() or b"{}")
    except orjson.JSONDecodeError as exc:
        raise InvalidArgument(
            "settings", f"{path} is not valid JSON ({exc}); fix it first, it was left as it is"
        ) from None
    except OSError as exc:
        raise InvalidArgument("settings", f"cannot read {path}: {exc.strerror}") from None
    if not isinstance(found, dict):
        raise InvalidArgument("settings", f"{path} holds no JSON object; it was left as it is")
    return found


def _write(path: Path, settings: dict[str, Any]) -> None:
    """Write the whole file through a temporary file and a rename (never half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = orjson.dumps(settings, option=orjson.OPT_INDENT_2) + b"\n"
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd, temporary = tempfile.mkstemp(prefix=".settings-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _groups(settings: dict[str, Any], path: Path, event: str) -> list[Any] | None:
    hooks = settings.get("hooks")
    if hooks is None:
        return None
    if not isinstance(hooks, dict):
        raise InvalidArgument("settings", f"{path}: `hooks` is not an object; left as it is")
    groups = hooks.get(event)
    if groups is not None and not isinstance(groups, list):
        raise InvalidArgument("settings", f"{path}: `hooks.{event}` is not a list; left as it is")
    return groups


def _without_ours(groups: list[Any]) -> tuple[list[Any], int]:
    """The groups with our hooks taken out (and groups left empty by that dropped);
    how many were taken."""
    kept, taken = [], 0
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list):
            kept.append(group)
            continue
        mine = [h for h in inner if isinstance(h, dict) and is_ours(h.get("command"))]
        if not mine:
            kept.append(group)
            continue
        taken += len(mine)
        rest = [h for h in inner if h not in mine]
        if rest:
            kept.append({**group, "hooks": rest})
    return kept, taken


def install(path: Path, command: str) -> list[str]:
    """Add our hook to every event in the settings file at `path` (replacing one of
    ours there already); returns the events. Other hooks and keys are kept."""
    settings = _read(path)
    for event in EVENTS:
        _groups(settings, path, event)  # refuse a shape we do not understand first
    hooks = settings.setdefault("hooks", {})
    for event in EVENTS:
        groups, _ = _without_ours(hooks.get(event) or [])
        entry = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT}
        groups.append({"hooks": [entry]})
        hooks[event] = groups
    _write(path, settings)
    return list(EVENTS)


def uninstall(path: Path) -> list[str]:
    """Remove our hooks from the settings file at `path`; returns the events they were
    on (none: the file is not touched)."""
    settings = _read(path)
    removed = []
    for event in EVENTS:
        groups = _groups(settings, path, event)
        if not groups:
            continue
        kept, taken = _without_ours(groups)
        if not taken:
            continue
        removed.append(event)
        if kept:
            settings["hooks"][event] = kept
        else:
            del settings["hooks"][event]
    if not removed:
        return []
    if settings.get("hooks") == {}:
        del settings["hooks"]
    _write(path, settings)
    return removed


def installed(path: Path) -> dict[str, str]:
    """Our hook command on each event it is installed on in the file at `path`."""
    try:
        settings = _read(path)
    except InvalidArgument:
        return {}
    found = {}
    for event in EVENTS:
        try:
            groups = _groups(settings, path, event) or []
        except InvalidArgument:
            continue
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else []:
                if isinstance(hook, dict) and is_ours(hook.get("command")):
                    found[event] = hook["command"]
    return found


# --- the log --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Run:
    """One line of the hook log."""

    at: str
    event: str
    session_id: str
    ok: bool
    added: int
    seconds: float
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "event": self.event,
            "session_id": self.session_id,
            "ok": self.ok,
            "added": self.added,
            "seconds": self.seconds,
            "error": self.error,
        }


def _log(run: Run) -> None:
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("ab") as out:
            out.write(orjson.dumps(run.to_json()) + b"\n")
        if path.stat().st_size > LOG_BYTES:
            _cut(path)
    except OSError:
        pass  # nowhere to say it: the hook still exits 0


def _cut(path: Path) -> None:
    with _locked(path.with_name(path.name + ".lock")):
        data = path.read_bytes()
        if len(data) <= LOG_BYTES:
            return
        newer = data[len(data) // 2 :]
        newer = newer[newer.find(b"\n") + 1 :]
        temporary = path.with_name(path.name + ".cut")
        temporary.write_bytes(newer)
        os.replace(temporary, path)


def runs(limit: int = 1000) -> list[Run]:
    """The last `limit` runs in the log, oldest first (unreadable lines skipped)."""
    try:
        lines = log_path().read_bytes().splitlines()[-limit:]
    except OSError:
        return []
    found = []
    for line in lines:
        try:
            data = orjson.loads(line)
            found.append(Run(**data))
        except (orjson.JSONDecodeError, TypeError):
            continue
    return found


# --- one run ----------------------------------------------------------------------------


@contextlib.contextmanager
def _locked(path: Path, wait: float = LOCK_WAIT) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (waiting at most `wait` seconds, then
    going on without it)."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def transcripts(transcript: Path, session_id: str) -> list[Path]:
    """The session's transcript, then its subagents' (`<dir>/<session>/subagents/`)."""
    found = [transcript]
    below = transcript.parent / (session_id or transcript.stem) / "subagents"
    if below.is_dir():
        found += sorted(p for p in below.glob("*.jsonl") if p.is_file() and not p.is_symlink())
    return found


def run(stdin: bytes, db: str | Path | None) -> Run:
    """One hook run (see the module docstring); never raises."""
    from ..forest import Forest

    started = time.monotonic()
    at = datetime.now(UTC).isoformat(timespec="seconds")
    event, session_id, added = "?", "", 0
    try:
        data = orjson.loads(stdin)
        if not isinstance(data, dict):
            raise ValueError("the hook input is not a JSON object")
        event = str(data.get("hook_event_name") or "?")
        session_id = str(data.get("session_id") or "")
        transcript = data.get("transcript_path")
        if not isinstance(transcript, str) or not transcript:
            raise ValueError("the hook input names no transcript_path")
        path = Path(transcript).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"the transcript {path} is not there")
        key = hashlib.blake2b(str(path).encode(), digest_size=8).hexdigest()
        with (
            _locked(log_path().parent / "locks" / f"{key}.lock"),
            Forest.open(db, busy_timeout_ms=BUSY_MS, background_index=False) as forest,
        ):
            failed = []
            for file in transcripts(path, session_id):
                if file.exists():
                    report = forest.import_followed(FORMAT, file).report
                    added += report.entries
                    failed += [f.message for f in report.failed]
        seconds = round(time.monotonic() - started, 3)
        why = "; ".join(failed)[:500] or None
        done = Run(at, event, session_id, not failed, added, seconds, why)
    except Exception as exc:  # a hook must never fail Claude Code: logged instead
        seconds = round(time.monotonic() - started, 3)
        why = f"{type(exc).__name__}: {exc}"[:500]
        done = Run(at, event, session_id, False, added, seconds, why)
    _log(done)
    return done
