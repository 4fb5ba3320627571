"""Bytes that are not what a format promises get plain words, in every importer.

Each format's file is a real sample (or, for yoagent and native JSONL, the
export of one), damaged in a temp directory: a byte that is not UTF-8, a BOM
at the start (accepted, as Windows tools write one) or in the middle, UTF-16,
and a line over the cap.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from sessionforest import Forest
from sessionforest.io import common
from sessionforest.io.common import BOM, Ids

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
CLAUDE = DATA / "claude-code/synthetic/dag_fork.jsonl"
PI = DATA / "pi/large-session.jsonl"
MULTI = DATA / "chatgpt/thinking-multi-preamble.json"
LINE_FORMATS = ["claude-code", "pi", "yoagent", "native"]


def _lines(fmt: str, tmp_path: Path) -> list[bytes]:
    """The lines of a real file of `fmt` (yoagent and native: exported from the pi sample)."""
    if fmt == "claude-code":
        return CLAUDE.read_bytes().splitlines()
    if fmt == "pi":
        return PI.read_bytes().splitlines()
    scratch = Forest.open(tmp_path / "scratch.db")
    try:
        [chat] = scratch.import_chats("pi", PI).chats
        out = io.StringIO()
        if fmt == "yoagent":
            scratch.export_yoagent(chat.session_id, out)
        else:
            scratch.export_jsonl(chat.session_id, out)
    finally:
        scratch.close()
    return out.getvalue().encode().splitlines()


def _write(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize("fmt", LINE_FORMATS)
def test_a_byte_that_is_not_utf8_is_named_with_its_line_and_column(
    forest: Forest, tmp_path: Path, fmt: str
) -> None:
    lines = _lines(fmt, tmp_path)
    lines[2] = lines[2][:2] + b"\xff" + lines[2][2:]  # inside the first key of line 3
    path = _write(tmp_path, lines)
    [failure] = forest.import_chats(fmt, path).failed
    assert (failure.path, failure.line) == (str(path), 3)
    assert failure.reason == "line is not valid UTF-8 (byte 0xff at column 3)"
    assert forest.sessions() == []


@pytest.mark.parametrize("fmt", LINE_FORMATS)
def test_a_utf8_bom_opening_the_file_is_skipped(forest: Forest, tmp_path: Path, fmt: str) -> None:
    lines = _lines(fmt, tmp_path)
    plain = Forest.open(tmp_path / "plain.db")
    (tmp_path / "plain").mkdir()
    without = plain.import_chats(fmt, _write(tmp_path / "plain", lines))  # same name
    plain.close()
    lines[0] = BOM + lines[0]
    report = forest.import_chats(fmt, _write(tmp_path, lines))
    assert report.ok and report.skipped == []
    assert report.entries == without.entries > 0
    # yoagent names a chat by its first line: the BOM is not part of it.
    assert [c.session_id for c in report.chats] == [c.session_id for c in without.chats]


@pytest.mark.parametrize("fmt", LINE_FORMATS)
def test_a_bom_inside_the_file_is_named(forest: Forest, tmp_path: Path, fmt: str) -> None:
    lines = _lines(fmt, tmp_path)
    lines[2] = BOM + lines[2]  # two files glued together, say
    [failure] = forest.import_chats(fmt, _write(tmp_path, lines)).failed
    assert failure.line == 3
    assert failure.reason == (
        "line starts with a UTF-8 byte order mark (BOM), which only the start of a file may have"
    )


def test_a_utf16_file_is_named(forest: Forest, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(CLAUDE.read_text().encode("utf-16"))
    [failure] = forest.import_chats("claude-code", path).failed
    assert failure.reason == "line is UTF-16 (it starts with a UTF-16 byte order mark), not UTF-8"


@pytest.mark.parametrize("fmt", LINE_FORMATS)
def test_a_line_over_the_cap_is_refused_in_every_format(
    forest: Forest, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = _lines(fmt, tmp_path)
    monkeypatch.setattr(common, "MAX_LINE", 1 << 20)
    record = json.loads(lines[2])
    record["padding"] = "x" * (2 << 20)  # native JSONL too: the cap is no longer its own
    lines[2] = json.dumps(record).encode()
    [failure] = forest.import_chats(fmt, _write(tmp_path, lines)).failed
    assert (failure.line, failure.reason) == (3, "line is longer than 1 MiB; refusing to load it")


# --- ChatGPT: one JSON document, maybe inside a zip -------------------------------------


def _chatgpt(tmp_path: Path, damage: Callable[[bytes], bytes], as_zip: bool) -> Path:
    good = MULTI.read_bytes()
    other = json.loads(good)
    other["id"] = "other"
    document = b"[\n" + good + b",\n" + damage(json.dumps(other, indent=1).encode()) + b"\n]"
    if not as_zip:
        path = tmp_path / "conversations.json"
        path.write_bytes(document)
        return path
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("conversations.json", document)
    return path


@pytest.mark.parametrize("as_zip", [False, True], ids=["json", "zip"])
def test_chatgpt_names_the_bad_byte_of_a_conversation_by_file_line(
    forest: Forest, tmp_path: Path, as_zip: bool
) -> None:
    def damage(doc: bytes) -> bytes:
        lines = doc.splitlines()
        lines[4] = lines[4][:5] + b"\xfe" + lines[4][5:]
        return b"\n".join(lines)

    path = _chatgpt(tmp_path, damage, as_zip)
    report = forest.import_chats("chatgpt", path)
    start = MULTI.read_bytes().count(b"\n") + 3  # where conversation 2 starts
    assert [c.source_id for c in report.chats] == ["fixture"]  # conversation 1 is imported
    [failure] = report.failed
    assert failure.line == start
    assert failure.reason == (
        f"conversation 2 is not valid UTF-8 (byte 0xfe at line {start + 4}, column 6)"
    )


@pytest.mark.parametrize("as_zip", [False, True], ids=["json", "zip"])
def test_chatgpt_skips_a_bom_opening_the_document(
    forest: Forest, tmp_path: Path, as_zip: bool
) -> None:
    path = _chatgpt(tmp_path, lambda doc: doc, as_zip)
    if as_zip:
        with zipfile.ZipFile(path) as archive:
            document = archive.read("conversations.json")
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("conversations.json", BOM + document)
    else:
        path.write_bytes(BOM + path.read_bytes())
    report = forest.import_chats("chatgpt", path)
    assert report.ok and [c.source_id for c in report.chats] == ["fixture", "other"]
    single = tmp_path / "one.json"
    single.write_bytes(BOM + MULTI.read_bytes())
    again = forest.import_chats("chatgpt", single)
    assert again.ok and again.chats[0].session_id == Ids("chatgpt", "fixture").session


def test_a_damaged_zip_fails_its_file_with_a_reason(forest: Forest, tmp_path: Path) -> None:
    path = _chatgpt(tmp_path, lambda doc: doc, as_zip=True)
    data = bytearray(path.read_bytes())
    start = data.index(b"conversations.json") + len(b"conversations.json")
    data[start + 200 : start + 260] = b"\x00" * 60  # inside the member's bytes
    path.write_bytes(bytes(data))
    [failure] = forest.import_chats("chatgpt", path).failed
    assert failure.path == str(path) and failure.line is None
    assert failure.reason == "the zip archive is damaged: Bad CRC-32 for file 'conversations.json'"
