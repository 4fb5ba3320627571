"""`forest serve --stdio` framing: a line of any length is answered, never a crash.

Before: a line over ~32 MiB ended the server with a LimitOverrunError traceback
(exit 1), and an oversized last line without a newline exited 1 ("Aborted!").
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

from sessionforest.server.stdio import TOO_LONG, messages

from .conftest import FOREST

LIST = b'{"jsonrpc": "2.0", "method": "sessions/list", "id": 7}'


def _serve(tmp_path: Path, data: bytes) -> tuple[int, list[Any], str]:
    done = subprocess.run(
        [FOREST, "--db", str(tmp_path / "store.db"), "serve", "--stdio"],
        input=data, capture_output=True, timeout=300,
    )  # fmt: skip
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    return done.returncode, answers, done.stderr.decode(errors="replace")


def test_a_line_over_32_mib_is_answered_and_reading_goes_on(tmp_path: Path) -> None:
    huge = b'{"jsonrpc": "2.0", "method": "sessions/list", "id": 1, "x": "' + b"a" * (33 * 2**20)
    code, answers, err = _serve(tmp_path, huge + b'"}\n' + LIST + b"\n")
    assert code == 0, err
    assert "Traceback" not in err
    assert answers[0]["error"]["code"] == -32600 and "exceeds" in answers[0]["error"]["message"]
    assert answers[1]["id"] == 7 and answers[1]["result"]["total"] == 0
    assert len(answers) == 2


def test_an_oversized_last_line_without_a_newline_ends_cleanly(tmp_path: Path) -> None:
    code, answers, err = _serve(tmp_path, LIST + b"\n" + b"b" * (20 * 2**20))
    assert code == 0, err
    assert "Aborted" not in err and "Traceback" not in err
    assert answers[0]["id"] == 7
    assert answers[1]["error"]["code"] == -32600
    assert len(answers) == 2


def test_a_last_line_without_a_newline_is_a_message(tmp_path: Path) -> None:
    code, answers, err = _serve(tmp_path, LIST)
    assert code == 0, err
    assert [a["id"] for a in answers] == [7]


def test_requests_from_a_regular_file(tmp_path: Path) -> None:
    # `forest serve --stdio < requests.jsonl`: before, asyncio refused a file (exit 1).
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(LIST + b"\n" + LIST.replace(b"7", b"8"))
    with requests.open("rb") as source:
        done = subprocess.run(
            [FOREST, "--db", str(tmp_path / "store.db"), "serve", "--stdio"],
            stdin=source, capture_output=True, timeout=300,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(line)["id"] for line in done.stdout.splitlines()) == [7, 8]


def test_the_line_cutter_at_every_boundary() -> None:
    async def cut(data: bytes, limit: int, chunk: int) -> list[bytes | None]:
        reader = asyncio.StreamReader()
        for i in range(0, len(data), chunk):
            reader.feed_data(data[i : i + chunk])
        reader.feed_eof()
        return [line async for line in messages(reader.read, limit)]

    data = b"ab\n" + b"x" * 10 + b"\ncd\n\n" + b"y" * 7 + b"\nlast"
    for chunk in (1, 2, 3, 5, 64, 1000):
        got = asyncio.run(cut(data, 6, chunk))
        assert got == [b"ab", TOO_LONG, b"cd", b"", TOO_LONG, b"last"], chunk
        assert asyncio.run(cut(b"z" * 9, 6, chunk)) == [TOO_LONG]
        assert asyncio.run(cut(b"123456\n", 6, chunk)) == [b"123456"]
