"""Untrusted input: no way out of the given directory, no huge line in memory, no code run.

Symlinks and over-long lines are built in a temp directory around copies of
the real samples.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest

from sessionforest import Forest
from sessionforest.io import common

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
SIMPLE = DATA / "claude-code/synthetic/dag_simple.jsonl"


def test_symlinks_out_of_the_directory_are_refused(forest: Forest, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jsonl").write_bytes(SIMPLE.read_bytes())
    root = tmp_path / "projects"
    (root / "proj").mkdir(parents=True)
    (root / "proj" / "real.jsonl").write_bytes(SIMPLE.read_bytes())
    (root / "proj" / "link-out.jsonl").symlink_to(outside / "secret.jsonl")
    (root / "proj" / "link-in.jsonl").symlink_to(root / "proj" / "real.jsonl")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    (root / "proj" / "notes.pickle").write_bytes(b"\x80\x04K\x01.")

    report = forest.import_chats("claude-code", root)
    assert [c.source_path for c in report.chats] == [str(root / "proj" / "real.jsonl")]
    assert sorted(report.notes) == [
        f"{root / 'escape'}: refused: symlinked directory: not followed",
        f"{root / 'proj' / 'link-out.jsonl'}: refused: symlink points outside {root}",
    ]


def test_a_huge_line_is_refused_without_being_loaded(
    forest: Forest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "MAX_LINE", 1 << 20)
    record = {"type": "user", "uuid": "big", "parentUuid": "c", "timestamp": "2025-07-01T00:00:00Z",
              "message": {"role": "user", "content": "x" * (24 << 20)}}  # fmt: skip
    lines = SIMPLE.read_text().splitlines()
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join([*lines[:3], json.dumps(record), *lines[3:]]) + "\n")

    tracemalloc.start()
    try:
        [failure] = forest.import_chats("claude-code", path).failed
        assert failure.message.startswith(f"{path}:4: line is longer than 1 MiB")
        report = forest.import_chats("claude-code", path, skip_bad=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 << 20  # a 24 MiB line, never held whole
    assert [(s.line, s.reason) for s in report.skipped] == [
        (4, "line is longer than 1 MiB; refusing to load it")
    ]
    assert report.entries == len(lines)


def test_a_huge_conversation_is_refused_too(
    forest: Forest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "MAX_LINE", 1 << 20)
    small = (DATA / "chatgpt/thinking-single-preamble.json").read_text()
    huge = json.loads(small)
    huge["id"], huge["title"] = "huge", "x" * (3 << 20)
    path = tmp_path / "conversations.json"
    path.write_text("[" + small + "," + json.dumps(huge) + "]")
    report = forest.import_chats("chatgpt", path, skip_bad=True)
    assert [s.reason for s in report.skipped] == ["conversation 2: longer than 1 MiB; not loaded"]
    assert len(report.chats) == 1


def test_input_is_data_never_code(forest: Forest, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payload = f"__import__('os').system('touch {marker}')"
    record = {"type": "user", "uuid": "u", "parentUuid": None, "timestamp": "2025-07-01T00:00:00Z",
              "message": {"role": "user", "content": payload}, "__reduce__": payload}  # fmt: skip
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(record) + "\n")
    report = forest.import_chats("claude-code", path)
    [entry] = forest.entries(report.chats[0].session_id)
    assert entry.payload["content"][0]["text"] == payload
    assert not marker.exists() and not os.path.exists("pwned")
