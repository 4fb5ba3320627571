"""`forest watch` as a real process: JSON lines, a clean stop on SIGINT and SIGTERM, and
a kill -9 in the middle of a large file followed by a restart that loses nothing and
stores nothing twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import pytest

from follow_helpers import contents
from sessionforest import Forest
from sessionforest.errors import ForestError
from sessionforest.mirror.sources import real

from .conftest import DEADLINE, turn_lines, wait_for

FOREST = [sys.executable, "-m", "sessionforest.cli.main"]


def watch(db: Path, home: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    env.pop("FOREST_DB", None)
    return subprocess.Popen(
        [*FOREST, "--db", str(db), "watch", "--json", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_line(stream: IO[str] | None) -> dict[str, Any]:
    assert stream is not None
    line = stream.readline()
    assert line, "the watcher ended without saying anything"
    found: dict[str, Any] = json.loads(line)
    return found


def offset_in(db: Path, path: Path) -> int:
    try:
        with Forest.open(db, readonly=True) as forest:
            rows = {r.path: r.offset for r in forest.followed_sources()}
    except ForestError:
        return -1  # not made yet, or being migrated by the watcher as it starts
    return rows.get(str(real(path)), -1)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_json_lines_and_a_clean_stop_exits_0(tmp_path: Path, sig: signal.Signals) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "p"
    project.mkdir(parents=True)
    transcript = project / "s.jsonl"
    transcript.write_bytes(b"".join(turn_lines("s", 0, 6)))
    db = tmp_path / "f.db"
    proc = watch(db, home)
    try:
        first = read_line(proc.stdout)  # the catch-up: the chat as it was
        assert (first["event"], first["created"], first["added"]) == ("imported", True, 6)
        assert first["path"] == str(real(transcript)) and first["format"] == "claude-code"
        with transcript.open("ab") as out:
            out.write(b"".join(turn_lines("s", 6, 2)))
        grown = read_line(proc.stdout)  # the new turn, as it is written
        assert (grown["created"], grown["added"], grown["entries"]) == (False, 2, 8)
        assert grown["session_id"] == first["session_id"] and grown["title"]
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out == ""  # nothing more after the stop
    with Forest.open(db) as forest:
        assert forest.session(first["session_id"]).entry_count == 8
        assert forest.check().ok


def test_kill_9_mid_a_large_file_then_a_restart_loses_nothing_and_doubles_nothing(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "big"
    project.mkdir(parents=True)
    transcript = project / "large.jsonl"
    with transcript.open("wb") as out:
        for start in range(0, 30_000, 1000):
            out.write(b"".join(turn_lines("big", start, 1000, words=60)))
    db = tmp_path / "f.db"
    killed_mid = False
    for attempt in range(5):  # a kill that lands after the import committed proves less
        proc = watch(db, home)
        time.sleep(0.5 + attempt * 0.4)
        done = offset_in(db, transcript) == transcript.stat().st_size
        proc.kill()  # SIGKILL: no clean stop, a transaction may be open
        proc.wait(DEADLINE)
        if not done and offset_in(db, transcript) < transcript.stat().st_size:
            killed_mid = True
            break
    assert killed_mid, "every kill came after the import finished: the file is too small"
    # More turns written while it was down, then a restart.
    with transcript.open("ab") as out:
        out.write(b"".join(turn_lines("big", 30_000, 10, words=60)))
    proc = watch(db, home)
    try:
        wait_for(lambda: offset_in(db, transcript) == transcript.stat().st_size, deadline=600)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    with Forest.open(tmp_path / "whole.db") as whole:
        whole.import_chats("claude-code", transcript)
        expected = contents(whole)
    with Forest.open(db) as forest:
        assert contents(forest) == expected  # nothing lost, nothing twice
        (chat,) = forest.sessions()
        assert chat.entry_count == 30_010
        assert forest.check().ok
