"""The server's group commit answers every caller, whatever fails around the commit:
an append waiting on a group must never wait forever (server/threads.py `Writer`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

from sessionforest import Forest
from sessionforest.forest import AppendRequest
from sessionforest.server.changes import Change
from sessionforest.server.threads import Writer


def request(sid: str, text: str) -> AppendRequest:
    return AppendRequest(sid, "user.message", {"content": [{"type": "text", "text": text}]})


async def appends(writer: Writer, sid: str, n: int) -> list[object]:
    # Bounded: a future the writer never answers fails the test instead of hanging it.
    gathered = asyncio.gather(
        *(writer.append(request(sid, f"turn {i}")) for i in range(n)), return_exceptions=True
    )
    return list(await asyncio.wait_for(gathered, timeout=10))


def test_a_failing_guard_answers_every_caller_and_writes_nothing(tmp_path: Path) -> None:
    forest = Forest.open(tmp_path / "f.db")
    sid = forest.create_session("chat")

    @contextlib.contextmanager
    def broken_guard() -> Iterator[None]:
        raise RuntimeError("guard failed")
        yield

    writer = Writer(forest, lambda changes: None, broken_guard)
    try:
        outcomes = asyncio.run(appends(writer, sid, 3))
    finally:
        writer.close()
    assert [type(o) for o in outcomes] == [RuntimeError] * 3
    assert all("guard failed" in str(o) for o in outcomes)
    assert forest.active_path(sid) == []
    forest.close()


def test_a_failing_change_report_still_answers_what_was_committed(tmp_path: Path) -> None:
    forest = Forest.open(tmp_path / "f.db")
    sid = forest.create_session("chat")
    reported: list[list[Change]] = []

    def on_commit(changes: list[Change]) -> None:
        reported.append(changes)
        raise RuntimeError("subscriber failed")

    writer = Writer(forest, on_commit, contextlib.nullcontext)
    try:
        outcomes = asyncio.run(appends(writer, sid, 3))
    finally:
        writer.close()
    path = forest.active_path(sid)
    assert reported, "the change was reported before the report failed"
    assert [o.id for o in outcomes] == [e.id for e in path]  # type: ignore[attr-defined]
    assert [e.payload["content"][0]["text"] for e in path] == ["turn 0", "turn 1", "turn 2"]
    forest.close()
