"""`rpc.discover`: the OpenRPC document, generated from a method registry.

Params schemas come from each method's params Struct, result schemas from the
wire TypedDicts, payload schemas from the kinds' Structs: msgspec emits them
all from the same classes dispatch validates with, so the document cannot
drift from the code. Built once per registry. This module declares
`rpc.discover` itself (its `group`); the document it answers is of the
registry the call was dispatched through.
"""

from __future__ import annotations

import functools
from typing import Any

from .. import __name__ as package
from ..errors import FAMILIES
from ..kinds import KINDS
from ..model.value import schema_components
from ..wire import ChangeJson, ErrorJson
from .context import Call
from .handlers.entries import AppendItem, AppendParams
from .registry import Group, Method, NoParams, Registry
from .rpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR

OPENRPC_VERSION = "1.3.2"
REF = "#/components/schemas/{name}"

STANDARD_ERRORS = {
    "ParseError": (PARSE_ERROR, "the message is not JSON"),
    "InvalidRequest": (INVALID_REQUEST, "not a JSON-RPC 2.0 request, or past a request limit"),
    "MethodNotFound": (METHOD_NOT_FOUND, "no such method"),
    "InvalidParams": (INVALID_PARAMS, "params do not match the method's schema"),
    "InternalError": (INTERNAL_ERROR, "a bug; the server's log has the details"),
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "0"


def _family_errors() -> dict[str, dict[str, Any]]:
    errors = {}
    for cls, fam in FAMILIES.items():
        errors[cls.__name__] = {
            "code": fam.rpc_code,
            "message": f"{cls.__name__}: {(cls.__doc__ or '').strip().splitlines()[0]}",
            "data": {"$ref": REF.format(name="ErrorJson")},
        }
    for name, (code, message) in STANDARD_ERRORS.items():
        errors[name] = {"code": code, "message": message}
    return errors


group = Group("openrpc")


@group.method("rpc.discover", NoParams, dict[str, Any], "loop")
def discover(call: Call, p: NoParams) -> dict[str, Any]:
    """This API as an OpenRPC document: every method, its params and result schemas, errors."""
    return document(call.methods)


@functools.cache
def document(registry: Registry) -> dict[str, Any]:
    """The OpenRPC document of every method in `registry`, in its order."""
    methods = list(registry.values())
    kinds = sorted(KINDS)
    types: list[Any] = [m.params for m in methods] + [m.result for m in methods]
    types += [KINDS[k].payload for k in kinds] + [ChangeJson, ErrorJson]
    schemas, components = schema_components(types, ref_template=REF)
    result_schemas = schemas[len(methods) : 2 * len(methods)]
    payloads = {k: {"$ref": REF.format(name=KINDS[k].payload.__name__)} for k in kinds}
    _payload_per_kind(components, payloads)
    errors = _family_errors()
    return {
        "openrpc": OPENRPC_VERSION,
        "info": {
            "title": "sessionforest",
            "version": _version(),
            "description": (
                "The sessions/* API of a sessionforest store: JSON-RPC 2.0 over HTTP "
                "(POST /rpc), WebSocket (/ws) and stdio. Notifications: sessions/changed "
                "(params: ChangeJson) after each committed change, to subscribers."
            ),
        },
        "methods": [
            _method(m, components, result_schemas[i], errors) for i, m in enumerate(methods)
        ],
        "components": {
            "schemas": components,
            "errors": errors,
            "x-payloads": payloads,  # kind -> the schema of its payload
        },
    }


def _method(
    m: Method,
    components: dict[str, Any],
    result: dict[str, Any],
    errors: dict[str, Any],
) -> dict[str, Any]:
    schema = components[m.params.__name__]
    required = set(schema.get("required", ()))
    params = [
        {"name": name, "required": name in required, "schema": prop}
        for name, prop in schema.get("properties", {}).items()
    ]
    names = ["InvalidRequest", "MethodNotFound", "InvalidParams", "InternalError"]
    if m.mode != "loop":
        names += [cls.__name__ for cls in FAMILIES]
    elif m.name == "sessions/subscribe":
        names.append("InvalidInput")
    body: dict[str, Any] = {
        "name": m.name,
        "summary": m.summary,
        "params": params,
        "result": {"name": "result", "schema": result},
        "errors": [{"$ref": f"#/components/errors/{n}"} for n in names],
        "paramStructure": "either",
        "x-mode": m.mode,
    }
    if m.description:
        body["description"] = m.description
    return body


def _payload_per_kind(components: dict[str, Any], payloads: dict[str, Any]) -> None:
    """`payload` params say which schema each kind's payload meets."""
    append = components[AppendParams.__name__]["properties"]
    append["payload"] = {
        "description": "the payload of `kind`, meeting that kind's schema",
        "anyOf": list(payloads.values()),
    }
    item = components[AppendItem.__name__]
    item["oneOf"] = [
        {"properties": {"kind": {"const": k}, "payload": ref}} for k, ref in payloads.items()
    ]
