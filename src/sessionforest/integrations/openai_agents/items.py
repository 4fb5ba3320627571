"""OpenAI Agents SDK items <-> forest entries, without loss.

One SDK item (a `TResponseInputItem`: a dict told apart by `type` and
`role`) is one forest entry. The forest kinds are what every other surface
reads (the log, the tree, search, the projection into a model's context):

- a user / system / developer / assistant message -> `user.message`,
  `system.message`, `assistant.message` with its text as text blocks;
- `function_call` -> an `assistant.message` holding one `tool_call` block
  (so the projection pairs it with the output, as it pairs any tool call);
- `function_call_output` -> `tool.completed`;
- `reasoning` -> an `assistant.message` of `thinking` blocks (its summary);
- `compaction` -> `compaction` (the encrypted content is kept, the summary
  says it is opaque);
- anything else (hosted tool calls, item references, types this code has
  never seen) -> `provider.notification` holding the item verbatim, with
  context visibility: nothing is hidden, and the projection skips it.

What the typed payload cannot say is kept beside it under `openai`: the item
with the text fields the payload already holds set to None. Turning the entry
back fills them in again. Every mapping is checked when it is made: if the
item does not come back deep-equal (a shape this code misjudges), the entry
keeps the whole item verbatim instead (`openai_verbatim`), so `get_items`
always returns exactly what `add_items` received.

Entries written by anything else (an imported chat, a note) have no `openai`
field; `items_of` derives plain SDK items from their text so any branch can
be handed to an agent, and skips what has no SDK form (checkpoints, status).
"""

from __future__ import annotations

from typing import Any

import orjson

from ...errors import ForestError
from ...kinds import validate_payload

PROVIDER = "openai-agents"
RESIDUAL = "openai"
VERBATIM = "openai_verbatim"
COMPACTION_SUMMARY = (
    "The conversation before this point was compacted by the OpenAI Responses API; "
    "the compacted state is encrypted (kept in this entry as the API returned it)."
)

Item = dict[str, Any]
Mapped = tuple[str, dict[str, Any], str | None]  # (kind, payload, visibility)

_MESSAGE_KINDS = {
    "user": "user.message",
    "system": "system.message",
    "developer": "system.message",
    "assistant": "assistant.message",
}
# The string fields of a content part that become a text block.
_TEXT_FIELDS = ("text", "refusal")


def to_entry(item: Item) -> Mapped:
    """The (kind, payload, visibility) that stores `item`; always one the store accepts."""
    try:
        mapped = _typed(item)
    except (KeyError, TypeError, ValueError, orjson.JSONDecodeError):
        mapped = None
    if mapped is not None:
        kind, payload = mapped
        try:
            validate_payload(kind, payload)
            if to_items(kind, payload) == [item]:
                return kind, payload, None
        except ForestError:
            pass
        # The typed form would lose something (or is refused): the item goes whole.
        whole = {k: v for k, v in payload.items() if k != RESIDUAL}
        whole[VERBATIM] = item
        try:
            validate_payload(kind, whole)
            return kind, whole, None
        except ForestError:
            pass
    return "provider.notification", {"provider": PROVIDER, "event": item}, "context"


def to_items(kind: str, payload: dict[str, Any]) -> list[Item]:
    """The SDK items an entry stands for: exactly the stored item for entries this
    module wrote, items derived from the text for others, [] for what has no SDK form."""
    verbatim = payload.get(VERBATIM)
    if isinstance(verbatim, dict):
        return [verbatim]
    residual = payload.get(RESIDUAL)
    if isinstance(residual, dict):
        return [_restore(kind, payload, residual)]
    if kind == "provider.notification" and payload.get("provider") == PROVIDER:
        event = payload.get("event")
        return [event] if isinstance(event, dict) else []
    return _derived(kind, payload)


# --- forward -------------------------------------------------------------------------


def _typed(item: Item) -> tuple[str, dict[str, Any]] | None:
    itype = item.get("type")
    role = item.get("role")
    if itype in (None, "message") and role in _MESSAGE_KINDS:
        return _message(item, _MESSAGE_KINDS[role])
    if itype == "function_call":
        return _function_call(item)
    if itype == "function_call_output":
        return _function_output(item)
    if itype == "reasoning":
        return _reasoning(item)
    if itype == "compaction":
        return "compaction", {"summary": COMPACTION_SUMMARY, RESIDUAL: dict(item)}
    return None


def _message(item: Item, kind: str) -> tuple[str, dict[str, Any]]:
    residual = dict(item)
    content = item["content"]
    if isinstance(content, str):
        residual["content"] = None
        blocks = [{"type": "text", "text": content}]
    else:
        blocks, residual["content"] = _lift_parts(content)
    return kind, {"content": blocks, RESIDUAL: residual}


def _lift_parts(parts: list[Any]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Text blocks for `parts`, and the parts with each lifted text set to None."""
    blocks: list[dict[str, Any]] = []
    kept: list[Any] = []
    for part in parts:
        field = next((f for f in _TEXT_FIELDS if isinstance(part.get(f), str)), None)
        if field is None:
            # An image, a file, an audio clip: kept whole, named in the text.
            blocks.append({"type": "text", "text": f"[{part.get('type', 'part')}]"})
            kept.append(part)
        else:
            blocks.append({"type": "text", "text": part[field]})
            kept.append({**part, field: None})
    return blocks, kept


def _function_call(item: Item) -> tuple[str, dict[str, Any]]:
    residual = dict(item)
    raw = item["arguments"]
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:
        parsed = None  # what a model wrote is kept as it wrote it
    if isinstance(parsed, dict) and orjson.dumps(parsed).decode() == raw:
        residual["arguments"] = None  # rebuilt from the tool call's input
        arguments = parsed
    else:
        arguments = {"arguments": raw}
    block = {"type": "tool_call", "id": item["call_id"], "name": item["name"], "input": arguments}
    return "assistant.message", {"content": [block], RESIDUAL: residual}


def _function_output(item: Item) -> tuple[str, dict[str, Any]]:
    residual = dict(item)
    output = item["output"]
    if isinstance(output, str):
        residual["output"] = None
        stored: Any = output
    else:
        stored, residual["output"] = _lift_parts(output)
    return "tool.completed", {"call_id": item["call_id"], "output": stored, RESIDUAL: residual}


def _reasoning(item: Item) -> tuple[str, dict[str, Any]]:
    residual = dict(item)
    summary = item.get("summary") or []
    blocks = []
    kept = []
    for part in summary:
        if isinstance(part.get("text"), str):
            blocks.append({"type": "thinking", "thinking": part["text"]})
            kept.append({**part, "text": None})
        else:
            kept.append(part)
    if "summary" in item:
        residual["summary"] = kept
    return "assistant.message", {"content": blocks, RESIDUAL: residual}


# --- back ----------------------------------------------------------------------------


def _restore(kind: str, payload: dict[str, Any], residual: dict[str, Any]) -> Item:
    item = dict(residual)
    if kind in ("user.message", "system.message", "assistant.message"):
        blocks = payload.get("content") or []
        itype = residual.get("type")
        if itype == "function_call":
            if item.get("arguments") is None:
                item["arguments"] = orjson.dumps(blocks[0]["input"]).decode()
            return item
        if itype == "reasoning":
            if "summary" in residual:
                item["summary"] = _fill(residual["summary"], blocks, "thinking")
            return item
        content = residual.get("content")
        if content is None:
            item["content"] = blocks[0]["text"] if blocks else ""
        else:
            item["content"] = _fill(content, blocks, "text")
        return item
    if kind == "tool.completed":
        output = residual.get("output")
        stored = payload.get("output")
        if output is None:
            item["output"] = stored
        else:
            item["output"] = _fill(output, stored if isinstance(stored, list) else [], "text")
        return item
    return item


def _fill(parts: list[Any], blocks: list[dict[str, Any]], key: str) -> list[Any]:
    """`parts` with each lifted (None) text field taken from the block at its index."""
    out = []
    for i, part in enumerate(parts):
        if isinstance(part, dict) and i < len(blocks):
            restored = dict(part)
            for field in (*_TEXT_FIELDS, "text"):
                if field in restored and restored[field] is None:
                    restored[field] = blocks[i].get(key)
                    break
            out.append(restored)
        else:
            out.append(part)
    return out


def _derived(kind: str, payload: dict[str, Any]) -> list[Item]:
    """Plain SDK items for an entry another writer made (an imported chat, a note)."""
    blocks = payload.get("content")
    if kind in ("user.message", "system.message") and isinstance(blocks, list):
        text = _joined(blocks)
        role = "user" if kind == "user.message" else "system"
        return [{"role": role, "content": text}] if text else []
    if kind == "assistant.message" and isinstance(blocks, list):
        items: list[Item] = []
        text = _joined(blocks)
        if text:
            part = {"type": "output_text", "text": text, "annotations": []}
            items.append({"type": "message", "role": "assistant", "content": [part]})
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_call":
                arguments = orjson.dumps(block.get("input") or {}).decode()
                items.append({"type": "function_call", "call_id": str(block.get("id")),
                              "name": str(block.get("name")), "arguments": arguments})  # fmt: skip
        return items
    if kind == "tool.completed":
        output = payload.get("output")
        text = output if isinstance(output, str) else _joined(output or [])
        return [{"type": "function_call_output", "call_id": str(payload.get("call_id")),
                 "output": text}]  # fmt: skip
    if kind in ("compaction", "branch.summary"):
        return [{"role": "user", "content": f"[summary] {payload.get('summary', '')}"}]
    return []


def _joined(blocks: list[Any]) -> str:
    return "\n".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )
