"""JSON-RPC 2.0 over any transport: parse, validate, dispatch, answer.

`Dispatcher.handle(raw, client)` takes one message (a request, a notification
or a batch) and returns the bytes to send back, or None when nothing is due
(notifications only). Errors: the spec's codes for malformed messages and
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
from ..errors import ForestError, family
from .context import Call, Client, Server
from .limits import depth_exceeds
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
        return msgspec.convert(raw, method.params)
    except msgspec.ValidationError as exc:
        text = str(exc)
        found = _AT.search(text)
        data: dict[str, Any] = {"type": "InvalidParams", "message": text}
        if found:
            data["field"] = found.group(1)
            text = text[: found.start()]
        raise RpcError(INVALID_PARAMS, f"invalid params for {method.name}: {text}", data) from None


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
            send(orjson.dumps(answer))
        for release in after:
            release()

    async def answer(
        self, raw: bytes | str, client: Client
    ) -> tuple[Any, list[Callable[[], None]]]:
        """The response document (None: nothing to send) and what to run once it is sent."""
        limits = self.server.limits
        try:
            message = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            return _response(
                None, error={"code": PARSE_ERROR, "message": f"parse error: {exc}"}
            ), []
        if depth_exceeds(message, limits.max_depth):
            error = {
                "code": INVALID_REQUEST,
                "message": f"request nests deeper than {limits.max_depth} levels",
            }
            return _response(None, error=error), []
        after: list[Callable[[], None]] = []
        if isinstance(message, list):
            if not message:
                error = {"code": INVALID_REQUEST, "message": "invalid request: empty batch"}
                return _response(None, error=error), []
            if len(message) > limits.max_batch:
                error = {
                    "code": INVALID_REQUEST,
                    "message": f"batch of {len(message)} requests exceeds {limits.max_batch}",
                }
                return _response(None, error=error), []
            answers = []
            for item in message:  # in order: a batch's writes commit in the order given
                one = await self.one(item, client, after)
                if one is not None:
                    answers.append(one)
            return (answers or None), after
        return await self.one(message, client, after), after

    async def one(
        self, request: Any, client: Client, after: list[Callable[[], None]]
    ) -> dict[str, Any] | None:
        if not isinstance(request, dict):
            return _response(None, error={"code": INVALID_REQUEST, "message": "invalid request: "
                                          "expected an object"})  # fmt: skip
        request_id = request.get("id", _NO_ID)
        reply_id = None if request_id is _NO_ID else request_id
        problem = _request_problem(request, request_id)
        if problem is not None:
            error = {"code": INVALID_REQUEST, "message": f"invalid request: {problem}"}
            return _response(reply_id if _valid_id(request_id) else None, error=error)
        try:
            result = await self.call(request["method"], request.get("params"), client)
        except Exception as exc:
            if not isinstance(exc, RpcError | ForestError):
                log.exception("%s failed", request["method"])
            if request_id is _NO_ID:
                return None
            return _response(request_id, error=error_object(exc))
        if isinstance(result, Subscribed):
            after.append(result.release)
            result = result.answer
        if request_id is _NO_ID:
            return None
        return _response(request_id, result)

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
            client.deadlines.add(deadline)
            try:
                return await server.read(lambda: handler(call, params))
            except asyncio.CancelledError:
                deadline.cancel("the request was cancelled")  # the thread stops too
                raise
            finally:
                client.deadlines.discard(deadline)
        if method.mode == "append":
            return (await server.append(handler(call, params))).to_json()
        return await server.write(lambda c: handler(c, params), call)


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
