"""What the mirror's tests share: real transcript files written in pieces, a Watcher
running on a thread over real OS notifications, and waits with a deadline."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sessionforest import Forest
from sessionforest.mirror.sources import Location
from sessionforest.mirror.watcher import Change, Watcher

DATA = Path(__file__).parents[2].parent / "shared" / "data"
CLAUDE = DATA / "claude-code"
POMODORO = CLAUDE / "ai-sessions" / "claude-code-pomodoro-timer.jsonl"
DEADLINE = 90.0  # seconds a test waits for the watcher; it needs well under one


def wait_for(
    done: Callable[[], bool], what: str = "the watcher", deadline: float = DEADLINE
) -> None:
    end = time.monotonic() + deadline
    while not done():
        assert time.monotonic() < end, f"{what} did not get there within {deadline:.0f} s"
        time.sleep(0.02)


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def entries(forest: Forest) -> dict[str, set[str]]:
    """Every chat's entry ids (hidden worker chats too)."""
    return {s.id: {e.id for e in forest.entries(s.id)} for s in forest.sessions()}


@dataclass
class Running:
    """A watcher on its thread, and every change it reported."""

    watcher: Watcher
    stop: threading.Event
    thread: threading.Thread
    changes: list[Change] = field(default_factory=list)

    def added(self) -> int:
        return sum(c.added for c in self.changes if c.event == "imported")


@contextmanager
def watching(forest: Forest, *locations: Location, look_again: float = 0.2) -> Iterator[Running]:
    changes: list[Change] = []
    watcher = Watcher(forest, locations, changes.append, look_again=look_again)
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), name="test-watcher")
    running = Running(watcher, stop, thread, changes)
    thread.start()
    try:
        yield running
    finally:
        stop.set()
        thread.join(DEADLINE)
        assert not thread.is_alive(), "the watcher did not stop"


def claude_location(root: Path) -> Location:
    root.mkdir(parents=True, exist_ok=True)
    return Location.of("claude-code", root)


def turn_lines(session: str, start: int, count: int, words: int = 20) -> list[bytes]:
    """`count` Claude Code records (a user line, then an assistant reply, alternating),
    numbered from `start`, each the child of the one before: a transcript that grows."""
    import orjson

    found = []
    for n in range(start, start + count):
        user = n % 2 == 0
        text = f"turn {n} " + " ".join(f"w{(n * 7 + k) % 997}" for k in range(words))
        message: dict[str, object] = (
            {"role": "user", "content": text}
            if user
            else {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-x",
                  "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
        )  # fmt: skip
        record = {
            "type": "user" if user else "assistant",
            "uuid": f"{session}-{n}",
            "parentUuid": f"{session}-{n - 1}" if n else None,
            "sessionId": session,
            "timestamp": f"2026-01-01T00:{n // 3600 % 60:02d}:{n % 60:02d}.000Z",
            "cwd": "/tmp/project",
            "message": message,
        }
        found.append(orjson.dumps(record) + b"\n")
    return found
