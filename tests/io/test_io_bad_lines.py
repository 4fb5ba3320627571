"""One bad-line path for every line-based importer: the same damage reads the same.

Each format's file is a real sample (yoagent: the export of one), with one
line that is not JSON put in the middle of it.
"""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest

from sessionforest import Forest

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
CLAUDE = DATA / "claude-code/synthetic/dag_fork.jsonl"
PI = DATA / "pi/large-session.jsonl"
NOT_JSON = b'{"id": oops}'


def _lines(fmt: str, tmp_path: Path) -> list[bytes]:
    if fmt == "claude-code":
        return CLAUDE.read_bytes().splitlines()
    if fmt == "pi":
        return PI.read_bytes().splitlines()
    with Forest.open(tmp_path / "scratch.db") as scratch:
        [chat] = scratch.import_chats("pi", PI).chats
        out = io.StringIO()
        scratch.export_yoagent(chat.session_id, out)
    return out.getvalue().encode().splitlines()


@pytest.mark.parametrize("fmt", ["claude-code", "pi", "yoagent"])
def test_a_line_that_is_not_json_gets_the_same_reason_in_every_format(
    forest: Forest, tmp_path: Path, fmt: str
) -> None:
    # Before, yoagent's said it twice: "invalid JSON: failed to parse session line 3:
    # invalid JSON: ...", from its own copy of the bad-line handling.
    try:
        orjson.loads(NOT_JSON)
    except orjson.JSONDecodeError as exc:
        expected = f"invalid JSON: {exc}"
    lines = _lines(fmt, tmp_path)
    lines.insert(2, NOT_JSON)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    [failure] = forest.import_chats(fmt, path).failed
    assert (failure.line, failure.reason) == (3, expected)
    [skipped] = forest.import_chats(fmt, path, skip_bad=True).skipped
    assert (skipped.line, skipped.reason) == (3, expected)
