"""Anthropic Messages streaming events -> one durable assistant.message.

Feed the raw events (`messages.create(stream=True)`, or their JSON) in order;
text, thinking, signatures and tool input JSON are assembled here, block by
block, and the message is appended at `message_stop` (or at `close()`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .base import Block, End, Event, StreamAdapter, TurnWriter

# Our block type for each Anthropic content block type we can take.
FOREST_TYPE = {
    "text": "text",
    "thinking": "thinking",
    "redacted_thinking": "redacted_thinking",
    "tool_use": "tool_call",
}

# (block type, delta type) -> the delta field appended to the block's body.
# citations_delta is accepted and ignored: the text it annotates is kept, and
# our text blocks have no citation field.
DELTA_FIELD = {
    ("text", "text_delta"): "text",
    ("thinking", "thinking_delta"): "thinking",
    ("tool_use", "input_json_delta"): "partial_json",
}


@dataclass(slots=True)
class _Open:
    """A content block between its content_block_start and content_block_stop."""

    type: str
    body: str = ""  # text, thinking, redacted data, or tool input JSON so far
    signature: str = ""
    id: str = ""
    name: str = ""
    start_input: dict[str, Any] = field(default_factory=dict)


class AnthropicStreamAdapter(StreamAdapter):
    """Assembles one Anthropic streamed message; see `StreamAdapter` for feed/close."""

    provider = "anthropic"
    always_kept = frozenset({"ping", "error"})

    def __init__(
        self, forest: TurnWriter, session_id: str, *, keep_notifications: bool = True
    ) -> None:
        super().__init__(forest, session_id, keep_notifications=keep_notifications)
        self.message_id: str | None = None
        self.stop_reason: str | None = None
        self._open: dict[int, _Open] = {}
        self._next_block = 0  # blocks arrive with consecutive indexes from 0

    def _is_delta(self, event_type: str) -> bool:
        # message_delta is not one: it carries the stop reason and final usage.
        return event_type == "content_block_delta"

    def _handle(self, event: Event) -> End | None:
        etype = event["type"]
        if etype == "message_start":
            if self.message_id is not None:
                raise self.fail("a second message_start in one stream")
            message = event["message"]
            self.message_id = message["id"]
            self.model = message["model"]
            self.merge_usage(message.get("usage"))
        elif etype == "error":
            self.error = event.get("error") or {}
        elif etype == "ping" or not etype.startswith(("content_block_", "message_")):
            pass  # nothing to assemble (event types added later are kept as notifications)
        elif self.message_id is None:
            raise self.fail(f"{etype} before message_start")
        elif etype == "content_block_start":
            self._start(event["index"], event["content_block"])
        elif etype == "content_block_delta":
            self._delta(event["index"], event["delta"])
        elif etype == "content_block_stop":
            self._stop(event["index"])
        elif etype == "message_delta":
            self.stop_reason = event["delta"].get("stop_reason")
            self.merge_usage(event.get("usage"))
        elif etype == "message_stop":
            if self._open:
                raise self.fail(f"message_stop while content blocks {sorted(self._open)} are open")
            return End(self.stop_reason)
        return None

    def _start(self, index: int, block: dict[str, Any]) -> None:
        if index != self._next_block:
            raise self.fail(
                f"content block {index} started where block {self._next_block} was due: "
                "events were lost or reordered"
            )
        btype = block["type"]
        if btype not in FOREST_TYPE:
            raise self.fail(f"content block type {btype!r} has no forest shape")
        self._next_block += 1
        opened = _Open(btype)
        if btype == "text":
            opened.body = block["text"]
        elif btype == "thinking":
            opened.body, opened.signature = block["thinking"], block.get("signature") or ""
        elif btype == "redacted_thinking":
            opened.body = block["data"]
        else:
            opened.id, opened.name = block["id"], block["name"]
            opened.start_input = block.get("input") or {}
        self._open[index] = opened

    def _block(self, index: int, etype: str) -> _Open:
        opened = self._open.get(index)
        if opened is None:
            raise self.fail(f"{etype} for content block {index}, which is not open")
        return opened

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        opened = self._block(index, "content_block_delta")
        dtype = delta["type"]
        if opened.type == "thinking" and dtype == "signature_delta":
            opened.signature += delta["signature"]
        elif (opened.type, dtype) in DELTA_FIELD:
            opened.body += delta[DELTA_FIELD[opened.type, dtype]]
        elif not (opened.type == "text" and dtype == "citations_delta"):
            raise self.fail(f"a {dtype} cannot extend content block {index} ({opened.type})")

    def _stop(self, index: int) -> None:
        opened = self._block(index, "content_block_stop")
        del self._open[index]
        block: Block
        if opened.type == "text":
            block = {"type": "text", "text": opened.body}
        elif opened.type == "thinking":
            block = {"type": "thinking", "thinking": opened.body}
            if opened.signature:
                block["signature"] = opened.signature
        elif opened.type == "redacted_thinking":
            block = {"type": "redacted_thinking", "data": opened.body}
        else:
            block = {
                "type": "tool_call",
                "id": opened.id,
                "name": opened.name,
                "input": self._tool_input(opened),
            }
        self.add_block((index,), block)

    def _tool_input(self, opened: _Open) -> dict[str, Any]:
        # No input_json_delta at all means the input given at the start is whole.
        if not opened.body:
            return opened.start_input
        try:
            value = json.loads(opened.body)
        except json.JSONDecodeError as exc:
            raise self.fail(
                f"tool_use {opened.id} ({opened.name}) input is not valid JSON: "
                f"{exc.msg} at character {exc.pos}"
            ) from exc
        if not isinstance(value, dict):
            raise self.fail(
                f"tool_use {opened.id} ({opened.name}) input must be a JSON object, "
                f"got {type(value).__name__}"
            )
        return value

    def _partial(self) -> list[tuple[tuple[int, ...], Block]]:
        return [
            ((index,), {"type": "text", "text": opened.body})
            for index, opened in sorted(self._open.items())
            if opened.type == "text" and opened.body
        ]

    def _unfinished(self, kept: set[tuple[int, ...]]) -> list[Block]:
        dropped = []
        for index, opened in sorted(self._open.items()):
            if (index,) in kept:
                continue
            item: Block = {"type": FOREST_TYPE[opened.type]}
            if opened.type == "tool_use":
                item.update(id=opened.id, name=opened.name)
            dropped.append(item)
        return dropped
