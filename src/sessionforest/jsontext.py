"""JSON text for stored values, refusing what JSON cannot hold.

orjson writes NaN and ±Infinity as `null`, so a payload holding one would be
stored as something it never said. Every writer of a payload (or a policy or
stamp) encodes it here and gets the field path of the offending number instead.
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

from .errors import InvalidPayload

# NaN and ±Infinity are the only numbers orjson writes as `null`: text without
# `null` cannot hold one, so the common case never walks the value. A compiled
# pattern, not `b"null" in raw`: it scans about twice as fast (measured on
# 0.2 and 60 KB payloads), and this runs on every append.
_has_null = re.compile(rb"null").search
_dumps = orjson.dumps


def _any_nonfinite(value: Any) -> bool:
    """Whether `value` holds a NaN or infinite float, without building paths:
    the text of many payloads holds a legitimate `null` (`"stop_reason": null`)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if not isinstance(value, dict | list | tuple):
        return False
    isfinite = math.isfinite
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        for v in item.values() if isinstance(item, dict) else item:
            kind = type(v)
            if kind is str or kind is int or v is None or kind is bool:
                continue  # the usual leaves, first and cheapest
            if isinstance(v, float):
                if not isfinite(v):
                    return True
            elif isinstance(v, dict | list | tuple):
                push(v)
    return False


def nonfinite(value: Any) -> tuple[str, float] | None:
    """The path (`content[0].input.x`, `$` for the value itself) and value of the
    first NaN or infinite float inside `value`, or None when there is none."""
    if not _any_nonfinite(value):
        return None
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return path or "$", item
        elif isinstance(item, dict):
            prefix = path + "." if path else ""
            # Reversed onto a stack: the first offending field in document order wins.
            stack.extend((f"{prefix}{key}", v) for key, v in reversed(item.items()))
        elif isinstance(item, list | tuple):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return None


def describe(number: float) -> str:
    name = "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")
    return f"is {name}, which JSON cannot hold (it would be stored as null)"


def encode(value: Any, option: int = 0) -> bytes:
    """`value` as JSON bytes (orjson `option`s apply); NonFinite, a ValueError, names
    the field of a NaN or infinite number.

    orjson's own refusals (an integer beyond 64 bits, a non-string key, an
    unknown type) come through as orjson.JSONEncodeError, a TypeError.
    """
    raw = orjson.dumps(value, option=option)
    if _has_null(raw):
        found = nonfinite(value)
        if found is not None:
            raise NonFinite(*found)
    return raw


class NonFinite(ValueError):
    """A NaN or infinite float at `path`; callers turn it into their own ForestError."""

    def __init__(self, path: str, number: float) -> None:
        self.path = path
        self.reason = describe(number)
        super().__init__(f"field '{path}' {self.reason}")


def payload_text(kind: str, payload: Any) -> str:
    """The stored JSON text of an entry payload; InvalidPayload names kind and field."""
    # `encode`, inlined: this runs on every append.
    try:
        raw = _dumps(payload)
    except orjson.JSONEncodeError as exc:  # e.g. an integer beyond 64 bits
        raise InvalidPayload(kind, "$", f"cannot be stored as JSON: {exc}") from exc
    if _has_null(raw):
        found = nonfinite(payload)
        if found is not None:
            raise InvalidPayload(kind, found[0], describe(found[1]))
    return raw.decode()
