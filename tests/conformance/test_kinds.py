"""Typed kinds: payload contracts, deltas, legacy kinds, visibility, schema versions."""

from __future__ import annotations

import copy
import io
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import (
    DeltaRefused,
    Forest,
    InvalidArgument,
    InvalidPayload,
    LegacyKind,
    UnknownKind,
    UnsupportedSchemaVersion,
)
from sessionforest.kinds import KINDS

TEXT = [{"type": "text", "text": "hi"}]

VALID: dict[str, dict[str, Any]] = {
    "system.message": {"content": TEXT},
    "user.message": {"content": TEXT},
    "assistant.message": {
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": "running it"},
            {"type": "tool_call", "id": "c1", "name": "bash", "input": {"cmd": "ls"}},
        ],
        "model": "m",
        "stop_reason": "tool_use",
    },
    "tool.started": {"call_id": "c1", "name": "bash", "input": {"cmd": "ls"}},
    "tool.completed": {"call_id": "c1", "output": "a.txt", "is_error": False},
    "approval.requested": {"request_id": "r1", "summary": "run rm?"},
    "approval.resolved": {"request_id": "r1", "decision": "denied"},
    "delegation.started": {"worker_session_id": "w1", "task": "grep the logs"},
    "delegation.completed": {"worker_session_id": "w1", "status": "done"},
    "worker.result": {"worker_session_id": "w1", "status": "succeeded", "summary": "found it"},
    "checkpoint": {"label": "v1", "summary": "before refactor"},
    "compaction": {"summary": "we fixed the lock", "first_kept_entry_id": None},
    "branch.summary": {"summary": "the abandoned branch tried X"},
    "provider.notification": {"provider": "anthropic", "event": {"type": "ping"}},
    "model.changed": {"model": "claude-sonnet-5"},
    "session.status": {"status": "stopped", "reason": "user pressed stop"},
    "session.error": {"message": "rate limited"},
}

# (kind, payload, field the error must name)
INVALID: list[tuple[str, Any, str]] = [
    ("user.message", {}, "content"),
    ("user.message", {"content": []}, "content"),
    ("user.message", {"content": "hi"}, "content"),
    ("user.message", {"content": [{"type": "text"}]}, "content[0].text"),
    ("user.message", {"content": [{"type": "tool_call"}]}, "content[0].type"),
    ("user.message", {"content": [{"type": "image", "media_type": "image/png"}]}, "content[0]"),
    ("user.message", ["not", "an", "object"], "$"),
    (
        "assistant.message",
        {"content": [{"type": "tool_call", "id": "c", "name": "x"}]},
        "content[0].input",
    ),
    ("assistant.message", {"content": [], "usage": 3}, "usage"),
    ("tool.started", {"call_id": "c1", "name": "bash"}, "input"),
    ("tool.completed", {"call_id": "", "output": "x"}, "call_id"),
    ("tool.completed", {"call_id": "c1", "output": "x", "is_error": "no"}, "is_error"),
    ("approval.resolved", {"request_id": "r", "decision": "maybe"}, "decision"),
    ("worker.result", {"worker_session_id": "w", "status": "ok", "summary": "s"}, "status"),
    ("checkpoint", {"label": "x"}, "summary"),
    ("checkpoint", {"label": "x", "summary": "   "}, "summary"),
    ("compaction", {"summary": "s", "tokens_before": "many"}, "tokens_before"),
    ("provider.notification", {"provider": "x"}, "event"),
    ("session.status", {"status": "cancelled"}, "reason"),
    ("session.status", {"status": "sleeping"}, "status"),
]


def test_every_kind_has_a_valid_example() -> None:
    assert set(VALID) == set(KINDS)


@pytest.mark.parametrize("kind", sorted(VALID))
def test_valid_payloads_append_and_read_back(forest: Forest, kind: str) -> None:
    sid = forest.create_session()
    entry = forest.append(sid, kind, VALID[kind])
    stored = forest.entry(sid, entry.id)
    assert stored.kind == kind
    assert stored.payload == VALID[kind]
    assert stored.context_visibility == KINDS[kind].default_visibility


@pytest.mark.parametrize(("kind", "payload", "field"), INVALID)
def test_bad_payload_names_kind_and_field(
    forest: Forest, kind: str, payload: Any, field: str
) -> None:
    sid = forest.create_session()
    with pytest.raises(InvalidPayload) as err:
        forest.append(sid, kind, payload)
    assert (err.value.kind, err.value.field) == (kind, field)
    assert kind in str(err.value) and field in str(err.value)
    assert forest.entries(sid) == []


@pytest.mark.parametrize("kind", ["assistant.message.delta", "content_block.delta", "x.delta"])
def test_deltas_are_refused(forest: Forest, kind: str) -> None:
    sid = forest.create_session()
    with pytest.raises(DeltaRefused, match="assembled"):
        forest.append(sid, kind, {"text": "partial"})
    assert forest.entries(sid) == []


def test_legacy_kinds_are_not_appendable_but_readable(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    with pytest.raises(LegacyKind) as err:
        forest.append(sid, "user.prompt", {"text": "hi"})
    assert err.value.replacement == "user.message"
    _raw_insert(harness, forest, sid, "old1", None, 1, 1, "user.prompt", {"text": "legacy hello"})
    entry = forest.entry(sid, "old1")
    assert entry.kind == "user.message"
    assert entry.payload == {"content": [{"type": "text", "text": "legacy hello"}]}


def test_unknown_kind_is_refused(forest: Forest) -> None:
    sid = forest.create_session()
    with pytest.raises(UnknownKind):
        forest.append(sid, "user.mesage", {"content": TEXT})


def test_visibility_can_be_chosen_and_is_validated(forest: Forest) -> None:
    sid = forest.create_session()
    hidden = forest.append(sid, "user.message", {"content": TEXT}, visibility="hidden")
    assert forest.entry(sid, hidden.id).context_visibility == "hidden"
    with pytest.raises(InvalidArgument, match="context_visibility"):
        forest.append(sid, "user.message", {"content": TEXT}, visibility="secret")


def _raw_insert(
    harness: Harness,
    forest: Forest,
    sid: str,
    eid: str,
    parent: str | None,
    seq: int,
    version: int,
    kind: str,
    payload: dict[str, Any],
) -> None:
    harness.add_entry(
        forest,
        sid,
        eid,
        parent,
        seq,
        version=version,
        kind=kind,
        payload=payload,
        created_at="2025-01-01T00:00:00.000Z",
    )
    harness.point_head(forest, sid, eid)


def test_v1_payloads_are_upgraded_on_read(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    _raw_insert(harness, forest, sid, "u1", None, 1, 1, "user.message", {"text": "run ls"})
    _raw_insert(
        harness,
        forest,
        sid,
        "a1",
        "u1",
        2,
        1,
        "assistant.message",
        {"text": "ok", "tool_calls": [{"id": "t1", "name": "bash", "arguments": {"cmd": "ls"}}]},
    )
    _raw_insert(
        harness,
        forest,
        sid,
        "r1",
        "a1",
        3,
        1,
        "tool.completed",
        {"tool_use_id": "t1", "result": "a.txt"},
    )
    path = forest.active_path(sid)
    assert [e.semantic_schema_version for e in path] == [1, 1, 1]
    assert path[1].payload["content"] == [
        {"type": "text", "text": "ok"},
        {"type": "tool_call", "id": "t1", "name": "bash", "input": {"cmd": "ls"}},
    ]
    assert path[2].payload == {"call_id": "t1", "output": "a.txt", "is_error": False}


def test_unknown_schema_version_fails_closed_everywhere(forest: Forest, harness: Harness) -> None:
    sid = forest.create_session()
    ok = forest.append(sid, "user.message", {"content": TEXT})
    _raw_insert(harness, forest, sid, "future", ok.id, 2, 3, "user.message", {"content": "?"})
    for read in (
        forest.active_path,
        forest.entries,
        forest.skeleton,
        forest.tips,
        lambda s: forest.entry(s, "future"),
        lambda s: forest.children(s, ok.id),
        lambda s: forest.export_jsonl(s, io.StringIO()),
    ):
        with pytest.raises(UnsupportedSchemaVersion) as err:
            read(sid)
        assert (err.value.entry_id, err.value.version) == ("future", 3)
    # Entries before the future one are still individually readable.
    assert forest.entry(sid, ok.id).payload == {"content": TEXT}


# --- every refusal msgspec makes, said in the forest's words ------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from sessionforest.kinds import validate_payload  # noqa: E402

_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=4) | st.just("  ")
_values = st.recursive(
    _leaf, lambda inner: st.lists(inner, max_size=2) | st.dictionaries(
        st.sampled_from(["type", "text", "content", "id", "name", "input", "status", "reason"]),
        inner, max_size=3), max_leaves=6,
)  # fmt: skip


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[str, Any]:
    """A valid example with one value somewhere replaced or removed."""
    kind = draw(st.sampled_from(sorted(VALID)))
    payload = copy.deepcopy(VALID[kind])
    node: Any = payload
    while isinstance(node, dict | list) and node and draw(st.booleans()):
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        key = draw(st.sampled_from(keys))
        if not isinstance(node[key], dict | list) or draw(st.booleans()):
            if isinstance(node, dict) and draw(st.booleans()):
                del node[key]
            else:
                node[key] = draw(_values)
            break
        node = node[key]
    return kind, payload


@settings(max_examples=400, deadline=None)
@given(_mutated())
def test_every_refusal_names_a_field_and_a_reason(case: tuple[str, Any]) -> None:
    """Whatever msgspec refuses is said with a field path and a reason in the forest's
    words (never msgspec's own phrasing), and what it accepts is stored as given."""
    kind, payload = case
    try:
        validate_payload(kind, payload)
    except InvalidPayload as exc:
        assert exc.kind == kind and exc.field and exc.reason
        assert "Expected" not in exc.reason and " - at `" not in exc.reason
