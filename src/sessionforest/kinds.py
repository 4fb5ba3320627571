"""The typed entry kinds: one payload contract per kind, legacy kinds, v1 upgrades.

Validation is hand-written rather than delegated to a schema library because
it sits on the append hot path (a few microseconds per entry) and its errors
must name the kind and the exact field path (`content[1].input`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import DeltaRefused, InvalidPayload, LegacyKind, UnknownKind
from .legacy import LEGACY_KINDS
from .model import Visibility

Check = Callable[[str, str, Any], None]  # (kind, field path, value) -> raises InvalidPayload


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _str(kind: str, path: str, value: Any) -> None:
    if not isinstance(value, str):
        raise InvalidPayload(kind, path, f"must be a string, got {_type_name(value)}")


def _text(kind: str, path: str, value: Any) -> None:
    _str(kind, path, value)
    if not value.strip():
        raise InvalidPayload(kind, path, "must not be empty")


def _int(kind: str, path: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidPayload(kind, path, f"must be an integer, got {_type_name(value)}")


def _bool(kind: str, path: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise InvalidPayload(kind, path, f"must be true or false, got {_type_name(value)}")


def _object(kind: str, path: str, value: Any) -> None:
    if not isinstance(value, dict):
        raise InvalidPayload(kind, path, f"must be an object, got {_type_name(value)}")


def _anything(kind: str, path: str, value: Any) -> None:
    return None


def _optional_str(kind: str, path: str, value: Any) -> None:
    if value is not None:
        _str(kind, path, value)


def _one_of(*values: str) -> Check:
    allowed = ", ".join(values)

    def check(kind: str, path: str, value: Any) -> None:
        if value not in values:
            raise InvalidPayload(kind, path, f"must be one of {allowed}, got {value!r}")

    return check


# Content blocks: provider-neutral, renderable to both Anthropic and OpenAI shapes.
_BLOCK_FIELDS: dict[str, dict[str, tuple[Check, bool]]] = {
    "text": {"text": (_str, True)},
    "image": {"media_type": (_str, True), "data": (_str, False), "url": (_str, False)},
    "thinking": {"thinking": (_str, True), "signature": (_str, False)},
    "redacted_thinking": {"data": (_str, True)},
    "tool_call": {"id": (_text, True), "name": (_text, True), "input": (_object, True)},
}


def _blocks(*allowed: str, non_empty: bool = True) -> Check:
    def check(kind: str, path: str, value: Any) -> None:
        if not isinstance(value, list):
            raise InvalidPayload(kind, path, f"must be a list of blocks, got {_type_name(value)}")
        if non_empty and not value:
            raise InvalidPayload(kind, path, "must hold at least one block")
        for i, block in enumerate(value):
            where = f"{path}[{i}]"
            if not isinstance(block, dict):
                raise InvalidPayload(kind, where, f"must be an object, got {_type_name(block)}")
            btype = block.get("type")
            if btype not in allowed:
                raise InvalidPayload(
                    kind, f"{where}.type", f"must be one of {', '.join(allowed)}, got {btype!r}"
                )
            _fields(kind, where + ".", _BLOCK_FIELDS[btype], block)
            if btype == "image" and "data" not in block and "url" not in block:
                raise InvalidPayload(kind, where, "an image needs 'data' or 'url'")

    return check


def _str_or_blocks(*allowed: str) -> Check:
    as_blocks = _blocks(*allowed, non_empty=False)

    def check(kind: str, path: str, value: Any) -> None:
        if not isinstance(value, str):
            as_blocks(kind, path, value)

    return check


def _fields(kind: str, prefix: str, spec: Mapping[str, tuple[Check, bool]], obj: Any) -> None:
    for name, (check, required) in spec.items():
        if name in obj:
            check(kind, prefix + name, obj[name])
        elif required:
            raise InvalidPayload(kind, prefix + name, "is required")


@dataclass(frozen=True, slots=True)
class KindSpec:
    name: str
    fields: Mapping[str, tuple[Check, bool]]
    default_visibility: Visibility
    conversational: bool = False  # indexed for recall (issue: session recall)
    extra: Callable[[str, dict[str, Any]], None] | None = None


def _status_reason(kind: str, payload: dict[str, Any]) -> None:
    if payload["status"] in ("stopped", "cancelled", "failed") and not payload.get("reason"):
        raise InvalidPayload(kind, "reason", f"is required when status is {payload['status']}")


_C, _H = Visibility.CONTEXT, Visibility.HIDDEN
_MODEL_META: dict[str, tuple[Check, bool]] = {
    "model": (_str, False),
    "provider": (_str, False),
    "stop_reason": (_optional_str, False),
    "usage": (_object, False),
    "incomplete": (_bool, False),
}

KINDS: dict[str, KindSpec] = {
    spec.name: spec
    for spec in (
        KindSpec("system.message", {"content": (_blocks("text"), True)}, _C),
        KindSpec("user.message", {"content": (_blocks("text", "image"), True)}, _C, True),
        KindSpec(
            "assistant.message",
            {
                "content": (
                    _blocks("text", "thinking", "redacted_thinking", "tool_call", non_empty=False),
                    True,
                ),
                **_MODEL_META,
            },
            _C,
            True,
        ),
        KindSpec(
            "tool.started",
            {"call_id": (_text, True), "name": (_text, True), "input": (_object, True)},
            _H,
        ),
        KindSpec(
            "tool.completed",
            {
                "call_id": (_text, True),
                "output": (_str_or_blocks("text", "image"), True),
                "is_error": (_bool, False),
                "name": (_str, False),
            },
            _C,
        ),
        KindSpec(
            "approval.requested",
            {"request_id": (_text, True), "summary": (_text, True), "tool": (_str, False)},
            _H,
        ),
        KindSpec(
            "approval.resolved",
            {"request_id": (_text, True), "decision": (_one_of("approved", "denied"), True)},
            _H,
        ),
        KindSpec(
            "delegation.started",
            {"worker_session_id": (_text, True), "task": (_text, True)},
            _H,
        ),
        KindSpec(
            "delegation.completed",
            {"worker_session_id": (_text, True), "status": (_text, True)},
            _H,
        ),
        KindSpec(
            "worker.result",
            {
                "worker_session_id": (_text, True),
                "status": (_one_of("succeeded", "failed", "cancelled"), True),
                "summary": (_text, True),
                "data": (_anything, False),
            },
            _C,
            True,
        ),
        KindSpec("checkpoint", {"label": (_text, True), "summary": (_text, True)}, _H, True),
        KindSpec(
            "compaction",
            {
                "summary": (_text, True),
                "first_kept_entry_id": (_optional_str, False),
                "tokens_before": (_int, False),
            },
            _C,
            True,
        ),
        KindSpec(
            "branch.summary",
            {"summary": (_text, True), "from_entry_id": (_optional_str, False)},
            _C,
            True,
        ),
        KindSpec(
            "provider.notification",
            {"provider": (_text, True), "event": (_anything, True)},
            _H,
        ),
        KindSpec("model.changed", {"model": (_text, True), "provider": (_str, False)}, _H),
        KindSpec(
            "session.status",
            {
                "status": (
                    _one_of(
                        "running", "idle", "waiting", "completed", "stopped", "cancelled", "failed"
                    ),
                    True,
                ),
                "reason": (_str, False),
            },
            _H,
            extra=_status_reason,
        ),
        KindSpec("session.error", {"message": (_text, True), "code": (_str, False)}, _H),
    )
}


CONVERSATIONAL_KINDS = frozenset(k for k, spec in KINDS.items() if spec.conversational)


def spec_for_append(kind: str) -> KindSpec:
    """The contract a new entry of `kind` must meet; refuses deltas and legacy kinds."""
    spec = KINDS.get(kind)
    if spec is not None:
        return spec
    if kind.endswith(".delta"):
        raise DeltaRefused(kind)
    if kind in LEGACY_KINDS:
        raise LegacyKind(kind, LEGACY_KINDS[kind])
    raise UnknownKind(kind)


def validate_payload(kind: str, payload: Any) -> KindSpec:
    """Check `payload` against the contract of `kind`; returns the kind's spec."""
    spec = spec_for_append(kind)
    if not isinstance(payload, dict):
        raise InvalidPayload(kind, "$", f"must be a JSON object, got {_type_name(payload)}")
    _fields(kind, "", spec.fields, payload)
    if spec.extra is not None:
        spec.extra(kind, payload)
    return spec


def text_of(payload: dict[str, Any]) -> str:
    """The human-readable text of a payload (for logs, trees and search)."""
    content = payload.get("content")
    if isinstance(content, list):
        parts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_call":
                parts.append(f"[tool {block.get('name', '')}]")
        return " ".join(p for p in parts if p)
    for key in ("summary", "text", "message", "output", "model", "status", "task"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return ""
