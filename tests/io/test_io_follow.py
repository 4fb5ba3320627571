"""`import_source`: one source from a saved position (the live mirror's entry point).

A transcript written in pieces (cut mid-line too) and imported after each piece
ends exactly as one whole import of the finished file; each call reads only what
was appended; a replaced file starts over; a position that does not parse is refused.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from follow_helpers import contents, grow
from sessionforest import Forest, InvalidArgument
from sessionforest.io.position import SourcePosition

DATA = Path(__file__).parents[2].parent / "shared" / "data"
CLAUDE = DATA / "claude-code"
CLAUDE_FILES = [
    CLAUDE / "ai-sessions" / "claude-code-pomodoro-timer.jsonl",
    CLAUDE / "synthetic" / "dag_compact_after_rewind.jsonl",
    CLAUDE / "synthetic" / "memory_sidechain.jsonl",
    CLAUDE / "synthetic" / "dag_within_fork.jsonl",
]


def _cuts(size: int, pieces: int) -> list[int]:
    step = max(1, size // pieces)
    return [step * k + 7 for k in range(1, pieces) if step * k + 7 < size]  # mid-line cuts


@pytest.mark.parametrize("source", CLAUDE_FILES, ids=lambda p: p.name)
def test_claude_code_in_pieces_equals_one_whole_import(tmp_path: Path, source: Path) -> None:
    target = tmp_path / "projects" / "p" / source.name
    with Forest.open(tmp_path / "pieces.db") as pieces:
        positions, added = grow(
            pieces, "claude-code", source, target, _cuts(source.stat().st_size, 9)
        )
        grown = contents(pieces)
        # Once the file is whole, a call reads nothing more and adds nothing.
        report, again = pieces.import_source("claude-code", target, positions[-1])
        assert report.entries == 0 and again == positions[-1]
    with Forest.open(tmp_path / "whole.db") as whole:
        whole.import_chats("claude-code", target)
        assert contents(whole) == grown
    # Every piece after the first added something new, and the positions only advanced.
    offsets = [p.offset for p in positions]
    assert offsets == sorted(offsets) and offsets[-1] == source.stat().st_size
    assert sum(added) == sum(len(s["entries"]) for s in grown.values())


def test_each_call_reads_only_what_was_appended(tmp_path: Path) -> None:
    source = CLAUDE_FILES[0]
    lines = source.read_bytes().splitlines(keepends=True)
    target = tmp_path / "s.jsonl"
    target.write_bytes(b"".join(lines[:50]))
    with Forest.open(tmp_path / "f.db") as forest:
        _, first = forest.import_source("claude-code", target)
        assert first.line == 50 and first.offset == target.stat().st_size
        with target.open("ab") as out:
            out.write(b"".join(lines[50:60]))
            out.write(lines[60][:20])  # half of line 61: it waits
        report, second = forest.import_source("claude-code", target, first.to_json())
        assert second.line == 60 and report.unchanged == 0  # nothing before line 51 re-read
        assert any("incomplete" in note for note in report.notes)
        with target.open("ab") as out:
            out.write(lines[60][20:])
        _, third = forest.import_source("claude-code", target, second)
        assert third.line == 61


def test_a_replaced_file_starts_over_and_changes_nothing_stored(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    shutil.copy(CLAUDE_FILES[0], target)
    with Forest.open(tmp_path / "f.db") as forest:
        _, position = forest.import_source("claude-code", target)
        before = contents(forest)
        other = CLAUDE_FILES[3].read_bytes()
        target.write_bytes(other)  # another transcript under the same name: smaller
        report, after = forest.import_source("claude-code", target, position)
        assert report.ok and after.offset == len(other)
        # Read from its first line again: the new records added, nothing stored changed.
        assert report.entries > 0 and after.line == len(other.splitlines())
        (sid,) = before
        assert before[sid]["entries"] < contents(forest)[sid]["entries"]


def test_a_position_that_is_not_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match=r"position\.offset"):
        SourcePosition.from_json({"format": "codex", "path": "x", "offset": -1})
    with pytest.raises(InvalidArgument, match="position"):
        SourcePosition.from_json(["not", "an", "object"])
