"""A local stand-in for the provider APIs, for tests that drive the real SDKs and CLIs.

`ProviderStandIn` is a real HTTP server speaking Anthropic Messages
(`/v1/messages`), OpenAI Responses and Chat Completions (`/v1/responses`,
`/v1/chat/completions`; `/v1/responses/compact` keeps the input's user messages
and adds one compaction item) and Gemini (`/v1beta/models/M:generateContent`,
`:streamGenerateContent?alt=sse`, `:countTokens`), as JSON or, when the request
asks to stream, as server-sent events shaped like the providers' own. A reply
may call tools (`ToolCall`), each in its API's own form (tool_use, function_call,
tool_calls, functionCall), which is how a harness CLI is made to run a shell
command. Tests script what it answers, in order, and read back every request:

    standin.reply_text('{"answer": "c2"}', input_tokens=120)
    standin.reply_error(429, "insufficient_quota")
    standin.reply_events(recorded_events)         # replay a recorded stream
    with standin.env(): client = make_client(cfg)  # the SDKs find it by their variables

A reply may wait before answering (`delay`) and, when streamed, between
chunks (`chunk_delay`), so timeouts and a user's stop can be tested. When the
script runs out it answers "ok", or what `responder(body)` returns when set.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PATHS = ("/v1/messages", "/v1/responses", "/v1/chat/completions", "/v1/responses/compact")
# Gemini's paths name the model and the method: /v1beta/models/MODEL:METHOD
GEMINI_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:]+):(\w+)$")
GEMINI_METHODS = ("generateContent", "streamGenerateContent", "countTokens")


@dataclass
class ToolCall:
    """A tool the scripted model calls: `name` with `args` (an object); `id` is made up
    from a counter when empty."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str = ""


@dataclass
class Reply:
    """One scripted answer: text and tool calls, an HTTP error, or stream events to replay."""

    text: str = "ok"
    tools: list[ToolCall] = field(default_factory=list)
    input_tokens: int = 10
    output_tokens: int = 5
    status: int = 200
    error_code: str = ""
    events: list[dict[str, Any]] | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0
    chunks: int = 3  # a streamed text arrives in about this many deltas
    headers: dict[str, str] = field(default_factory=dict)
    reset: bool = False  # drop the connection without answering (a connection reset)


@dataclass(frozen=True)
class Request:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    at: float


def _split(text: str, parts: int) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // max(1, parts)))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _error_body(path: str, reply: Reply) -> dict[str, Any]:
    code = reply.error_code or "error"
    message = f"stand-in error: {code}"
    if path == "/v1/messages":
        kind = {429: "rate_limit_error", 401: "authentication_error", 400: "invalid_request_error"}
        etype = kind.get(reply.status, "api_error")
        if code == "insufficient_quota":
            etype, message = "invalid_request_error", "Your credit balance is too low"
        return {"type": "error", "error": {"type": etype, "message": message}}
    return {"error": {"message": message, "type": code, "code": code, "param": None}}


def _anthropic_blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text or not reply.tools:
        blocks.append({"type": "text", "text": reply.text})
    for call in reply.tools:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.args})
    return blocks


def anthropic_message(reply: Reply, model: str) -> dict[str, Any]:
    return {
        "id": "msg_standin",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _anthropic_blocks(reply),
        "stop_reason": "tool_use" if reply.tools else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
    }


def anthropic_events(reply: Reply, model: str) -> list[dict[str, Any]]:
    start = anthropic_message(reply, model) | {"content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": reply.input_tokens, "output_tokens": 1}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(_anthropic_blocks(reply)):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [
                {"type": "text_delta", "text": p} for p in _split(block["text"], reply.chunks)
            ]
        else:
            opened = block | {"input": {}}
            arguments = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _split(arguments, 2)]
        events.append({"type": "content_block_start", "index": index, "content_block": opened})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": start["stop_reason"] or _stop(reply), "stop_sequence": None},
            "usage": {"output_tokens": reply.output_tokens},
        },
        {"type": "message_stop"},
    ]
    return events


def _stop(reply: Reply) -> str:
    return "tool_use" if reply.tools else "end_turn"


def _response(reply: Reply, model: str, status: str, output: list[Any]) -> dict[str, Any]:
    usage = None
    if status == "completed":
        usage = {
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }
    return {
        "id": "resp_standin",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
        "metadata": {},
    }


def _message_item(text: str, status: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}] if status else []
    return {
        "id": "msg_standin",
        "type": "message",
        "role": "assistant",
        "status": status or "in_progress",
        "content": content,
    }


def _function_item(call: ToolCall, status: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call.id}",
        "call_id": call.id,
        "name": call.name,
        "arguments": json.dumps(call.args) if status == "completed" else "",
        "status": status,
    }


def _output(reply: Reply) -> list[dict[str, Any]]:
    items = [_message_item(reply.text, "completed")] if reply.text or not reply.tools else []
    return items + [_function_item(call, "completed") for call in reply.tools]


def openai_response(reply: Reply, model: str) -> dict[str, Any]:
    return _response(reply, model, "completed", _output(reply))


def openai_compaction(body: dict[str, Any]) -> dict[str, Any]:
    """`POST /v1/responses/compact`: the input's user messages, then one compaction item
    (as the API documents its output), the encrypted content naming how many items went in."""
    items = body.get("input") or []
    kept = [i for i in items if isinstance(i, dict) and i.get("role") == "user"]
    compaction = {"type": "compaction", "id": "cmp_standin",
                  "encrypted_content": f"standin-compacted:{len(items)}"}  # fmt: skip
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 12}  # fmt: skip
    return {"id": "cmp_resp_standin", "object": "response.compaction",
            "created_at": int(time.time()), "output": [*kept, compaction],
            "usage": usage}  # fmt: skip


def openai_events(reply: Reply, model: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": _response(reply, model, "in_progress", [])},
    ]
    index = 0
    if reply.text or not reply.tools:
        events += _message_events(reply.text, index, reply.chunks)
        index += 1
    for call in reply.tools:
        item = _function_item(call, "completed")
        events.append(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": _function_item(call, "in_progress"),
            }
        )
        where = {"item_id": item["id"], "output_index": index}
        for piece in _split(item["arguments"], 2):
            events.append(
                {"type": "response.function_call_arguments.delta", **where, "delta": piece}
            )
        events.append(
            {
                "type": "response.function_call_arguments.done",
                **where,
                "arguments": item["arguments"],
            }
        )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
        index += 1
    events.append({"type": "response.completed", "response": openai_response(reply, model)})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return events


def _message_events(text: str, index: int, chunks: int) -> list[dict[str, Any]]:
    where = {"item_id": "msg_standin", "output_index": index, "content_index": 0}
    part = {"type": "output_text", "text": "", "annotations": []}
    events: list[dict[str, Any]] = [
        {
            "type": "response.output_item.added",
            "output_index": index,
            "item": _message_item("", ""),
        },
        {"type": "response.content_part.added", **where, "part": part},
    ]
    for piece in _split(text, chunks):
        events.append(
            {"type": "response.output_text.delta", **where, "delta": piece, "logprobs": []}
        )
    events += [
        {"type": "response.output_text.done", **where, "text": text, "logprobs": []},
        {"type": "response.content_part.done", **where, "part": part | {"text": text}},
        {
            "type": "response.output_item.done",
            "output_index": index,
            "item": _message_item(text, "completed"),
        },
    ]
    return events


def _chat_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.args)},
        }
        for index, call in enumerate(reply.tools)
    ]


def chat_completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tools:
        message["tool_calls"] = [
            {k: v for k, v in call.items() if k != "index"} for call in _chat_calls(reply)
        ]
    return {
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tools else "stop",
                "logprobs": None,
            }
        ],
        "usage": _chat_usage(reply),
    }


def _chat_usage(reply: Reply) -> dict[str, int]:
    return {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }


def chat_chunks(reply: Reply, model: str) -> list[dict[str, Any]]:
    base = {
        "id": "chatcmpl-standin",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
    }
    chunks = [
        base | {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
        for piece in _split(reply.text, reply.chunks)
    ]
    for call in _chat_calls(reply):
        delta = {"role": "assistant", "tool_calls": [call]}
        chunks.append(base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    finish = "tool_calls" if reply.tools else "stop"
    chunks.append(base | {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    chunks.append(base | {"choices": [], "usage": _chat_usage(reply)})
    return chunks


def _gemini_usage(reply: Reply) -> dict[str, int]:
    return {
        "promptTokenCount": reply.input_tokens,
        "candidatesTokenCount": reply.output_tokens,
        "totalTokenCount": reply.input_tokens + reply.output_tokens,
    }


def _gemini_chunk(parts: list[dict[str, Any]], model: str, finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": model, "responseId": "standin"}


def _gemini_parts(reply: Reply) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text or not reply.tools else []
    return parts + [{"functionCall": {"name": c.name, "args": c.args}} for c in reply.tools]


def gemini_response(reply: Reply, model: str) -> dict[str, Any]:
    """A generateContent answer: one candidate holding every part."""
    return _gemini_chunk(_gemini_parts(reply), model, "STOP") | {
        "usageMetadata": _gemini_usage(reply)
    }


def gemini_chunks(reply: Reply, model: str) -> list[dict[str, Any]]:
    """streamGenerateContent's chunks: the text in pieces, then the calls, the last chunk
    with finishReason and usage (as the API sends them)."""
    pieces = [[{"text": piece}] for piece in _split(reply.text, reply.chunks)]
    pieces += [[{"functionCall": {"name": c.name, "args": c.args}}] for c in reply.tools]
    pieces = pieces or [[{"text": ""}]]
    chunks = [_gemini_chunk(parts, model, None) for parts in pieces]
    chunks[-1] = gemini_response(reply, model) | {"candidates": chunks[-1]["candidates"]}
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    return chunks


class ProviderStandIn:
    """A real local HTTP server answering like the provider APIs; see the module doc."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._script: deque[Reply] = deque()
        # When the script is empty: a function of the request body choosing the reply
        # (a scripted model that reads what it was sent; benchmarks use it).
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self._lock = threading.Lock()
        self._open = 0  # client connections open now (keep-alive ones included)
        self._calls = 0  # tool calls answered so far (their made-up ids count up)
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with standin._lock:
                    standin._open += 1

            def finish(self) -> None:
                try:
                    super().finish()
                finally:
                    with standin._lock:
                        standin._open -= 1

            def log_message(self, *args: object) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                standin._record(Request(self.path, body, headers, time.monotonic()))
                path = self.path.split("?", 1)[0]
                gemini = GEMINI_PATH.match(path)
                if gemini is not None and gemini.group(2) in GEMINI_METHODS:
                    self._gemini(gemini.group(1), gemini.group(2), body)
                    return
                if path not in PATHS:
                    self._json(404, {"error": {"message": f"no such path {path}"}})
                    return
                if path == "/v1/responses/compact":
                    self._json(200, openai_compaction(body))
                    return
                reply = standin._next(body)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.reset:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if reply.status != 200:
                    self._json(reply.status, _error_body(path, reply), reply.headers)
                    return
                model = str(body.get("model") or "standin")
                if body.get("stream"):
                    self._stream(path, reply, model)
                    return
                answer = {
                    "/v1/messages": anthropic_message,
                    "/v1/responses": openai_response,
                    "/v1/chat/completions": chat_completion,
                }[path](reply, model)
                self._json(200, answer, reply.headers)

            def _gemini(self, model: str, method: str, body: dict[str, Any]) -> None:
                if method == "countTokens":
                    self._json(200, {"totalTokens": 10})
                    return
                reply = standin._next(body)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.status != 200:
                    error = {"code": reply.status, "message": f"stand-in error: {reply.error_code}"}
                    self._json(reply.status, {"error": error | {"status": reply.error_code}})
                    return
                if method == "generateContent":
                    self._json(200, gemini_response(reply, model))
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    for chunk in reply.events or gemini_chunks(reply, model):
                        self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
                        self.wfile.flush()
                        if reply.chunk_delay:
                            time.sleep(reply.chunk_delay)
                except (BrokenPipeError, ConnectionResetError):
                    return

            def do_GET(self) -> None:
                # GET /v1/models: what a client may ask to open its connection (no turn).
                headers = {k.lower(): v for k, v in self.headers.items()}
                standin._record(Request(self.path, {}, headers, time.monotonic()))
                if self.path.split("?", 1)[0] == "/v1/models":
                    self._json(200, {"object": "list", "data": [], "has_more": False})
                else:
                    self._json(404, {"error": {"message": f"no such path {self.path}"}})

            def _json(self, status: int, data: Any, extra: dict[str, str] | None = None) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for key, value in (extra or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, path: str, reply: Reply, model: str) -> None:
                if reply.events is not None:
                    events = reply.events
                elif path == "/v1/messages":
                    events = anthropic_events(reply, model)
                elif path == "/v1/responses":
                    events = openai_events(reply, model)
                else:
                    events = chat_chunks(reply, model)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    for event in events:
                        named = (
                            "" if path == "/v1/chat/completions" else f"event: {event['type']}\n"
                        )
                        self.wfile.write(f"{named}data: {json.dumps(event)}\n\n".encode())
                        self.wfile.flush()
                        if reply.chunk_delay:
                            time.sleep(reply.chunk_delay)
                    if path == "/v1/chat/completions":
                        self.wfile.write(b"data: [DONE]\n\n")
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client stopped reading: a user's stop

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # --- scripting ----------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def reply(self, reply: Reply) -> None:
        with self._lock:
            self._script.append(reply)

    def reply_text(self, text: str, **fields: Any) -> None:
        self.reply(Reply(text=text, **fields))

    def reply_error(self, status: int, code: str = "", **fields: Any) -> None:
        self.reply(Reply(status=status, error_code=code, **fields))

    def reply_events(self, events: list[dict[str, Any]], **fields: Any) -> None:
        self.reply(Reply(events=events, **fields))

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            reply = self._script.popleft() if self._script else None
            responder = self.responder
        if reply is None:
            reply = responder(body) if responder is not None else Reply()
        with self._lock:
            for call in reply.tools:
                if not call.id:
                    self._calls += 1
                    call.id = f"call_standin_{self._calls}"
        return reply

    @property
    def open_connections(self) -> int:
        """How many client connections are open now: a client that is closed drops its own."""
        with self._lock:
            return self._open

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def environ(self) -> dict[str, str]:
        """The SDKs' own variables, pointing them here (keys are placeholders)."""
        return {
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": "sk-ant-standin",
            "OPENAI_BASE_URL": f"{self.url}/v1",
            "OPENAI_API_KEY": "sk-standin",
        }

    @contextmanager
    def env(self) -> Iterator[dict[str, str]]:
        """Set `environ()` in this process for the block, restoring what was there."""
        values = self.environ()
        saved = {key: os.environ.get(key) for key in values}
        os.environ.update(values)
        try:
            yield values
        finally:
            for key, old in saved.items():
                if old is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = old

    def start(self) -> ProviderStandIn:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
