"""A stamp is bounded in time, and a server takes it off its writer thread.

Before: a `sessions/create` whose `cwd` held 12 GB of untracked files made the
first stamp take 48 s, and an unrelated session's append waited 47 s behind
it on the writer. Here the slow worktree is a real git repository with a 4 GiB
sparse untracked file (no disk used; hashing it takes far longer than the 1 s
bound anywhere).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from sessionforest import Forest
from sessionforest.gitstamp import Stamper, compare

from .test_stamps import MSG, git

SPARSE = 4 * 2**30


@pytest.fixture
def huge(tmp_path: Path) -> Path:
    root = tmp_path / "huge"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.invalid")
    git(root, "config", "user.name", "t")
    (root / "a.txt").write_text("alpha\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    with (root / "dump.bin").open("wb") as f:
        f.truncate(SPARSE)  # untracked: every stamp must hash it
    return root


def test_a_stamp_past_its_time_is_unknown_with_the_reason(huge: Path) -> None:
    stamp = Stamper().stamp(huge, seconds=1.0)
    assert stamp is not None
    assert stamp["dirty"] is None and stamp["head"] == git(huge, "rev-parse", "HEAD")
    assert "took longer than 1 s" in stamp["unknown"]
    assert stamp["dirty_files"] == 1
    # Such a stamp never matches or diverges: what it says is that nobody knows.
    verdict = compare(stamp, stamp, "")
    assert verdict.state == "unknown" and "took longer than 1 s" in verdict.reason
    assert compare({"v": 1, "head": "x", "dirty": "y"}, stamp, "").state == "unknown"


def test_git_itself_past_the_time_is_unknown_too(huge: Path) -> None:
    stamp = Stamper().stamp(huge, seconds=0.000001)
    assert stamp is not None and stamp["dirty"] is None
    assert "took longer than" in stamp["unknown"]


def test_appends_record_the_unknown_stamp_and_status_says_why(huge: Path, tmp_path: Path) -> None:
    with Forest.open(tmp_path / "f.db", stamp_seconds=1.0) as forest:
        sid = forest.create_session("huge", cwd=huge)
        entry = forest.append(sid, "user.message", MSG)
        assert entry.stamp is not None and "took longer" in entry.stamp["unknown"]
        status = forest.divergence(sid)
        assert status.state == "unknown" and "stamp is unknown" in status.reason
        # A worktree that can be stamped in time still is, by the same store.
        small = tmp_path / "small"
        small.mkdir()
        git(small, "init", "-q", "-b", "main")
        other = forest.create_session("small", cwd=small)
        assert forest.append(other, "user.message", MSG).stamp["dirty"] is not None  # type: ignore[index]


def _post(url: str, method: str, params: dict[str, Any]) -> Any:
    reply = httpx.post(url + "/rpc", timeout=120, json={"jsonrpc": "2.0", "method": method,
                                                         "params": params, "id": 1})  # fmt: skip
    body = reply.json()
    assert "result" in body, body
    return body["result"]


def test_a_slow_stamp_never_holds_up_another_sessions_append(huge: Path, tmp_path: Path) -> None:
    from server.conftest import start_limited

    db = tmp_path / "store.db"
    server = start_limited(db, {"stamp_seconds": 3.0}, bind_roots=[str(tmp_path)])
    try:
        slow = _post(server.url, "sessions/create", {"title": "huge", "cwd": str(huge)})["id"]
        quick = _post(server.url, "sessions/create", {"title": "quick"})["id"]
        finished: list[str] = []

        def append(sid: str, name: str) -> None:
            _post(server.url, "sessions/append", {"session_id": sid, "kind": "user.message",
                                                   "payload": MSG})  # fmt: skip
            finished.append(name)

        slow_thread = threading.Thread(target=append, args=(slow, "slow"))
        slow_thread.start()
        time.sleep(0.3)  # the slow stamp is being taken
        append(quick, "quick")  # before: it waited on the writer behind the stamp
        slow_thread.join(120)
        assert finished == ["quick", "slow"]
        head = _post(server.url, "sessions/log", {"session_id": slow})[-1]
        assert "took longer than 3 s" in head["stamp"]["unknown"]
        status = _post(server.url, "sessions/status", {"session_id": slow})
        assert status["divergence"] == "unknown" and "stamp is unknown" in status["reason"]
        many = _post(server.url, "sessions/append_many", {"session_id": slow, "items": [
            {"kind": "user.message", "payload": MSG}]})  # fmt: skip
        assert "unknown" in many[0]["stamp"]
    finally:
        assert server.stop() == 0
