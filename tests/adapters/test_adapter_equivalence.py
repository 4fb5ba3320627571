"""One conversation streamed by Anthropic and by OpenAI projects to identical agent context.

The same turns (a question, a text answer with one tool call, the tool's
result, a final answer) are recorded from each provider's stream into its own
session, the user message and tool result appended as a harness would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sessionforest import Forest
from sessionforest.adapters import AnthropicStreamAdapter, OpenAIResponsesStreamAdapter
from sessionforest.adapters.base import StreamAdapter
from sessionforest.projection import project

ADAPTERS: dict[str, type[StreamAdapter]] = {
    "anthropic": AnthropicStreamAdapter,
    "openai": OpenAIResponsesStreamAdapter,
}
QUESTION = "What will the weather be in Paris tomorrow?"

EXPECTED = [
    {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look up the forecast for Paris."},
            {
                "type": "tool_call",
                "id": "call_forecast_01",
                "name": "get_forecast",
                "input": {"city": "Paris", "days": 1},
            },
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_forecast_01",
        "content": [{"type": "text", "text": "18°C, sunny"}],
        "is_error": False,
    },
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "Tomorrow in Paris: 18°C and sunny."}],
    },
]


def _record(forest: Forest, provider: str, stream: Callable[[str], Any], replay: Any) -> str:
    # The harness name is display only; it must not change what is projected.
    sid = forest.create_session(title="weather", harness=f"{provider}-harness")
    forest.append(sid, "user.message", {"content": [{"type": "text", "text": QUESTION}]})
    first = replay(ADAPTERS[provider](forest, sid), stream(f"{provider}_equiv_turn1"))
    call = first.payload["content"][-1]
    forest.append(
        sid,
        "tool.completed",
        {"call_id": call["id"], "name": call["name"], "output": "18°C, sunny"},
    )
    replay(ADAPTERS[provider](forest, sid), stream(f"{provider}_equiv_turn2"))
    return sid


def test_both_providers_project_to_identical_messages(
    forest: Forest, stream: Any, replay: Any
) -> None:
    from_anthropic = _record(forest, "anthropic", stream, replay)
    from_openai = _record(forest, "openai", stream, replay)
    assert project(forest, from_anthropic) == project(forest, from_openai) == EXPECTED


def test_the_sessions_differ_only_in_provider_details(
    forest: Forest, stream: Any, replay: Any
) -> None:
    sessions = {p: _record(forest, p, stream, replay) for p in ADAPTERS}
    stored = {p: forest.active_path(sid) for p, sid in sessions.items()}
    for provider, path in stored.items():
        messages = [e.payload for e in path if e.kind == "assistant.message"]
        assert {m["provider"] for m in messages} == {provider}
        assert any(e.kind == "provider.notification" for e in path), "raw events kept, hidden"
    contents = {
        p: [e.payload["content"] for e in path if e.kind == "assistant.message"]
        for p, path in stored.items()
    }
    assert contents["anthropic"] == contents["openai"]
    models = {
        p: {e.payload["model"] for e in path if "model" in e.payload} for p, path in stored.items()
    }
    assert models == {"anthropic": {"claude-sonnet-4-5-20250929"}, "openai": {"gpt-4.1-2025-04-14"}}


@pytest.mark.parametrize("provider", sorted(ADAPTERS))
def test_an_interrupted_turn_projects_without_its_half_tool_call(
    provider: str, forest: Forest, sid: str, stream: Any, replay: Any
) -> None:
    forest.append(sid, "user.message", {"content": [{"type": "text", "text": "Weather in SF?"}]})
    replay(ADAPTERS[provider](forest, sid), stream(f"{provider}_interrupted"))
    assert project(forest, sid) == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in SF?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "I'll check the weather."}]},
    ]
