"""The recorded streams are real provider formats: every line parses as the SDK's event type.

Each line is validated into the installed SDK's stream event union, and the
parsed model must hold no field the SDK does not know (its models accept
extras silently, which would let a misspelt field through).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import RawMessageStreamEvent
from anthropic.types.shared import ErrorResponse
from openai.types.responses import ResponseStreamEvent
from pydantic import BaseModel, TypeAdapter

FIXTURES = Path(__file__).parent / "fixtures"
ANTHROPIC_EVENT: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent | ErrorResponse)
OPENAI_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


def _names(prefix: str) -> list[str]:
    return sorted(p.stem for p in FIXTURES.glob(f"{prefix}_*.jsonl"))


def _unknown_fields(value: Any, path: str = "$") -> list[str]:
    if isinstance(value, BaseModel):
        found = [f"{path}.{name}" for name in value.model_extra or {}]
        for name in type(value).model_fields:
            found += _unknown_fields(getattr(value, name), f"{path}.{name}")
        return found
    if isinstance(value, list):
        return [f for i, item in enumerate(value) for f in _unknown_fields(item, f"{path}[{i}]")]
    return []


def _check_lines(name: str, adapter: TypeAdapter[Any]) -> int:
    lines = (FIXTURES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if line == '{"type": "ping"}':
            continue  # the documented keep-alive; the SDK drops it before parsing
        event = adapter.validate_json(line)
        assert _unknown_fields(event) == [], f"{name}.jsonl:{number}"
        assert event.type == json.loads(line)["type"], "parsed as the wrong event"
    return len(lines)


@pytest.mark.parametrize("name", _names("anthropic"))
def test_anthropic_fixture_lines_are_sdk_stream_events(name: str) -> None:
    assert _check_lines(name, ANTHROPIC_EVENT) >= 7


@pytest.mark.parametrize("name", _names("openai"))
def test_openai_fixture_lines_are_sdk_stream_events(name: str) -> None:
    assert _check_lines(name, OPENAI_EVENT) >= 7


def test_the_check_catches_a_misspelt_field() -> None:
    bad = '{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a", "txt": "b"}}'  # noqa: E501
    assert _unknown_fields(ANTHROPIC_EVENT.validate_json(bad)) == ["$.delta.txt"]


def test_every_recorded_stream_is_present() -> None:
    assert _names("anthropic") == [
        "anthropic_equiv_turn1",
        "anthropic_equiv_turn2",
        "anthropic_error",
        "anthropic_interrupted",
        "anthropic_parallel_tools",
        "anthropic_text",
        "anthropic_thinking",
        "anthropic_tool_use",
    ]
    assert _names("openai") == [
        "openai_equiv_turn1",
        "openai_equiv_turn2",
        "openai_failed",
        "openai_function_call",
        "openai_incomplete",
        "openai_interrupted",
        "openai_reasoning",
        "openai_reasoning_text",
        "openai_text",
        "openai_two_function_calls",
    ]


def test_make_fixtures_writes_exactly_the_committed_files(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(p.name for p in FIXTURES.glob("*.jsonl"))
    for name in written:
        assert (tmp_path / name).read_bytes() == (FIXTURES / name).read_bytes(), name
