"""Fixtures for projection and renderer tests: a real forest, SDK shape checks, a stand-in API."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anthropic.types
import openai.types.chat
import openai.types.responses
import pytest
from pydantic import TypeAdapter

from sessionforest import Forest

# The SDKs' request types, validated with pydantic. Their `Iterable[...]` fields
# validate lazily and unknown TypedDict keys are silently ignored, so `check`
# materialises the result and compares it with the input: a misspelled or
# extra key then shows up as a difference instead of passing unseen.
SDK_TYPES: dict[str, TypeAdapter[Any]] = {
    "anthropic": TypeAdapter(list[anthropic.types.MessageParam]),
    "anthropic.system": TypeAdapter(str | list[anthropic.types.TextBlockParam]),
    "chat": TypeAdapter(list[openai.types.chat.ChatCompletionMessageParam]),
    "responses": TypeAdapter(openai.types.responses.ResponseInputParam),
}


def _materialise(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _materialise(v) for k, v in value.items()}
    if value is None or isinstance(value, str | bytes | int | float):
        return value
    return [_materialise(v) for v in value]  # lists and pydantic's lazy iterators


def sdk_check(api: str, value: Any) -> None:
    """Raise unless `value` is exactly an instance of the SDK request type for `api`."""
    validated = _materialise(SDK_TYPES[api].validate_python(value))
    if validated != value:
        raise AssertionError(f"{api}: SDK type dropped or changed fields:\n{validated}\n{value}")


@pytest.fixture(scope="session")
def check_sdk() -> Callable[[str, Any], None]:
    return sdk_check


@pytest.fixture
def forest(tmp_path: Path) -> Iterator[Forest]:
    store = Forest.open(tmp_path / "f.db")
    yield store
    store.close()


RawInsert = Callable[[Forest, str, str, "str | None", int, int, str, str], None]


@pytest.fixture(scope="session")
def raw_insert() -> RawInsert:
    """Write a row the way an older (or newer) sessionforest would have: no validation."""

    def insert(
        forest: Forest,
        sid: str,
        eid: str,
        parent: str | None,
        seq: int,
        version: int,
        kind: str,
        payload: str,
    ) -> None:
        conn = sqlite3.connect(forest.path)
        conn.execute(
            "INSERT INTO session_entries(id, session_id, parent_entry_id, sequence, "
            "semantic_schema_version, kind, payload, context_visibility, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, 'context', '2025-01-01T00:00:00.000Z')",
            (eid, sid, parent, seq, version, kind, payload),
        )
        conn.execute(
            "INSERT INTO session_heads(session_id, active_entry_id, updated_at) VALUES (?, ?, 't') "
            "ON CONFLICT(session_id) DO UPDATE SET active_entry_id = excluded.active_entry_id",
            (sid, eid),
        )
        conn.commit()
        conn.close()

    return insert


# --- a stand-in for the provider APIs --------------------------------------------------

_USAGE = {"input_tokens": 1, "output_tokens": 1}
RESPONSES: dict[str, dict[str, Any]] = {
    "/v1/messages": {
        "id": "msg_standin",
        "type": "message",
        "role": "assistant",
        "model": "standin",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": _USAGE,
    },
    "/v1/chat/completions": {
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "created": 0,
        "model": "standin",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "ok"},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
    },
    "/v1/responses": {
        "id": "resp_standin",
        "object": "response",
        "created_at": 0,
        "model": "standin",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": "msg_standin",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    },
}


class StandIn:
    """A local HTTP server answering like the provider APIs and recording each request."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        recorded = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                recorded.append((self.path, body))
                answer = RESPONSES.get(self.path)
                status = 200 if answer is not None else 404
                data = json.dumps(answer or {"error": {"message": "no such path"}}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def last(self, path: str) -> dict[str, Any]:
        bodies = [body for p, body in self.requests if p == path]
        assert bodies, f"the stand-in received no request for {path}"
        return bodies[-1]


@pytest.fixture
def standin() -> Iterator[StandIn]:
    server = StandIn()
    server.thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()
    server.thread.join()
