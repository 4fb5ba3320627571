"""Projection: a session's active path -> provider-neutral agent context.

Walks root -> head, keeps context-visible entries only, strips stamps and
controller metadata, applies compactions, and checks that every tool call is
answered exactly once. `render_providers.py` turns the result into requests.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, Protocol, TypedDict

from .errors import ProjectionError, UnsupportedSchemaVersion
from .kinds import KINDS
from .model import SUPPORTED_SCHEMA_VERSIONS, Entry, Visibility

__all__ = [
    "BRANCH_PREAMBLE",
    "COMPACTION_PREAMBLE",
    "Block",
    "Message",
    "PathSource",
    "Role",
    "project",
    "project_entries",
]

Role = Literal["system", "user", "assistant", "tool"]
Block = dict[str, Any]  # a content block as in kinds.py: text, image, thinking, ...

COMPACTION_PREAMBLE = "Summary of the earlier conversation:"
BRANCH_PREAMBLE = "Summary of another branch:"


class Message(TypedDict):
    """One provider-neutral message; `tool_call_id` and `is_error` only on role "tool"."""

    role: Role
    content: list[Block]
    tool_call_id: NotRequired[str]
    is_error: NotRequired[bool]


class PathSource(Protocol):
    """Anything with an active path: the SQLite forest, other backends, test doubles."""

    def active_path(self, session_id: str) -> list[Entry]: ...


# Which block types each role may carry; anything else (e.g. a tool_call that a
# v1 upgrade put into a user message) fails closed instead of reaching a model.
_ALLOWED: dict[Role, frozenset[str]] = {
    "system": frozenset({"text"}),
    "user": frozenset({"text", "image"}),
    "assistant": frozenset({"text", "thinking", "redacted_thinking", "tool_call"}),
    "tool": frozenset({"text", "image"}),
}

_SIMPLE_ROLES: dict[str, Role] = {
    "system.message": "system",
    "user.message": "user",
    "assistant.message": "assistant",
}
_MAPPED = frozenset(
    {*_SIMPLE_ROLES, "tool.completed", "compaction", "branch.summary", "worker.result"}
)
# Kinds the forest knows but a model has no use for (tool.started is superseded
# by the assistant's tool_call, notifications are provider-internal, ...): even
# when appended with context visibility they are skipped, not guessed at.
_NOT_FOR_MODELS = frozenset(KINDS) - _MAPPED


@dataclass(frozen=True, slots=True)
class _Sourced:
    # `position` is where on the path the message stands; a compaction summary
    # stands just before the first entry it kept, hence a float.
    position: float
    entry_id: str
    message: Message


def project(forest: PathSource, session_id: str, *, allow_pending: bool = False) -> list[Message]:
    """The agent context for the session's active branch, root first.

    Fails closed: an unknown schema version or a damaged tree raises from
    `active_path`, broken tool pairing raises ProjectionError; either way
    nothing partial is returned. See `project_entries` for `allow_pending`.
    """
    return project_entries(session_id, forest.active_path(session_id), allow_pending=allow_pending)


def project_entries(
    session_id: str, entries: Sequence[Entry], *, allow_pending: bool = False
) -> list[Message]:
    """Project `entries` (a root -> head path) without a store.

    Every tool call must be answered by a later tool result on the path and
    every result must answer an open call, or ProjectionError names the entry.
    With `allow_pending=True`, calls left open by the *final* message (an
    assistant turn whose tools are still running) are dropped from it instead;
    an open call anywhere earlier still raises.
    """
    for entry in entries:
        if entry.semantic_schema_version not in SUPPORTED_SCHEMA_VERSIONS:
            raise UnsupportedSchemaVersion(entry.id, entry.semantic_schema_version, session_id)
    position = {entry.id: i for i, entry in enumerate(entries)}
    out: list[_Sourced] = []
    for i, entry in enumerate(entries):
        if entry.context_visibility != Visibility.CONTEXT:
            continue
        if entry.kind == "compaction":
            out = _compact(session_id, entry, i, position, out)
            continue
        message = _message(session_id, entry)
        if message is not None:
            out.append(_Sourced(i, entry.id, message))
    _check_pairing(session_id, out, allow_pending)
    return [sourced.message for sourced in out]


def _compact(
    session_id: str, entry: Entry, index: int, position: dict[str, int], out: list[_Sourced]
) -> list[_Sourced]:
    first_kept = entry.payload.get("first_kept_entry_id")
    if first_kept is None:
        start = index
    else:
        found = position.get(first_kept)
        if found is None or found >= index:
            raise ProjectionError(
                session_id,
                entry.id,
                f"compaction keeps from entry {first_kept}, "
                "which is not earlier on the active path",
            )
        start = found
    # System prompts are instructions, not conversation: a summary cannot stand
    # in for them, so they survive every compaction.
    kept_system = [s for s in out if s.position < start and s.message["role"] == "system"]
    tail = [s for s in out if s.position >= start]
    summary = _user_text(f"{COMPACTION_PREAMBLE}\n{entry.payload['summary']}")
    return [*kept_system, _Sourced(start - 0.5, entry.id, summary), *tail]


def _message(session_id: str, entry: Entry) -> Message | None:
    kind, payload = entry.kind, entry.payload
    role = _SIMPLE_ROLES.get(kind)
    if role is not None:
        raw = payload.get("content") or []
        if role == "assistant" and payload.get("incomplete") is True:
            # An interrupted turn's tool calls never ran; sending them would
            # demand results that do not exist.
            raw = [b for b in raw if not (isinstance(b, dict) and b.get("type") == "tool_call")]
        blocks = _blocks(session_id, entry, role, raw)
        return {"role": role, "content": blocks} if blocks else None
    if kind == "tool.completed":
        output = payload.get("output", "")
        raw = [{"type": "text", "text": output}] if isinstance(output, str) else output
        return {
            "role": "tool",
            "tool_call_id": str(payload.get("call_id", "")),
            "content": _blocks(session_id, entry, "tool", raw),
            "is_error": bool(payload.get("is_error", False)),
        }
    if kind == "branch.summary":
        return _user_text(f"{BRANCH_PREAMBLE} {payload['summary']}")
    if kind == "worker.result":
        head = f"[worker {payload['worker_session_id']} {payload['status']}]"
        return _user_text(f"{head} {payload['summary']}")
    if kind in _NOT_FOR_MODELS:
        return None
    raise ProjectionError(
        session_id, entry.id, f"entry kind {kind!r} is unknown to this projector; refusing to guess"
    )


def _user_text(text: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _blocks(session_id: str, entry: Entry, role: Role, raw: Any) -> list[Block]:
    """Fresh copies of the known fields of each block, so callers never share the store's cache."""
    if not isinstance(raw, list):
        # Only an unvalidated (v1-upgraded) payload can get here.
        raise ProjectionError(session_id, entry.id, f"{role} content is not a list of blocks")
    out: list[Block] = []
    for block in raw:
        btype = block.get("type") if isinstance(block, dict) else None
        if btype not in _ALLOWED[role]:
            raise ProjectionError(
                session_id, entry.id, f"a {role} message cannot carry a {btype!r} content block"
            )
        if btype == "text":
            # Providers reject blank text blocks, and they carry nothing.
            if str(block.get("text", "")).strip():
                out.append({"type": "text", "text": block["text"]})
        elif btype == "image":
            image = {"type": "image", "media_type": block.get("media_type", "")}
            for key in ("data", "url"):
                if key in block:
                    image[key] = block[key]
            out.append(image)
        elif btype == "thinking":
            thinking = {"type": "thinking", "thinking": block.get("thinking", "")}
            if "signature" in block:
                thinking["signature"] = block["signature"]
            out.append(thinking)
        elif btype == "redacted_thinking":
            out.append({"type": "redacted_thinking", "data": block.get("data", "")})
        else:
            out.append(
                {
                    "type": "tool_call",
                    "id": str(block.get("id", "")),
                    "name": str(block.get("name", "")),
                    "input": copy.deepcopy(block.get("input", {})),
                }
            )
    return out


def _check_pairing(session_id: str, out: list[_Sourced], allow_pending: bool) -> None:
    open_calls: dict[str, _Sourced] = {}  # call id -> the assistant message that made it
    seen: set[str] = set()
    for sourced in out:
        message = sourced.message
        if message["role"] == "assistant":
            for call_id in _call_ids(message):
                if call_id in seen:
                    raise ProjectionError(
                        session_id, sourced.entry_id, f"tool call id {call_id!r} is used twice"
                    )
                seen.add(call_id)
                open_calls[call_id] = sourced
        elif message["role"] == "tool":
            call_id = message["tool_call_id"]
            if open_calls.pop(call_id, None) is None:
                why = "was already answered" if call_id in seen else "matches no earlier tool call"
                raise ProjectionError(
                    session_id,
                    sourced.entry_id,
                    f"orphan tool result: call {call_id!r} {why} on the active path",
                )
    if not open_calls:
        return
    last = out[-1]
    if allow_pending and all(owner is last for owner in open_calls.values()):
        remaining = [
            b
            for b in last.message["content"]
            if not (b["type"] == "tool_call" and b["id"] in open_calls)
        ]
        last.message["content"] = remaining
        if not remaining:
            out.pop()
        return
    call_id, owner = next(iter(open_calls.items()))
    raise ProjectionError(
        session_id,
        owner.entry_id,
        f"tool call {call_id!r} has no result on the active path "
        "(allow_pending=True drops open calls of the final message only)",
    )


def _call_ids(message: Message) -> list[str]:
    return [b["id"] for b in message["content"] if b["type"] == "tool_call"]
