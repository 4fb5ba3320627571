"""JSON-RPC 2.0 over any transport: parse, validate, dispatch, answer.

`Dispatcher.handle(raw, client)` takes one message (a request, a notification
or a batch) and returns the bytes to send back, or None when nothing is due
(notifications only). Each answer is serialised as soon as it is made; a read's
over `Limits.max_response` bytes is answered with TooLarge instead, and once a
batch's answers reach `Limits.max_batch_response` its remaining requests are
not run (each answers TooLarge), so a small request cannot make the server
build a huge reply (a batch of 100 `sessions/log` of a 5 MB chat once built
728 MB). An integer param outside the stores' 64-bit range is invalid params
(-32602), as any other bad param. Errors: the spec's codes for malformed messages and
params, and for a ForestError its family's code (errors.FAMILIES, the table
the CLI's exit codes come from) with `data` = the error's `to_json()`. An
unexpected exception answers -32603 with no detail; its traceback goes to the
server's log only.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
from collections.abc import Callable
from typing import Any

import msgspec
import orjson

from ..deadline import Deadline
from ..errors import ForestError, TooLarge, family
from .context import Call, Client, Server
from .limits import MAX_INT, depth_exceeds, may_nest
from .registry import Method, Registry, Subscribed

log = logging.getLogger("sessionforest.server")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

_AT = re.compile(r" - at `\$\.?(.*)`$")
_NO_ID = object()  # a notification: no "id" member at all


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def error_object(exc: BaseException) -> dict[str, Any]:
    """The `error` member for `exc`."""
    if isinstance(exc, RpcError):
        body: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            body["data"] = exc.data
        return body
    if isinstance(exc, ForestError):
        return {"code": family(exc).rpc_code, "message": str(exc), "data": exc.to_json()}
    return {
        "code": INTERNAL_ERROR,
        "message": "internal error; the server's log has the details",
        "data": {"type": "InternalError", "message": "internal error"},
    }


def error_message(code: int, message: str) -> bytes:
    """An error answer to a message that could not be read as a request (id null)."""
    return orjson.dumps({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": None})


def _response(
    request_id: Any, result: Any = None, error: dict[str, Any] | None = None
) -> dict[str, Any]:
    if error is not None:
        return {"jsonrpc": "2.0", "error": error, "id": request_id}
    return {"jsonrpc": "2.0", "result": result, "id": request_id}


def params_of(method: Method, raw: Any) -> Any:
    """`raw` params (absent, by name or by position) as the method's params Struct."""
    fields = method.params.__struct_fields__
    if raw is None:
        raw = {}
    elif isinstance(raw, list):
        if len(raw) > len(fields):
            raise RpcError(
                INVALID_PARAMS,
                f"{method.name} takes at most {len(fields)} positional params, got {len(raw)}",
                {"type": "InvalidParams", "expected": list(fields)},
            )
        raw = dict(zip(fields, raw, strict=False))
    try:
        params = msgspec.convert(raw, method.params)
    except msgspec.ValidationError as exc:
        text = str(exc)
        found = _AT.search(text)
        data: dict[str, Any] = {"type": "InvalidParams", "message": text}
        if found:
            data["field"] = found.group(1)
            text = text[: found.start()]
        raise RpcError(INVALID_PARAMS, f"invalid params for {method.name}: {text}", data) from None
    for name in method.params.__struct_fields__:
        value = getattr(params, name)
        if type(value) is int and not -MAX_INT - 1 <= value <= MAX_INT:
            text = f"Expected an integer that fits in 64 bits (at most {MAX_INT})"
            data = {"type": "InvalidParams", "message": f"{text} - at `$.{name}`", "field": name}
            raise RpcError(INVALID_PARAMS, f"invalid params for {method.name}: {text}", data)
    return params


class Dispatcher:
    """Answers messages with the methods of `methods` (api.METHODS: the whole API)."""

    def __init__(self, server: Server, methods: Registry) -> None:
        self.server = server
        self.methods = methods

    async def handle(self, raw: bytes | str, client: Client, send: Callable[[bytes], None]) -> None:
        """Answer one message through `send` (nothing for notifications only); a
        subscription goes live only after its answer was handed to `send`."""
        answer, after = await self.answer(raw, client)
        if answer is not None:
            send(answer)
        for release in after:
            release()

    async def answer(
        self, raw: bytes | str, client: Client
    ) -> tuple[bytes | None, list[Callable[[], None]]]:
        """The response (None: nothing to send) and what to run once it is sent."""
        limits = self.server.limits
        try:
            message = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            return error_message(PARSE_ERROR, f"parse error: {exc}"), []
        if may_nest(raw, limits.max_depth) and depth_exceeds(message, limits.max_depth):
            return error_message(
                INVALID_REQUEST, f"request nests deeper than {limits.max_depth} levels"
            ), []
        after: list[Callable[[], None]] = []
        if not isinstance(message, list):
            return await self.one(message, client, after), after
        if not message:
            return error_message(INVALID_REQUEST, "invalid request: empty batch"), []
        if len(message) > limits.max_batch:
            text = f"batch of {len(message)} requests exceeds {limits.max_batch}"
            return error_message(INVALID_REQUEST, text), []
        answers: list[bytes] = []
        size = 0
        for item in message:  # in order: a batch's writes commit in the order given
            if size >= limits.max_batch_response:
                one = _not_run(item, size, limits.max_batch_response)
            else:
                one = await self.one(item, client, after)
            if one is not None:
                answers.append(one)
                size += len(one) + 1
        return (b"[" + b",".join(answers) + b"]" if answers else None), after

    async def one(
        self, request: Any, client: Client, after: list[Callable[[], None]]
    ) -> bytes | None:
        """One request's answer, serialised (None for a notification)."""
        if not isinstance(request, dict):
            return error_message(INVALID_REQUEST, "invalid request: expected an object")
        request_id = request.get("id", _NO_ID)
        reply_id = None if request_id is _NO_ID else request_id
        problem = _request_problem(request, request_id)
        if problem is not None:
            error = {"code": INVALID_REQUEST, "message": f"invalid request: {problem}"}
            return _dump(_response(reply_id if _valid_id(request_id) else None, error=error))
        try:
            result = await self.call(request["method"], request.get("params"), client)
        except Exception as exc:
            if not isinstance(exc, RpcError | ForestError):
                log.exception("%s failed", request["method"])
            if request_id is _NO_ID:
                return None
            return _dump(_response(request_id, error=error_object(exc)))
        if isinstance(result, Subscribed):
            after.append(result.release)
            result = result.answer
        if request_id is _NO_ID:
            return None
        body = _dump(_response(request_id, result))
        del result  # the document may be large: only its bytes are kept from here
        limit = self.server.limits.max_response
        method = self.methods.get(request["method"])
        # A write's answer is never withheld: it was committed, and it echoes what was
        # written (bounded by max_body). Reads are what a small request can inflate.
        if len(body) > limit and method is not None and method.mode in ("read", "loop"):
            advice = "ask for less: a smaller `limit`, or page with its params"
            refused = TooLarge(f"the answer to {request['method']}", len(body), limit, advice)
            return _dump(_response(request_id, error=error_object(refused)))
        return body

    async def call(self, name: str, raw_params: Any, client: Client) -> Any:
        method = self.methods.get(name)
        if method is None:
            raise RpcError(METHOD_NOT_FOUND, f"method not found: {name}", {"method": name})
        params = params_of(method, raw_params)
        server = self.server
        call = Call(server.forest, client, server, self.methods)
        handler = method.handler
        if method.mode == "loop":
            result = handler(call, params)
            # a long-running loop handler (chat/reply) is a coroutine: it awaits its own work
            return await result if inspect.isawaitable(result) else result
        if method.mode == "read":
            call.deadline = deadline = Deadline(server.limits.search_seconds)
            client.reading(deadline)
            server.reading.add(deadline)
            try:
                return await server.read(lambda: handler(call, params))
            except asyncio.CancelledError:
                deadline.cancel("the request was cancelled")  # the thread stops too
                raise
            finally:
                client.deadlines.discard(deadline)
                server.reading.discard(deadline)
        stamp_for = getattr(params, "session_id", None) if method.appends else None
        if method.mode == "append":
            request = handler(call, params)
            return (await server.append(request, stamp_for=stamp_for)).to_json()
        return await server.write(lambda c: handler(c, params), call, stamp_for=stamp_for)


def _dump(document: Any) -> bytes:
    return orjson.dumps(document)


def _not_run(request: Any, size: int, limit: int) -> bytes | None:
    """The answer to a batch member left unrun because the batch's answers are full."""
    if not isinstance(request, dict) or "id" not in request or not _valid_id(request["id"]):
        return None  # a notification (or no id to answer): nothing to say
    advice = "the rest of the batch was not run: send it in smaller batches"
    error = TooLarge("this batch's answers", size, limit, advice)
    return _dump(_response(request["id"], error=error_object(error)))


def _valid_id(request_id: Any) -> bool:
    return (
        request_id is _NO_ID
        or request_id is None
        or (isinstance(request_id, str | int | float) and not isinstance(request_id, bool))
    )


def _request_problem(request: dict[str, Any], request_id: Any) -> str | None:
    if request.get("jsonrpc") != "2.0":
        return '"jsonrpc" must be "2.0"'
    if not isinstance(request.get("method"), str):
        return '"method" must be a string'
    if not _valid_id(request_id):
        return '"id" must be a string, a number or null'
    if "params" in request and not isinstance(request["params"], dict | list):
        return '"params" must be an object or an array'
    return None
