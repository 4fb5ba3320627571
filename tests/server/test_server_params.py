"""What a request may ask for: bounded answers, bounded integers, validated fields.

Real servers over HTTP on loopback. The amplification case is the issue's one,
scaled down with smaller limits (a batch of 100 `sessions/log` of one big chat
once built a 728 MB answer out of an 11 KB request).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import Running, call, error_of, start_limited

MiB = 2**20
LOG_DEFAULT = 1000  # server/limits.py
MAX_INT = 2**63 - 1


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def _batch(client: httpx.Client, requests: list[dict[str, Any]]) -> tuple[list[Any], int]:
    reply = client.post("/rpc", json=requests)
    assert reply.status_code == 200, reply.text[:200]
    return reply.json(), len(reply.content)


@pytest.fixture
def small(tmp_path: Path) -> Iterator[Running]:
    limits = {"max_response": 1 * MiB, "max_batch_response": 2 * MiB}
    running = start_limited(tmp_path / "store.db", limits)
    yield running
    assert running.stop() == 0


@pytest.fixture
def client(small: Running) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=small.url, timeout=120) as c:
        yield c


def _big_chat(client: httpx.Client, entries: int, size: int) -> str:
    sid = call(client, "sessions/create", {"title": "big"})["id"]
    body = "log line with error repeated " * (size // 29)
    items = [{"kind": "user.message", "payload": _text(f"{n} {body}")} for n in range(entries)]
    call(client, "sessions/append_many", {"session_id": sid, "items": items})
    return sid


def test_a_batch_stops_building_answers_at_its_limit(client: httpx.Client) -> None:
    sid = _big_chat(client, 12, 50_000)  # a ~600 KB chat: each log answer is ~700 KB
    request = [{"jsonrpc": "2.0", "method": "sessions/log", "params": {"session_id": sid},
                "id": n} for n in range(100)]  # fmt: skip
    answers, size = _batch(client, request)
    # Before: all 100 built (~70 MB here). Now the answers stop at 2 MiB (+ one answer).
    assert size < 2 * MiB + 1 * MiB
    assert [a["id"] for a in answers] == list(range(100))  # every request is answered
    done = [a for a in answers if "result" in a]
    refused = [a for a in answers if "error" in a]
    assert 1 <= len(done) <= 4 and len(done) + len(refused) == 100
    error = refused[0]["error"]
    assert error["code"] == -32003 and error["data"]["type"] == "TooLarge"
    assert error["data"]["limit"] == 2 * MiB and "smaller batches" in error["message"]


def test_one_answer_over_the_limit_says_to_ask_for_less(client: httpx.Client) -> None:
    sid = _big_chat(client, 30, 50_000)  # ~1.7 MB of log: over the 1 MiB answer limit
    error = error_of(client, "sessions/log", {"session_id": sid})
    assert error["code"] == -32003 and error["data"]["type"] == "TooLarge"
    assert error["data"]["limit"] == MiB and error["data"]["size"] > MiB
    assert "smaller `limit`" in error["message"]
    assert len(call(client, "sessions/log", {"session_id": sid, "limit": 5})) == 5


@pytest.mark.parametrize(
    ("method", "params"),
    [("sessions/log", {"limit": 1000}), ("sessions/entries", {"limit": 1000}),
     ("sessions/export", {}), ("sessions/export", {"format": "yoagent"})],
)  # fmt: skip
def test_a_read_past_the_limit_is_refused_before_it_is_built(
    client: httpx.Client, method: str, params: dict[str, Any]
) -> None:
    # Before: the whole answer was built (log and entries: decoded, turned into JSON and
    # serialised, ~4 copies of the chat; export: the whole text) and only then measured.
    # Now the entries' stored JSON is counted first and the export stops at the limit.
    sid = _big_chat(client, 30, 50_000)  # ~1.5 MB of stored payloads, limit 1 MiB
    error = error_of(client, method, {"session_id": sid, **params})
    assert error["code"] == -32003 and error["data"]["type"] == "TooLarge"
    assert error["data"]["at_least"] is True and "is at least" in error["message"]
    assert MiB < error["data"]["size"] < 2 * MiB and error["data"]["limit"] == MiB
    small = call(client, method.replace("export", "log"), {"session_id": sid, "limit": 5})
    assert len(small if isinstance(small, list) else small["entries"]) == 5


def test_compare_and_project_past_the_limit_are_refused_before_they_are_built(
    client: httpx.Client,
) -> None:
    sid = _big_chat(client, 30, 50_000)
    [first] = call(client, "sessions/entries", {"session_id": sid, "limit": 1})["entries"]
    [last] = call(client, "sessions/log", {"session_id": sid, "limit": 1})
    for method, params in (("sessions/compare", {"a": first["id"], "b": last["id"]}),
                           ("sessions/project", {})):  # fmt: skip
        error = error_of(client, method, {"session_id": sid, **params})
        assert error["data"]["type"] == "TooLarge" and error["data"]["at_least"] is True, method
        assert MiB < error["data"]["size"] < 2 * MiB


def test_log_has_a_default_limit(http: httpx.Client) -> None:
    sid = call(http, "sessions/create", {"title": "long"})["id"]
    for start in (0, 1000):
        items = [{"kind": "user.message", "payload": _text(f"turn {n}")}
                 for n in range(start, start + (1000 if start == 0 else 5))]  # fmt: skip
        call(http, "sessions/append_many", {"session_id": sid, "items": items})
    log = call(http, "sessions/log", {"session_id": sid})
    # Before: the whole path. Now the last LOG_DEFAULT, the first naming its parent.
    assert len(log) == LOG_DEFAULT
    assert log[-1]["payload"] == _text("turn 1004") and log[0]["parent_id"] is not None
    before = call(http, "sessions/log", {"session_id": sid, "end": log[0]["parent_id"]})
    assert len(before) == 5 and before[0]["parent_id"] is None
    assert len(call(http, "sessions/log", {"session_id": sid, "limit": 2000})) == 1005


@pytest.mark.parametrize(
    ("method", "field"),
    [("sessions/entries", "after_sequence"), ("sessions/entries", "limit"),
     ("sessions/log", "limit"), ("sessions/list", "offset")],
)  # fmt: skip
def test_integers_past_64_bits_are_invalid_params(
    http: httpx.Client, method: str, field: str
) -> None:
    # Before: -32603 (an OverflowError inside the store).
    sid = call(http, "sessions/create")["id"]
    params: dict[str, Any] = {"session_id": sid} if method != "sessions/list" else {}
    for value in (2**63, 2**64 - 1):
        error = error_of(http, method, {**params, field: value})
        assert error["code"] == -32602, error
        assert error["data"]["field"] == field
    if field != "limit":  # the largest 64-bit integer is still a number it takes
        reply = http.post("/rpc", json={"jsonrpc": "2.0", "method": method, "id": 1,
                                          "params": {**params, field: MAX_INT}})  # fmt: skip
        assert "result" in reply.json(), reply.text


@pytest.mark.parametrize("bad", ["zzzz", "<script>", "2024-02-30T00:00:00Z"])
def test_created_at_is_validated_over_rpc(http: httpx.Client, bad: str) -> None:
    # Before: stored as given; `check` said ok; the yoagent export then failed (-32603).
    error = error_of(http, "sessions/create", {"created_at": bad})
    assert error["code"] == -32003 and error["data"]["argument"] == "created_at"
    sid = call(http, "sessions/create", {"created_at": "2024-02-29T23:00:00-01:00"})["id"]
    assert call(http, "sessions/get", {"session_id": sid})["created_at"] == (
        "2024-03-01T00:00:00.000Z"
    )
    append = {"session_id": sid, "kind": "user.message", "payload": _text("x"), "created_at": bad}
    error = error_of(http, "sessions/append", append)
    assert error["code"] == -32003 and "created_at" in error["message"]
    assert call(http, "sessions/entries", {"session_id": sid})["entries"] == []
    export = call(http, "sessions/export", {"session_id": sid, "format": "yoagent"})
    assert export["entries"] == 0


def test_titles_over_rpc_follow_the_import_rule(http: httpx.Client) -> None:
    # Before: ESC, NUL, newlines and U+202E were kept over RPC (import strips them).
    nasty = "\x1b[2Jfix\x00 the\nbuild \u202egnp.exe\t"
    sid = call(http, "sessions/create", {"title": nasty})["id"]
    title = call(http, "sessions/get", {"session_id": sid})["title"]
    assert title == "[2Jfix the build gnp.exe"
    long = call(http, "sessions/create", {"title": "word " * 100})["id"]
    assert len(call(http, "sessions/get", {"session_id": long})["title"]) == 200
