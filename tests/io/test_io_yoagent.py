"""yoagent Session JSONL: import with `Session.from_jsonl` semantics, export loadable by it.

A session built with our yoagent-compatible `Session` is the reference: its
own JSONL is imported, compared with what `Session.from_jsonl` reads, and
exported back byte for byte.
"""

from __future__ import annotations

import io
import itertools
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from sessionforest import Forest, Session
from sessionforest.io.common import Ids

if TYPE_CHECKING:
    from conftest import Raw

CLAUDE = Path(__file__).resolve().parents[3] / "shared" / "data" / "claude-code"
REWIND = CLAUDE / "real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
USAGE = {"input": 10, "output": 5, "cacheRead": 1, "cacheWrite": 0, "totalTokens": 16}


def user(text: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def assistant(*content: dict[str, Any], stop: str = "stop", ts: int = 2) -> dict[str, Any]:
    return {"role": "assistant", "content": list(content), "stopReason": stop, "model": "m1",
            "provider": "anthropic", "usage": USAGE, "timestamp": ts}  # fmt: skip


def reference_session() -> Session:
    """fork-edit-rerun as in yoagent's tests, with every message and block kind."""
    clock = itertools.count(1_767_225_600_000, 1000)
    s = Session(clock=lambda: next(clock))
    s.append(user("draft a plan"))
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "plan.md"}}
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    s.append(assistant(thinking, call, stop="toolUse"))
    result = [{"type": "text", "text": "# plan"}]
    s.append({"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": result,
              "isError": False, "timestamp": 3})  # fmt: skip
    s.append(assistant({"type": "text", "text": "here is the plan"}))
    s.checkpoint("first-draft")
    s.append(user("make it an app"))
    s.seek_checkpoint("first-draft")
    image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    s.append({"role": "user", "content": [*user("a library instead")["content"], image],
              "timestamp": 4})  # fmt: skip
    s.append({"role": "extension", "kind": "note", "data": {"seen": True}})
    s.append(assistant({"type": "text", "text": "a library plan"}))
    return s


def test_import_matches_from_jsonl_and_export_round_trips(
    forest: Forest, raw: Raw, tmp_path: Path
) -> None:
    session = reference_session()
    text = session.to_jsonl()
    path = tmp_path / "session.jsonl"
    path.write_text(text)
    report = forest.import_chats("yoagent", path)
    [info] = raw.chats_from(forest, path)
    loaded = Session.from_jsonl(text)
    labelled = [e for e in loaded.entries() if e.label]
    parents = {e.id: e.parent_id for e in loaded.entries()}
    parents.update({f"{e.id}#label": e.id for e in labelled})
    raw.assert_tree(forest, info, raw.Tree(parents, loaded.head))
    assert [c.payload["label"] for c in forest.checkpoints(info.id)] == ["first-draft"]
    assert (info.title, report.branches) == ("draft a plan", 1)

    out = io.StringIO()
    assert forest.export_yoagent(info.id, out) == (len(loaded), 0)
    assert out.getvalue() == text
    assert Session.from_jsonl(out.getvalue()) == loaded

    again = forest.import_chats("yoagent", path)
    assert (again.entries, again.unchanged) == (0, report.entries)


def _line(id: str, parent: str | None, message: Any) -> str:
    return json.dumps({"id": id, "parent_id": parent, "message": message, "timestamp": 1})


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("not json", "invalid JSON"),
        (_line("e1", None, user("again")), "duplicate session entry id: e1"),
        (_line("e9", "e7", user("later")), "unknown parent e7"),
        (_line("e9", None, []), "field `message` must be a JSON object"),
        (
            _line("e9", None, {"role": "toolResult", "content": []}),
            "field 'call_id' must be a string",
        ),
    ],
)
def test_a_bad_line_is_named_and_skip_bad_reports_it(
    forest: Forest, tmp_path: Path, line: str, why: str, dump: Any
) -> None:
    lines = reference_session().to_jsonl().split("\n")
    lines.insert(2, line)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines))
    before = dump()
    [failure] = forest.import_chats("yoagent", path).failed
    assert re.match(rf"{path}:3: .*{why}", failure.message)
    assert failure.line == 3
    assert dump() == before
    report = forest.import_chats("yoagent", path, skip_bad=True)
    assert [(s.line, why in s.reason) for s in report.skipped] == [(3, True)]
    assert report.entries == len(lines) - 1 + 1  # every other line, plus the label's checkpoint


def test_exporting_a_claude_code_chat_gives_a_loadable_yoagent_session(forest: Forest) -> None:
    forest.import_chats("claude-code", REWIND)
    sid = Ids("claude-code", REWIND.stem).session
    out = io.StringIO()
    written, left_out = forest.export_yoagent(sid, out)
    session = Session.from_jsonl(out.getvalue())
    assert (len(session), left_out) == (written, 0)
    records = [json.loads(line) for line in out.getvalue().split("\n")]
    assert {r["message"]["role"] for r in records} == {"user", "assistant", "toolResult"}
    assert all(set(r) <= {"id", "parent_id", "message", "timestamp", "label"} for r in records)
    # The head's path is the active branch, in yoagent's message shapes.
    active = [e for e in forest.active_path(sid) if e.context_visibility == "context"]
    path = session.path_messages()
    assert len(path) == len(active)
    assert path[-1]["content"] == [
        {"type": "text", "text": b["text"]} for b in active[-1].payload["content"]
    ]

    # Rewound to an earlier entry, the head must be the last line: what hangs
    # below it cannot be written and is counted as left out.
    forest.move_head(sid, active[2].id)
    out = io.StringIO()
    written_back, left_out = forest.export_yoagent(sid, out)
    rewound = Session.from_jsonl(out.getvalue())
    assert left_out > 0 and written_back + left_out == written
    assert len(rewound.path_messages()) == 3
