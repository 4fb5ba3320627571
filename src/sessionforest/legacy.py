"""Kinds and payload shapes written before the current contract: a leaf module.

`model` (reading entries) and `kinds` (validating them) both import it, so
neither has to import the other. Legacy kinds are readable, never appendable;
v1 payloads (the flat shape of the agent_events era) are upgraded on read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# New writes use v2; v1 (the shape written before the forest, e.g. by the
# agent_events migration) is upgraded on read; anything else fails closed.
CURRENT_SCHEMA_VERSION = 2
SUPPORTED_SCHEMA_VERSIONS = frozenset({1, 2})

# Kinds written before the forest's typed contract. Readable (mapped to their
# successor on read), never appendable.
LEGACY_KINDS: dict[str, str] = {
    "user.prompt": "user.message",
    "assistant.text": "assistant.message",
    "tool.call": "tool.started",
    "tool.result": "tool.completed",
    "agent.event": "provider.notification",
}


# --- reading v1 ------------------------------------------------------------------


def _v1_message(payload: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in payload.items() if k not in ("text", "tool_calls")}
    blocks: list[dict[str, Any]] = []
    if payload.get("text"):
        blocks.append({"type": "text", "text": payload["text"]})
    for call in payload.get("tool_calls") or ():
        blocks.append(
            {
                "type": "tool_call",
                "id": call.get("id", ""),
                "name": call.get("name", ""),
                "input": call.get("arguments", {}),
            }
        )
    out["content"] = blocks
    return out


def _v1_tool_started(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "call_id": payload.get("tool_use_id", ""),
        "name": payload.get("name", ""),
        "input": payload.get("arguments", {}),
    }


def _v1_tool_completed(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "call_id": payload.get("tool_use_id", ""),
        "output": payload.get("result", ""),
        "is_error": bool(payload.get("is_error", False)),
    }


def _v1_notification(payload: dict[str, Any]) -> dict[str, Any]:
    return {"provider": payload.get("provider", "legacy"), "event": payload}


_V1_UPGRADES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "user.message": _v1_message,
    "assistant.message": _v1_message,
    "tool.started": _v1_tool_started,
    "tool.completed": _v1_tool_completed,
    "provider.notification": _v1_notification,
}


def upgrade(kind: str, payload: dict[str, Any], version: int) -> tuple[str, dict[str, Any]]:
    """Map a stored (kind, payload) at `version` to the current contract.

    v1 payloads were flat (`{"text": ...}`, `tool_use_id`/`arguments`/`result`);
    v2 uses content blocks and call ids. Callers check the version is supported.
    """
    kind = LEGACY_KINDS.get(kind, kind)
    if version == 1:
        up = _V1_UPGRADES.get(kind)
        if up is not None:
            payload = up(payload)
    return kind, payload
