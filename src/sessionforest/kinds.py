"""The typed entry kinds: one payload contract per kind, as msgspec Structs.

One definition serves three ends: `validate_payload` (msgspec checks a payload
against its kind's Struct, ~2x faster than the hand-written checks it replaced:
benchmarks/bench_kinds.py), the JSON Schema the server publishes (openrpc.py
reads the Structs), and, on a refusal, the InvalidPayload naming the kind and
the field path (`content[0].text`): msgspec's own error says where, `refusal`
says it in the forest's words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from .errors import DeltaRefused, InvalidPayload, LegacyKind, UnknownKind
from .legacy import LEGACY_KINDS
from .model import Visibility

# A string holding something besides whitespace (an id, a summary, a label). The
# schema says so with a pattern; msgspec checks only the length (a pattern costs
# ~0.4 µs a field) and each Struct's __post_init__ refuses blanks (`_filled`).
Text = Annotated[str, Meta(min_length=1, extra_json_schema={"pattern": r"\S"})]
Object = dict[str, Any]


class Rule(ValueError):
    """A contract no type can say (`__post_init__`): `field` relative to the object."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def _filled(obj: Struct, *names: str) -> None:
    for name in names:
        if getattr(obj, name).isspace():
            raise Rule(name, "must not be empty")


# --- content blocks: provider-neutral, renderable to Anthropic and OpenAI shapes ----


class TextBlock(Struct, tag_field="type", tag="text"):
    text: str


class ImageBlock(Struct, tag_field="type", tag="image"):
    media_type: str
    data: str | UnsetType = UNSET
    url: str | UnsetType = UNSET

    def __post_init__(self) -> None:
        if self.data is UNSET and self.url is UNSET:
            raise Rule("", "an image needs 'data' or 'url'")


class ThinkingBlock(Struct, tag_field="type", tag="thinking"):
    thinking: str
    signature: str | UnsetType = UNSET


class RedactedThinkingBlock(Struct, tag_field="type", tag="redacted_thinking"):
    data: str


class ToolCallBlock(Struct, tag_field="type", tag="tool_call"):
    id: Text
    name: Text
    input: Object

    def __post_init__(self) -> None:
        _filled(self, "id", "name")


Blocks = Annotated[list[TextBlock | ImageBlock], Meta(min_length=1)]

# --- payloads, one per kind ----------------------------------------------------------


class SystemMessage(Struct):
    content: Annotated[list[TextBlock], Meta(min_length=1)]


class UserMessage(Struct):
    content: Blocks


class AssistantMessage(Struct):
    content: list[TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolCallBlock]
    model: str | UnsetType = UNSET
    provider: str | UnsetType = UNSET
    stop_reason: str | UnsetType | None = UNSET
    usage: Object | UnsetType = UNSET
    incomplete: bool | UnsetType = UNSET


class ToolStarted(Struct):
    call_id: Text
    name: Text
    input: Object

    def __post_init__(self) -> None:
        _filled(self, "call_id", "name")


class ToolCompleted(Struct):
    call_id: Text
    output: str | list[TextBlock | ImageBlock]
    is_error: bool | UnsetType = UNSET
    name: str | UnsetType = UNSET

    def __post_init__(self) -> None:
        _filled(self, "call_id")


class ApprovalRequested(Struct):
    request_id: Text
    summary: Text
    tool: str | UnsetType = UNSET

    def __post_init__(self) -> None:
        _filled(self, "request_id", "summary")


class ApprovalResolved(Struct):
    request_id: Text
    decision: Literal["approved", "denied"]

    def __post_init__(self) -> None:
        _filled(self, "request_id")


class DelegationStarted(Struct):
    worker_session_id: Text
    task: Text

    def __post_init__(self) -> None:
        _filled(self, "worker_session_id", "task")


class DelegationCompleted(Struct):
    worker_session_id: Text
    status: Text

    def __post_init__(self) -> None:
        _filled(self, "worker_session_id", "status")


class WorkerResult(Struct):
    worker_session_id: Text
    status: Literal["succeeded", "failed", "cancelled"]
    summary: Text
    data: Any = UNSET

    def __post_init__(self) -> None:
        _filled(self, "worker_session_id", "summary")


class Checkpoint(Struct):
    label: Text
    summary: Text

    def __post_init__(self) -> None:
        _filled(self, "label", "summary")


class Compaction(Struct):
    summary: Text
    first_kept_entry_id: str | UnsetType | None = UNSET
    tokens_before: int | UnsetType = UNSET

    def __post_init__(self) -> None:
        _filled(self, "summary")


class BranchSummary(Struct):
    summary: Text
    from_entry_id: str | UnsetType | None = UNSET

    def __post_init__(self) -> None:
        _filled(self, "summary")


class ProviderNotification(Struct):
    provider: Text
    event: Any

    def __post_init__(self) -> None:
        _filled(self, "provider")


class ModelChanged(Struct):
    model: Text
    provider: str | UnsetType = UNSET

    def __post_init__(self) -> None:
        _filled(self, "model")


class SessionStatusChange(Struct):
    status: Literal["running", "idle", "waiting", "completed", "stopped", "cancelled", "failed"]
    reason: str | UnsetType = UNSET

    def __post_init__(self) -> None:
        if self.status in ("stopped", "cancelled", "failed") and not self.reason:
            raise Rule("reason", f"is required when status is {self.status}")


class SessionErrorReport(Struct):
    message: Text
    code: str | UnsetType = UNSET

    def __post_init__(self) -> None:
        _filled(self, "message")


@dataclass(frozen=True, slots=True)
class KindSpec:
    name: str
    payload: type[Struct]  # the contract, checked by msgspec
    default_visibility: Visibility
    conversational: bool = False  # indexed for recall (issue: session recall)


_C, _H = Visibility.CONTEXT, Visibility.HIDDEN

KINDS: dict[str, KindSpec] = {
    spec.name: spec
    for spec in (
        KindSpec("system.message", SystemMessage, _C),
        KindSpec("user.message", UserMessage, _C, True),
        KindSpec("assistant.message", AssistantMessage, _C, True),
        KindSpec("tool.started", ToolStarted, _H),
        KindSpec("tool.completed", ToolCompleted, _C),
        KindSpec("approval.requested", ApprovalRequested, _H),
        KindSpec("approval.resolved", ApprovalResolved, _H),
        KindSpec("delegation.started", DelegationStarted, _H),
        KindSpec("delegation.completed", DelegationCompleted, _H),
        KindSpec("worker.result", WorkerResult, _C, True),
        KindSpec("checkpoint", Checkpoint, _H, True),
        KindSpec("compaction", Compaction, _C, True),
        KindSpec("branch.summary", BranchSummary, _C, True),
        KindSpec("provider.notification", ProviderNotification, _H),
        KindSpec("model.changed", ModelChanged, _H),
        KindSpec("session.status", SessionStatusChange, _H),
        KindSpec("session.error", SessionErrorReport, _H),
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


_convert = msgspec.convert
_Invalid = msgspec.ValidationError


def validate_payload(kind: str, payload: Any) -> KindSpec:
    """Check `payload` against the contract of `kind`; returns the kind's spec."""
    spec = spec_for_append(kind)
    if type(payload) is not dict and not isinstance(payload, dict):
        raise InvalidPayload(kind, "$", f"must be a JSON object, got {_type_name(payload)}")
    try:
        _convert(payload, spec.payload)
    except _Invalid as exc:
        raise refusal(kind, spec.payload, exc) from None
    return spec


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


# --- a refusal in the forest's words ---------------------------------------------
#
# msgspec's error already says where (`... - at `$.content[0].text``) and what (its
# own phrases, below); a Rule raised by a __post_init__ is its cause. These say the
# same in the words every other InvalidPayload uses.

_AT = re.compile(r"(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?", re.S)
_MISSING = re.compile(r"Object missing required field `(?P<name>[^`]+)`")
_EXPECTED = re.compile(r"Expected `(?P<want>[^`]+)`(?:, got `(?P<got>[^`]+)`)?(?P<rest>.*)", re.S)
_LENGTH = re.compile(r" of length >= 1")
_INVALID = re.compile(r"Invalid (?:enum )?value (?P<value>.+)", re.S)
_WORDS = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "object": "an object",
    "array": "a list",
    "null": "null",
}


def refusal(kind: str, cls: type, error: msgspec.ValidationError) -> InvalidPayload:
    """The InvalidPayload for msgspec's refusal of a payload as a `cls`: the field
    path msgspec names (`content[0].text`, `$` for the payload itself), the reason."""
    found = _AT.fullmatch(str(error))
    assert found is not None  # the pattern matches any text
    what, path = found["what"], (found["path"] or "").removeprefix(".")
    rule = error.__cause__
    if isinstance(rule, Rule):
        return InvalidPayload(kind, _join(path, rule.field) or "$", rule.reason)
    if missing := _MISSING.fullmatch(what):
        return InvalidPayload(kind, _join(path, missing["name"]), "is required")
    if (expected := _EXPECTED.fullmatch(what)) is not None:
        want = " or ".join(_WORDS.get(t, t) for t in expected["want"].split(" | "))
        rest = expected["rest"]
        if _LENGTH.fullmatch(rest):
            reason = "must not be empty"
        elif expected["got"] is not None:
            reason = f"must be {want}, got {expected['got']}{rest}"
        else:
            reason = f"must be {want}{rest}"
        return InvalidPayload(kind, path or "$", reason)
    if (invalid := _INVALID.fullmatch(what)) is not None:
        allowed = _allowed(msgspec.inspect.type_info(cls), path)
        one_of = f"one of {', '.join(map(str, allowed))}" if allowed else "an allowed value"
        return InvalidPayload(kind, path or "$", f"must be {one_of}, got {invalid['value']}")
    return InvalidPayload(kind, path or "$", what)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path and name else path or name


def _allowed(t: Any, path: str) -> list[Any]:
    """The values a Literal field, or the tags a union of blocks, at `path` allows."""
    mi = msgspec.inspect
    for name, _index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        if isinstance(t, mi.Metadata):
            t = t.type
        if isinstance(t, mi.ListType):
            t = t.item_type
            continue
        members = t.types if isinstance(t, mi.UnionType) else (t,)
        structs = [m for m in members if isinstance(m, mi.StructType)]
        if structs and all(m.tag_field == name for m in structs):
            return [m.tag for m in structs]
        fields = [f for m in structs for f in m.fields if f.encode_name == name]
        if not fields:
            return []
        t = fields[0].type
    if isinstance(t, mi.Metadata):
        t = t.type
    return sorted(t.values) if isinstance(t, mi.LiteralType) else []
