"""What every stream adapter shares: one assistant message assembled from events.

A `StreamAdapter` collects finished content blocks and the raw notifications
worth keeping; its `Recorder` appends them only when the message ends (or is
abandoned), so deltas and half-built blocks never reach the forest.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, Protocol, Self

from ..errors import AdapterError, InvalidPayload
from ..model import Entry, Visibility

Event = dict[str, Any]
Block = dict[str, Any]

# Adapter lifecycle: events are taken only while OPEN. BROKEN follows an
# AdapterError: what was assembled can no longer be trusted, so nothing of it
# is ever appended.
OPEN, FINISHED, BROKEN = "open", "finished", "broken"


class End(NamedTuple):
    """How a stream ended: the message's stop reason and whether it is incomplete."""

    stop_reason: str | None
    incomplete: bool = False


@dataclass(frozen=True, slots=True)
class AssembledMessage:
    """One finished (or abandoned) assistant message, as the forest now holds it."""

    entry: Entry  # the assistant.message
    notifications: tuple[Entry, ...]  # hidden provider.notification entries, in arrival order

    @property
    def payload(self) -> dict[str, Any]:
        return self.entry.payload

    @property
    def complete(self) -> bool:
        return not self.entry.payload["incomplete"]


class TurnWriter(Protocol):
    """What an adapter writes through: `Forest.append_many` (one transaction per turn)."""

    def append_many(
        self, session_id: str, items: Sequence[tuple[str, dict[str, Any], str | None]]
    ) -> list[Entry]: ...


class Recorder:
    """Appends one message to a session: its notifications first, the message last.

    The message goes last so the head ends on it: whatever the harness appends
    next (a tool result, the next user turn) is its child, and the sequence
    order is the order in which things happened (a ping arrived while the
    message was still being written).
    """

    def __init__(self, forest: TurnWriter, session_id: str) -> None:
        self.forest = forest
        self.session_id = session_id

    def record(
        self, payload: dict[str, Any], notifications: Sequence[dict[str, Any]]
    ) -> AssembledMessage:
        # One transaction for the whole turn: the forest validates every item
        # first, so notifications are never left behind without their message.
        items: list[tuple[str, dict[str, Any], str | None]] = [
            ("provider.notification", note, Visibility.HIDDEN) for note in notifications
        ]
        items.append(("assistant.message", payload, None))
        *kept, entry = self.forest.append_many(self.session_id, items)
        return AssembledMessage(entry, tuple(kept))


def as_event(event: object) -> Event | None:
    """A JSON dict from a raw event dict or an SDK event object; None if neither."""
    if isinstance(event, Mapping):
        return dict(event)
    dump = getattr(event, "model_dump", None)
    if callable(dump):
        # exclude_unset keeps the wire shape (no invented null fields) in notifications.
        dumped = dump(mode="json", by_alias=True, exclude_unset=True)
        if isinstance(dumped, dict):
            return dumped
    return None


class StreamAdapter(ABC):
    """Turns one provider stream (one assistant message) into forest entries.

    Subclasses implement `_is_delta`, `_handle` (assemble one event; an `End`
    when it ends the stream properly) and `_unfinished` (the blocks still open,
    described for the payload's `dropped` list). One adapter per stream.
    """

    provider: ClassVar[str]
    # Event types kept as notifications even with keep_notifications=False.
    always_kept: ClassVar[frozenset[str]]

    def __init__(
        self, forest: TurnWriter, session_id: str, *, keep_notifications: bool = True
    ) -> None:
        self.recorder = Recorder(forest, session_id)
        self.keep_notifications = keep_notifications
        self.index = -1  # position of the event being handled; AdapterError names it
        self.model: str | None = None
        self.usage: dict[str, Any] = {}
        self.error: dict[str, Any] | None = None
        self.state = OPEN
        self._blocks: dict[tuple[int, ...], Block] = {}  # finished blocks by stream position
        self._notes: list[dict[str, Any]] = []

    # --- the public surface --------------------------------------------------------

    def feed(self, event: object) -> AssembledMessage | None:
        """Take one event; returns the recorded message when this event ended the stream."""
        if self.state != OPEN:
            raise AdapterError(self.provider, self.index + 1, f"the stream is already {self.state}")
        self.index += 1
        raw = as_event(event)
        if raw is None or not isinstance(raw.get("type"), str):
            raise self.fail(f"not a stream event: {type(event).__name__} without a string 'type'")
        etype = raw["type"]
        if etype in self.always_kept or (self.keep_notifications and not self._is_delta(etype)):
            self._notes.append({"provider": self.provider, "index": self.index, "event": raw})
        try:
            end = self._handle(raw)
        except (KeyError, TypeError) as exc:
            # The event lacks a field (or has one of the wrong type) the format requires.
            raise self.fail(f"malformed {etype} event: {exc!r}") from exc
        except BaseException:
            self.state = BROKEN
            raise
        return None if end is None else self._finish(end)

    def close(self) -> AssembledMessage | None:
        """End the stream here; if it never ended properly, record it as incomplete.

        What was shown is kept: the finished blocks, and a text block still open
        with the text it had so far (its position listed in the payload's
        `partial`: it was cut off there). Every other block still open (a tool
        call whose input is unfinished JSON, thinking without its signature) is
        left out and listed in the payload's `dropped`. Returns None when there
        is nothing to record (no events, already finished, or broken by an
        AdapterError).
        """
        if self.state != OPEN or self.index < 0:
            return None
        end = End("error" if self.error else "interrupted", incomplete=True)
        return self._finish(end, keep_partial=True)

    interrupt = close

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- for subclasses ------------------------------------------------------------

    def fail(self, reason: str) -> AdapterError:
        """The error for the current event; the adapter will record nothing more."""
        self.state = BROKEN
        return AdapterError(self.provider, self.index, reason)

    def add_block(self, key: tuple[int, ...], block: Block) -> None:
        self._blocks[key] = block

    def merge_usage(self, usage: Mapping[str, Any] | None) -> None:
        # Providers report usage in pieces (at the start, then at the end);
        # a later null means "not reported here", not "zero".
        if usage:
            self.usage.update({k: v for k, v in usage.items() if v is not None})

    def _finish(self, end: End, keep_partial: bool = False) -> AssembledMessage:
        cut: set[tuple[int, ...]] = set()
        if keep_partial:
            for key, block in self._partial():
                self._blocks[key] = block
                cut.add(key)
        ordered = sorted(self._blocks.items())
        payload: dict[str, Any] = {
            "content": [block for _, block in ordered],
            "provider": self.provider,
            "stop_reason": end.stop_reason,
            "incomplete": end.incomplete or self.error is not None,
        }
        if self.model is not None:
            payload["model"] = self.model
        if self.usage:
            payload["usage"] = self.usage
        if cut:
            payload["partial"] = [i for i, (key, _) in enumerate(ordered) if key in cut]
        dropped = self._unfinished(kept=cut)
        if dropped:
            payload["dropped"] = dropped
        try:
            result = self.recorder.record(payload, self._notes)
        except InvalidPayload as exc:
            raise self.fail(str(exc)) from exc
        except BaseException:
            self.state = BROKEN
            raise
        self.state = FINISHED
        return result

    @abstractmethod
    def _is_delta(self, event_type: str) -> bool:
        """Whether events of this type carry content deltas (never kept as notifications)."""

    @abstractmethod
    def _handle(self, event: Event) -> End | None:
        """Assemble one event; an `End` when it ends the stream properly."""

    @abstractmethod
    def _unfinished(self, kept: set[tuple[int, ...]]) -> list[Block]:
        """The blocks still open, except those `kept` as partial, described for `dropped`."""

    @abstractmethod
    def _partial(self) -> list[tuple[tuple[int, ...], Block]]:
        """The open text blocks with the text streamed so far (what the reader was shown)."""
