"""Re-importing: idempotent, a longer file adds only its new lines, one transaction per chat.

Files are copies of the real samples, cut or damaged in a temp directory; the
store is compared row for row through the harness's own connection.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import Forest
from sessionforest.io.common import Ids
from sessionforest.model import SessionSource

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
REWIND = (
    DATA / "claude-code/real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
)
COMPACT = DATA / "claude-code/synthetic/dag_compact_after_rewind.jsonl"
PI = DATA / "pi/large-session.jsonl"
Dump = Callable[[], dict[str, list[tuple[Any, ...]]]]


def _copy(tmp_path: Path, source: Path, count: int | None = None) -> Path:
    """`source` (its first `count` lines only, if given) under tmp_path with its name."""
    target = tmp_path / source.name
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    target.write_text("".join(lines[:count]), encoding="utf-8")
    return target


def test_importing_every_sample_twice_changes_nothing(forest: Forest, dump: Dump) -> None:
    sources = [("claude-code", DATA / "claude-code"), ("pi", DATA / "pi")] + [
        ("chatgpt", p) for p in sorted((DATA / "chatgpt").glob("*.json"))
    ]
    first = [forest.import_chats(fmt, path) for fmt, path in sources]
    before = dump()
    second = [forest.import_chats(fmt, path) for fmt, path in sources]
    assert dump() == before
    assert [r.entries for r in second] == [0] * len(sources)
    assert [r.unchanged for r in second] == [r.entries for r in first]
    assert [len(r.chats) for r in second] == [len(r.chats) for r in first]
    assert [r.branches for r in second] == [r.branches for r in first]


@pytest.mark.parametrize(("fmt", "source", "cut"), [("claude-code", REWIND, 30), ("pi", PI, 400)])
def test_a_longer_file_adds_only_its_new_lines(
    forest: Forest, dump: Dump, tmp_path: Path, fmt: str, source: Path, cut: int
) -> None:
    path = _copy(tmp_path, source, cut)
    short = forest.import_chats(fmt, path)
    [chat] = short.chats
    rows = dump()["session_entries"]
    # Someone keeps working in the imported chat before the next import.
    forest.append(chat.session_id, "user.message", {"content": [{"type": "text", "text": "hi"}]},
                  parent=chat.head, stamp=None)  # fmt: skip
    _copy(tmp_path, source)
    full = forest.import_chats(fmt, path)
    total = len(source.read_text().splitlines()) - (1 if fmt == "pi" else 0)
    assert full.chats[0].session_id == chat.session_id
    assert (full.entries, full.unchanged) == (total - short.entries, short.entries)
    after = dump()["session_entries"]
    assert after[: len(rows)] == rows  # the first import's rows, untouched
    sequences = [r["sequence"] for r in after if r["session_id"] == chat.session_id]
    assert sequences == list(range(1, len(sequences) + 1))  # continued after the append
    assert forest.session(chat.session_id).entry_count == total + 1
    assert full.chats[0].head == forest.head(chat.session_id) != chat.head


def test_a_compaction_waits_for_its_summary_line(forest: Forest, tmp_path: Path) -> None:
    path = _copy(tmp_path, COMPACT, 9)  # ends on the compact_boundary line
    first = forest.import_chats("claude-code", path)
    assert first.entries == 8
    assert first.notes == [
        f"{path}: line 9: compaction boundary has no summary yet; it and 0 later records are "
        "left for a later import"
    ]
    _copy(tmp_path, COMPACT)
    second = forest.import_chats("claude-code", path)
    assert (second.entries, second.notes) == (4, [])
    sid = Ids("claude-code", COMPACT.stem).session
    assert forest.entry(sid, Ids("claude-code", COMPACT.stem).entry("cb")).kind == "compaction"


def test_a_bad_line_fails_its_chat_only_and_names_file_and_line(
    forest: Forest, dump: Dump, tmp_path: Path
) -> None:
    forest.import_chats("pi", PI)
    path = _copy(tmp_path, REWIND)
    lines = path.read_text().splitlines()
    lines[6] = lines[6][:-20]  # line 7: cut JSON
    lines[8] = lines[8].replace('"tool_use_id"', '"tool_use_idx"')  # line 9: an unnamed result
    path.write_text("\n".join(lines) + "\n")
    before = dump()
    [failure] = forest.import_chats("claude-code", path).failed
    assert failure.message.startswith(f"{path}:7: invalid JSON")
    assert (failure.path, failure.line) == (str(path), 7)
    assert dump() == before  # nothing of the chat, nothing else touched

    report = forest.import_chats("claude-code", path, skip_bad=True)
    assert [(s.path, s.line) for s in report.skipped] == [(str(path), 7), (str(path), 9)]
    assert "field 'call_id' must be a string" in report.skipped[1].reason
    assert report.entries == len(lines) - 2
    # What hung below a skipped line hangs from nothing now, and says so.
    assert any("line 8: parent" in note for note in report.notes)


def test_a_changed_line_is_a_conflict_and_changes_nothing(
    forest: Forest, dump: Dump, tmp_path: Path
) -> None:
    path = _copy(tmp_path, REWIND)
    forest.import_chats("claude-code", path)
    before = dump()
    lines = path.read_text().splitlines(keepends=True)
    [number] = [n for n, line in enumerate(lines, 1) if "I very much like this idea" in line]
    uuid = json.loads(lines[number - 1])["uuid"]
    path.write_text(path.read_text().replace("I very much like this idea", "I hate this idea"))
    [failure] = forest.import_chats("claude-code", path).failed
    assert failure.message == (
        f"{path}:{number}: uuid {uuid} was imported before with a different content: the "
        "source changed what it said, and a re-import never changes stored entries; "
        "nothing of this chat was imported"
    )
    assert (failure.line, failure.source_id) == (number, f"uuid {uuid}")
    assert dump() == before


def test_the_source_is_recorded_for_every_chat(
    forest: Forest, harness: Harness, tmp_path: Path
) -> None:
    forest.import_chats("claude-code", DATA / "claude-code")
    forest.import_chats("pi", DATA / "pi")
    forest.import_chats("chatgpt", DATA / "chatgpt/image-generation.json")
    native = tmp_path / "native.jsonl"
    with native.open("w") as out:
        forest.export_jsonl(Ids("pi", "d703a1a9-1b7b-4fb1-b512-c9738b1fe617").session, out)
    other = harness.fresh()
    imported = other.import_native(native)
    assert imported.source == SessionSource("native", str(native), imported.id)
    other.close()
    for info in forest.sessions():
        assert info.to_json()["source"] == {
            "format": info.harness,
            "path": info.source_path,
            "id": info.source_id,
        }
        assert Path(str(info.source_path)).is_file()


class Recorder:
    def __init__(self) -> None:
        self.total: int | None = None
        self.done = 0

    def begin(self, total: int) -> None:
        self.total = total

    def advance(self, done: int) -> None:
        self.done += done


@pytest.mark.parametrize(
    ("fmt", "path"),
    [
        ("claude-code", DATA / "claude-code"),
        ("pi", DATA / "pi"),
        ("chatgpt", DATA / "chatgpt/thinking-multi-preamble.json"),
    ],
    ids=["claude-code", "pi", "chatgpt"],
)
def test_progress_counts_every_byte_once(forest: Forest, fmt: str, path: Path) -> None:
    progress = Recorder()
    forest.import_chats(fmt, path, progress=progress)
    files = (
        [p for p in path.rglob("*.json*") if p.suffix in (".jsonl", ".json")]
        if path.is_dir()
        else [path]
    )
    size = sum(p.stat().st_size for p in files if not p.name.endswith(".meta.json"))
    assert progress.total == progress.done == size
