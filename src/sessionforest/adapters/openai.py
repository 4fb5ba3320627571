"""OpenAI Responses streaming events -> one durable assistant.message.

Text, refusals, function-call arguments and reasoning are assembled from their
deltas, checked against the whole text each done event repeats, and appended at
response.completed / .incomplete / .failed or at `close()`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .base import Block, End, Event, StreamAdapter, TurnWriter

# Output item types we can take; hosted-tool items (web search, code
# interpreter, ...) have no forest shape and are refused rather than dropped.
ITEM_TYPES = frozenset({"message", "reasoning", "function_call"})

# (item type, part type) -> the block type a part becomes.
PART_BLOCK = {
    ("message", "output_text"): "text",
    ("message", "refusal"): "text",
    ("reasoning", "summary_text"): "thinking",
    ("reasoning", "reasoning_text"): "thinking",
}
PART_ADDED = frozenset({"response.content_part.added", "response.reasoning_summary_part.added"})
# A part's done event repeats the part, whole text included.
PART_DONE = frozenset({"response.content_part.done", "response.reasoning_summary_part.done"})

# Delta event type -> the block type of the part it extends.
DELTAS = {
    "response.output_text.delta": "text",
    "response.refusal.delta": "text",
    "response.function_call_arguments.delta": "tool_call",
    "response.reasoning_summary_text.delta": "thinking",
    "response.reasoning_text.delta": "thinking",
}

# Done event type -> (block type, field repeating the whole text). The deltas
# must add up to that text exactly; a difference means a delta was lost.
DONES = {
    "response.output_text.done": ("text", "text"),
    "response.refusal.done": ("text", "refusal"),
    "response.reasoning_summary_text.done": ("thinking", "text"),
    "response.reasoning_text.done": ("thinking", "text"),
    "response.function_call_arguments.done": ("tool_call", "arguments"),
}

Key = tuple[int, int, int]  # (output_index, 0 for summary parts / 1 for the rest, index)


@dataclass(slots=True)
class _Part:
    """One block in the making: a text, refusal, summary or reasoning part, or a call."""

    type: str  # the block type it becomes: text | thinking | tool_call
    body: str = ""  # text so far, or JSON arguments so far
    call_id: str = ""
    name: str = ""


def _key(event: Event) -> Key:
    # Within a reasoning item the summary comes before the reasoning text; a
    # function call is its item's only part.
    if "summary_index" in event:
        return event["output_index"], 0, event["summary_index"]
    return event["output_index"], 1, event.get("content_index", 0)


class OpenAIResponsesStreamAdapter(StreamAdapter):
    """Assembles one streamed OpenAI response; see `StreamAdapter` for feed/close.

    Reasoning summaries become thinking blocks without a signature, so a reader
    sees a turn's thinking the same way whichever provider produced it; raw
    reasoning text (open-weight models) does too. A refusal becomes a text
    block. Encrypted reasoning is provider state, kept only in notifications.
    """

    provider = "openai"
    always_kept = frozenset({"error", "response.failed", "response.incomplete"})

    def __init__(
        self, forest: TurnWriter, session_id: str, *, keep_notifications: bool = True
    ) -> None:
        super().__init__(forest, session_id, keep_notifications=keep_notifications)
        self.response_id: str | None = None
        self._sequence: int | None = None
        self._items: dict[int, str] = {}  # open output items: output_index -> item type
        self._next_item = 0  # output items arrive with consecutive indexes from 0
        self._parts: dict[Key, _Part] = {}

    def _is_delta(self, event_type: str) -> bool:
        return event_type.endswith(".delta")

    def _handle(self, event: Event) -> End | None:
        sequence = event.get("sequence_number")
        if sequence is not None:
            if self._sequence is not None and sequence != self._sequence + 1:
                raise self.fail(
                    f"sequence_number {sequence} follows {self._sequence}: "
                    "events were lost or reordered"
                )
            self._sequence = sequence
        etype = event["type"]
        if etype == "error":
            self.error = {k: event.get(k) for k in ("code", "message", "param")}
        elif etype == "response.created":
            if self.response_id is not None:
                raise self.fail("a second response.created in one stream")
            self.response_id = event["response"]["id"]
            self.model = event["response"]["model"]
        elif not etype.startswith("response."):
            pass  # event types added later are kept as notifications, nothing to assemble
        elif self.response_id is None:
            raise self.fail(f"{etype} before response.created")
        elif etype == "response.output_item.added":
            self._item_added(event["output_index"], event["item"])
        elif etype in PART_ADDED:
            self._part_added(event)
        elif etype in DELTAS:
            self._part(event, DELTAS[etype]).body += event["delta"]
        elif etype in DONES:
            block_type, whole = DONES[etype]
            part = self._part(event, block_type)
            self._agree(part, event[whole], etype)
            if block_type == "tool_call":
                self._finish_part(_key(event), self._call(part))
        elif etype in PART_DONE:
            part, whole = self._part(event), event["part"]
            self._agree(part, whole["refusal" if whole["type"] == "refusal" else "text"], etype)
            body_field = "text" if part.type == "text" else "thinking"
            self._finish_part(_key(event), {"type": part.type, body_field: part.body})
        elif etype == "response.output_item.done":
            self._item_done(event["output_index"])
        elif etype in ("response.completed", "response.incomplete", "response.failed"):
            return self._end(etype, event["response"])
        return None

    def _item_added(self, output_index: int, item: Event) -> None:
        if output_index != self._next_item:
            raise self.fail(
                f"output item {output_index} added where item {self._next_item} was due: "
                "events were lost or reordered"
            )
        if item["type"] not in ITEM_TYPES:
            raise self.fail(f"output item type {item['type']!r} has no forest shape")
        self._next_item += 1
        self._items[output_index] = item["type"]
        if item["type"] == "function_call":
            self._parts[output_index, 1, 0] = _Part("tool_call", "", item["call_id"], item["name"])

    def _part_added(self, event: Event) -> None:
        key, part_type = _key(event), event["part"]["type"]
        item_type = self._items.get(key[0])
        if item_type is None:
            raise self.fail(f"{event['type']} for output item {key[0]}, which is not open")
        block_type = PART_BLOCK.get((item_type, part_type))
        if block_type is None:
            raise self.fail(f"a {part_type!r} part in a {item_type} item has no forest shape")
        if key in self._parts:
            raise self.fail(f"{event['type']}: part {key[2]} of item {key[0]} is already open")
        self._parts[key] = _Part(block_type)

    def _part(self, event: Event, block_type: str | None = None) -> _Part:
        part = self._parts.get(_key(event))
        if part is None or block_type not in (None, part.type):
            item, _, index = _key(event)
            raise self.fail(f"{event['type']} for part {index} of output item {item}, not open")
        return part

    def _agree(self, part: _Part, whole: str, etype: str) -> None:
        if part.body != whole:
            raise self.fail(
                f"{etype} holds {len(whole)} characters but the deltas added up to "
                f"{len(part.body)}: a delta was lost or altered"
            )

    def _call(self, part: _Part) -> Block:
        try:
            value = json.loads(part.body)
        except json.JSONDecodeError as exc:
            raise self.fail(
                f"function_call {part.call_id} ({part.name}) arguments are not valid JSON: "
                f"{exc.msg} at character {exc.pos}"
            ) from exc
        if not isinstance(value, dict):
            raise self.fail(
                f"function_call {part.call_id} ({part.name}) arguments must be a JSON object, "
                f"got {type(value).__name__}"
            )
        return {"type": "tool_call", "id": part.call_id, "name": part.name, "input": value}

    def _finish_part(self, key: Key, block: Block) -> None:
        del self._parts[key]
        self.add_block(key, block)

    def _item_done(self, output_index: int) -> None:
        if output_index not in self._items:
            raise self.fail(f"response.output_item.done for item {output_index}, which is not open")
        still_open = sorted(k[2] for k in self._parts if k[0] == output_index)
        if still_open:
            raise self.fail(f"output item {output_index} done while parts {still_open} are open")
        del self._items[output_index]

    def _end(self, etype: str, response: Event) -> End:
        self.merge_usage(response.get("usage"))
        if etype == "response.completed":
            if self._items:
                raise self.fail(f"response.completed while output items {sorted(self._items)} open")
            return End(response.get("status") or "completed")
        if etype == "response.failed":
            self.error = response.get("error") or self.error or {}
            return End("failed", incomplete=True)
        reason = (response.get("incomplete_details") or {}).get("reason")
        return End(reason or "incomplete", incomplete=True)

    def _partial(self) -> list[tuple[tuple[int, ...], Block]]:
        return [
            (key, {"type": "text", "text": part.body})
            for key, part in sorted(self._parts.items())
            if part.type == "text" and part.body
        ]

    def _unfinished(self, kept: set[tuple[int, ...]]) -> list[Block]:
        dropped = []
        for key, part in sorted(self._parts.items()):
            if key in kept:
                continue
            item: Block = {"type": part.type}
            if part.type == "tool_call":
                item.update(id=part.call_id, name=part.name)
            dropped.append(item)
        return dropped
