"""`ForestSession` beyond the SDK's scenarios: lossless items, the tree it keeps, tool
calls through the real Runner, branching, compaction and the run-context wrapper."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, cast

import pytest
from agents import Agent, RunConfig, RunContextWrapper, Runner, TResponseInputItem, function_tool
from agents.memory import OpenAIResponsesCompactionSession
from agents.memory.session import _session_accepts_wrapper
from agents.testing import ScriptedModel, assistant_message, function_call
from openai import AsyncOpenAI

from sessionforest import Forest
from sessionforest.integrations.openai_agents import ForestSession
from sessionforest.integrations.openai_agents.items import VERBATIM, to_entry, to_items
from sessionforest.kinds import validate_payload
from sessionforest.projection import project

QUIET = RunConfig(tracing_disabled=True)

# One of every item shape the SDK passes a session, as the SDK and the Responses API
# write them (plus shapes this code cannot know).
ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "plain text"},
    {"role": "system", "content": "be brief"},
    {"role": "developer", "content": "dev note"},
    {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "look at this"},
        {"type": "input_image", "image_url": "https://example.test/a.png", "detail": "auto"},
        {"type": "input_file", "file_id": "file_1"},
    ]},
    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed", "content": [
        {"type": "output_text", "text": "an answer", "annotations": [], "logprobs": []},
        {"type": "refusal", "refusal": "not that"},
    ]},
    {"type": "function_call", "call_id": "c1", "name": "weather",
     "arguments": '{"city":"Paris"}', "id": "fc_1", "status": "completed"},
    {"type": "function_call", "call_id": "c2", "name": "spaced", "arguments": '{"a": 1}'},
    {"type": "function_call", "call_id": "c3", "name": "broken", "arguments": "{not json"},
    {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    {"type": "function_call_output", "call_id": "c2", "output": [
        {"type": "input_text", "text": "part one"},
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
    ]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "thinking"}],
     "encrypted_content": "gAAAA"},
    {"type": "reasoning", "id": "rs_2", "summary": []},
    {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque"},
    {"type": "item_reference", "id": "msg_0"},
    {"type": "computer_call", "call_id": "cc", "id": "cu_1", "action": {"type": "click", "x": 1,
     "y": 2}, "pending_safety_checks": [], "status": "completed"},
    {"type": "shell_call", "call_id": "sh", "action": {"commands": ["ls"]}, "status": "completed"},
    {"type": "mcp_list_tools", "id": "mcp_1", "server_label": "x", "tools": []},
    {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    {"type": "a_type_from_the_future", "payload": {"nested": [1, 2.5, None, True]}},
    {"role": "user", "content": ""},
    {"role": "user", "content": [], "type": "message"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": None}]},
]  # fmt: skip


@pytest.mark.parametrize("item", ITEMS, ids=lambda i: str(i.get("type") or i.get("role")))
def test_every_item_maps_to_a_valid_entry_and_back_exactly(item: dict[str, Any]) -> None:
    kind, payload, visibility = to_entry(item)
    validate_payload(kind, payload)
    assert to_items(kind, payload) == [item]
    if item.get("type") in ("item_reference", "computer_call", "a_type_from_the_future"):
        assert (kind, visibility) == ("provider.notification", "context")  # hidden from nothing


def test_items_take_the_typed_kinds_other_surfaces_read() -> None:
    kinds = {str(i.get("type") or i.get("role")): to_entry(i)[0] for i in ITEMS[:13]}
    assert kinds["user"] == "user.message" and kinds["system"] == "system.message"
    assert kinds["developer"] == "system.message"
    assert kinds["function_call"] == "assistant.message"
    assert kinds["function_call_output"] == "tool.completed"
    assert kinds["reasoning"] == "assistant.message" and kinds["compaction"] == "compaction"
    _, payload, _ = to_entry(ITEMS[5])
    assert payload["content"] == [
        {"type": "tool_call", "id": "c1", "name": "weather", "input": {"city": "Paris"}}
    ]
    assert VERBATIM not in payload  # the arguments are rebuilt from the input, not stored twice


def test_every_item_round_trips_through_the_store(forest: Forest) -> None:
    async def scenario() -> None:
        session = ForestSession("all-items", forest)
        items = cast(list[TResponseInputItem], ITEMS)
        await session.add_items(items)
        assert await session.get_items() == items
        again = ForestSession("all-items", forest)  # a new process would read the same
        assert await again.get_items() == items
        for n in (1, 3, len(items)):
            assert await again.get_items(limit=n) == items[-n:]

    asyncio.run(scenario())


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@pytest.mark.parametrize("streamed", [False, True])
def test_a_runner_turn_with_a_tool_call_is_stored_as_a_tool_exchange(
    forest: Forest, streamed: bool
) -> None:
    async def scenario() -> None:
        session = ForestSession("tools", forest)
        model = ScriptedModel()
        model.enqueue([function_call("weather", {"city": "Paris"}, call_id="call_1")])
        model.enqueue([assistant_message("It is sunny in Paris.")])
        agent = Agent(name="t", model=model, tools=[weather])
        if streamed:
            result: Any = Runner.run_streamed(agent, "Weather?", session=session,
                                              run_config=QUIET)  # fmt: skip
            async for _ in result.stream_events():
                pass
        else:
            result = await Runner.run(agent, "Weather?", session=session, run_config=QUIET)
        assert result.final_output == "It is sunny in Paris."
        kinds = [e.kind for e in forest.active_path("tools")]
        assert kinds == ["checkpoint", "user.message", "assistant.message", "tool.completed",
                         "assistant.message"]  # fmt: skip
        # What the forest hands any agent: the call paired with its result.
        messages = project(forest, "tools")
        assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
        assert messages[2]["content"] == [{"type": "text", "text": "sunny in Paris"}]
        # The next turn sends what the SDK stored, unchanged.
        model.enqueue([assistant_message("Still sunny.")])
        await Runner.run(agent, "And now?", session=session, run_config=QUIET)
        sent = cast(list[dict[str, Any]], model.calls[-1].input)
        stored = await session.get_items()
        assert sent[:4] == stored[:4]
        assert sent[1]["type"] == "function_call" and sent[2]["output"] == "sunny in Paris"

    asyncio.run(scenario())


def test_pop_and_clear_move_the_head_and_keep_every_entry(forest: Forest) -> None:
    async def scenario() -> None:
        session = ForestSession("tree", forest)
        await session.add_items([{"role": "user", "content": "a"},
                                 {"role": "assistant", "content": "b"}])  # fmt: skip
        stored = len(forest.entries("tree"))
        assert await session.pop_item() == {"role": "assistant", "content": "b"}
        assert len(forest.entries("tree")) == stored  # popped, not deleted
        await session.add_items([{"role": "assistant", "content": "b2"}])
        assert len(forest.tips("tree")) == 2  # the popped item is a branch beside the new one
        await session.clear_session()
        assert await session.get_items() == []
        await session.add_items([{"role": "user", "content": "fresh"}])
        assert contents(await session.get_items()) == ["fresh"]
        assert len(forest.tips("tree")) == 3 and len(forest.entries("tree")) == stored + 2
        start = forest.entries("tree")[0]
        assert start.kind == "checkpoint"
        assert forest.active_path("tree")[0].id == start.id  # a new branch from the start

    asyncio.run(scenario())


def contents(items: list[TResponseInputItem]) -> list[Any]:
    return [cast(dict[str, Any], i).get("content") for i in items]


def test_branch_from_and_seek_rerun_from_an_earlier_turn(forest: Forest) -> None:
    async def scenario() -> None:
        session = ForestSession("rerun", forest)
        model = ScriptedModel()
        agent = Agent(name="t", model=model)
        for i in range(3):
            model.enqueue([assistant_message(f"reply {i}")])
            await Runner.run(agent, f"question {i}", session=session, run_config=QUIET)
        first_path = [e.id for e in forest.active_path("rerun")]
        rows = len(forest.entries("rerun"))
        head = await session.branch_from(2)  # keep turn 0 (items 0 and 1)
        assert head == first_path[2]
        assert len(forest.entries("rerun")) == rows  # nothing copied
        model.enqueue([assistant_message("another reply")])
        await Runner.run(agent, "a different question", session=session, run_config=QUIET)
        assert contents(await session.get_items())[:1] == ["question 0"]
        assert len(await session.get_items()) == 4
        assert len(forest.tips("rerun")) == 2
        await session.seek(first_path[-1])  # back to the first branch
        assert len(await session.get_items()) == 6
        assert contents(await session.get_items())[-2] == "question 2"
        with pytest.raises(Exception, match="index"):
            await session.branch_from(99)

    asyncio.run(scenario())


def test_a_chat_written_by_another_tool_is_read_as_sdk_items(forest: Forest) -> None:
    sid = forest.create_session(title="imported")
    forest.append(sid, "user.message", {"content": [{"type": "text", "text": "hi"}]})
    forest.append(sid, "assistant.message", {"content": [
        {"type": "text", "text": "calling"},
        {"type": "tool_call", "id": "t1", "name": "ls", "input": {"path": "."}},
    ]})  # fmt: skip
    forest.append(sid, "tool.completed", {"call_id": "t1", "output": "a.txt"})
    forest.checkpoint(sid, "here")

    async def scenario() -> None:
        session = ForestSession(sid, forest)
        items = await session.get_items()
        assert items == [
            {"role": "user", "content": "hi"},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "calling", "annotations": []}]},
            {"type": "function_call", "call_id": "t1", "name": "ls", "arguments": '{"path":"."}'},
            {"type": "function_call_output", "call_id": "t1", "output": "a.txt"},
        ]  # fmt: skip
        model = ScriptedModel()
        model.enqueue([assistant_message("continuing")])
        await Runner.run(Agent(name="t", model=model), "go on", session=session, run_config=QUIET)
        assert model.calls[-1].input[:4] == items  # handed to an agent as it was
        await session.clear_session()  # no start mark at its root: one is appended
        assert await session.get_items() == []
        assert forest.entries(sid)[0].kind == "user.message"

    asyncio.run(scenario())


@dataclass
class Tenant:
    name: str


def test_the_runner_passes_its_context_and_a_scope_splits_sessions(forest: Forest) -> None:
    async def scenario() -> None:
        session = ForestSession("ctx", forest, scope=lambda w: cast(Tenant, w.context).name)
        assert _session_accepts_wrapper(session)
        model = ScriptedModel()
        agent = Agent(name="t", model=model)
        model.enqueue([assistant_message("hello a")])
        await Runner.run(agent, "from a", session=session, context=Tenant("a"), run_config=QUIET)
        model.enqueue([assistant_message("hello b")])
        await Runner.run(agent, "from b", session=session, context=Tenant("b"), run_config=QUIET)
        a = RunContextWrapper(Tenant("a"))
        assert contents(await session.get_items(wrapper=a))[0] == "from a"
        assert session.forest_session_id(a) == "ctx.a"
        assert [len(forest.active_path(s)) for s in ("ctx.a", "ctx.b")] == [3, 3]
        assert await session.get_items() == []  # no context: the unscoped session

    asyncio.run(scenario())


def test_a_responses_compaction_is_one_tree(forest: Forest, provider_standin: Any) -> None:
    async def scenario() -> None:
        underlying = ForestSession("compacted", forest)
        client = AsyncOpenAI(base_url=f"{provider_standin.url}/v1", api_key="sk-standin")
        session = OpenAIResponsesCompactionSession("compacted", underlying, client=client,
                                                   compaction_mode="input")  # fmt: skip
        model = ScriptedModel()
        agent = Agent(name="t", model=model)
        for i in range(3):
            model.enqueue([assistant_message(f"reply {i}")])
            await Runner.run(agent, f"question {i}", session=session, run_config=QUIET)
        before = [e.id for e in forest.active_path("compacted")]
        await session.run_compaction({"force": True})
        items = await session.get_items()
        assert contents(items[:3]) == ["question 0", "question 1", "question 2"]
        assert cast(dict[str, Any], items[3])["type"] == "compaction"
        assert any(r.path == "/v1/responses/compact" for r in provider_standin.requests)
        path = forest.active_path("compacted")
        assert path[0].id == before[0] and path[-1].kind == "compaction"
        assert before[-1] in {t.id for t in forest.tips("compacted")}  # the original, kept
        assert len({e.session_id for e in forest.entries("compacted")}) == 1
        model.enqueue([assistant_message("after")])
        await Runner.run(agent, "question 3", session=session, run_config=QUIET)
        sent = cast(list[dict[str, Any]], model.calls[-1].input)
        assert sent[3]["type"] == "compaction" and sent[-1]["content"] == "question 3"

    asyncio.run(scenario())


def test_an_automatic_compaction_replaces_the_suffix_on_a_branch(
    forest: Forest, provider_standin: Any
) -> None:
    async def scenario() -> None:
        underlying = ForestSession("auto", forest)
        client = AsyncOpenAI(base_url=f"{provider_standin.url}/v1", api_key="sk-standin")
        session = OpenAIResponsesCompactionSession(
            "auto", underlying, client=client, compaction_mode="input",
            should_trigger_compaction=lambda ctx: len(ctx["session_items"]) >= 4,
        )  # fmt: skip
        model = ScriptedModel()
        agent = Agent(name="t", model=model)
        for i in range(2):
            model.enqueue([assistant_message(f"reply {i}")])
            await Runner.run(agent, f"question {i}", session=session, run_config=QUIET)
        items = await session.get_items()
        assert cast(dict[str, Any], items[-1]).get("type") == "compaction"
        assert len(forest.tips("auto")) == 2  # what it replaced is a branch beside it
        assert forest.active_path("auto")[-1].kind == "compaction"

    asyncio.run(scenario())
