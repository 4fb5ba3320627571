"""Hand-offs on every backend: the rows `forest resume` keeps (store/base/handoffs.py), and an
import of a handed-off transcript joining the chat it continues (io/handoff.py)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from resume_helpers import branched_chat
from sessionforest import Forest
from sessionforest.resume import resume
from sessionforest.store.base import Handoff


def test_handoff_rows_are_kept_replaced_and_listed(forest: Forest) -> None:
    sid, ids = branched_chat(forest)
    first = Handoff("codex", "t1", sid, ids["old"], "/x/a.jsonl", "codex", "{}",
                    "2026-01-02T00:00:00.000Z")  # fmt: skip
    later = Handoff("claude-code", "t2", sid, ids["new"], "/x/b.jsonl", "claude-code", "{}",
                    "2026-01-03T00:00:00.000Z")  # fmt: skip
    forest.keep_handoff(later)
    forest.keep_handoff(first)
    assert forest.handoff("codex", "t1") == first
    assert forest.handoff("codex", "t2") is None and forest.handoff("gemini", "t1") is None
    assert forest.handoffs(sid) == [first, later]
    replaced = Handoff(first.format, first.source_id, sid, ids["u2"], first.path, first.target,
                       '{"prefix": 1}', first.created_at)  # fmt: skip
    forest.keep_handoff(replaced)
    assert forest.handoff("codex", "t1") == replaced and len(forest.handoffs(sid)) == 2
    assert forest.handoffs("nosuchsession") == []


def test_a_handed_off_transcript_joins_its_chat(forest: Forest, tmp_path: Path) -> None:
    """The Claude Code transcript `resume` wrote, with one turn appended as Claude Code
    appends it: imported, only that turn is new, under the handed-off entry."""
    sid, ids = branched_chat(forest)
    before = len(forest.entries(sid))
    env = {"HOME": str(tmp_path / "home"), "PATH": "/nonexistent"}
    done = resume(forest, sid, to="claude-code", at=ids["old"], cwd=str(tmp_path), env=env)
    path = Path(done["path"])
    last = json.loads(path.read_text().splitlines()[-1])
    turn = dict(last, parentUuid=last["uuid"], uuid=str(uuid.uuid4()), type="user",
                message={"role": "user", "content": "a turn after the hand-off"})  # fmt: skip
    with path.open("a") as out:
        out.write(json.dumps(turn) + "\n")
    report = forest.import_chats("claude-code", path)
    assert [c.session_id for c in report.chats] == [sid] and report.entries == 1
    assert len(forest.entries(sid)) == before + 1
    (added,) = [e for e in forest.entries(sid)[before:]]
    assert added.parent_id == ids["old"] and forest.head(sid) == added.id
    info = forest.session(sid)
    assert info.title == "resume me" and len(forest.sessions()) == 1
    assert forest.import_chats("claude-code", path).entries == 0
