"""The OpenAI Agents SDK's own session scenarios, against `ForestSession` on every backend.

Each test here is one of the scenarios of the SDK's tests/memory/test_session.py
and test_session_limit.py (openai/openai-agents-python), written again for a
forest (the SQLite-file specifics there — worker-thread connections, corrupt
rows, a shared file lock — have no counterpart and are left out). The model is
the SDK's own `agents.testing.ScriptedModel`; every run goes through the real
`Runner` (`run`, `run_sync` on a thread, `run_streamed`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any, cast

import pytest
from agents import Agent, RunConfig, Runner, SessionSettings, TResponseInputItem
from agents.testing import ScriptedModel, assistant_message

from sessionforest import Forest
from sessionforest.errors import InvalidPayload
from sessionforest.integrations.openai_agents import ForestSession

METHODS = ["run", "run_sync", "run_streamed"]
QUIET = RunConfig(tracing_disabled=True)


def text(reply: str) -> Any:
    return assistant_message(reply)


async def run_agent(method: str, agent: Agent[Any], data: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("run_config", QUIET)
    if method == "run":
        return await Runner.run(agent, data, **kwargs)
    if method == "run_sync":
        return await asyncio.to_thread(lambda: Runner.run_sync(agent, data, **kwargs))
    result = Runner.run_streamed(agent, data, **kwargs)
    async for _ in result.stream_events():
        pass
    return result


def contents(items: list[TResponseInputItem]) -> list[Any]:
    return [cast(dict[str, Any], item).get("content") for item in items]


@pytest.mark.parametrize("method", METHODS)
def test_memory_carries_history_to_the_next_turn(forest: Forest, method: str) -> None:
    async def scenario() -> None:
        session = ForestSession("test_session_123", forest)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        model.enqueue([text("San Francisco")])
        first = await run_agent(method, agent, "What city is the Golden Gate Bridge in?",
                                session=session)  # fmt: skip
        assert first.final_output == "San Francisco"
        model.enqueue([text("California")])
        second = await run_agent(method, agent, "What state is it in?", session=session)
        assert second.final_output == "California"
        sent = model.calls[-1].input
        assert isinstance(sent, list)
        assert [cast(dict[str, Any], i).get("content") for i in sent[:1]] == [
            "What city is the Golden Gate Bridge in?"
        ]
        assert len(sent) == 3  # question, answer, the new question

    asyncio.run(scenario())


@pytest.mark.parametrize("method", METHODS)
def test_without_a_session_nothing_is_remembered(method: str) -> None:
    async def scenario() -> None:
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        model.enqueue([text("Hello")])
        await run_agent(method, agent, "Hi there")
        model.enqueue([text("I don't remember")])
        await run_agent(method, agent, "Do you remember what I said?")
        assert len(model.calls[-1].input) == 1

    asyncio.run(scenario())


@pytest.mark.parametrize("method", METHODS)
def test_sessions_keep_separate_histories(forest: Forest, method: str) -> None:
    async def scenario() -> None:
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        cats, dogs = ForestSession("session_1", forest), ForestSession("session_2", forest)
        model.enqueue([text("I like cats")])
        await run_agent(method, agent, "I like cats", session=cats)
        model.enqueue([text("I like dogs")])
        await run_agent(method, agent, "I like dogs", session=dogs)
        model.enqueue([text("Yes, you mentioned cats")])
        third = await run_agent(method, agent, "What did I say I like?", session=cats)
        assert third.final_output == "Yes, you mentioned cats"
        sent = contents(cast(list[TResponseInputItem], model.calls[-1].input))
        assert sent[0] == "I like cats" and "I like dogs" not in sent

    asyncio.run(scenario())


def test_direct_add_get_and_clear(forest: Forest) -> None:
    async def scenario() -> None:
        session = ForestSession("direct_test", forest)
        items: list[TResponseInputItem] = [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi there!"},
        ]
        await session.add_items(items)
        assert await session.get_items() == items
        await session.clear_session()
        assert await session.get_items() == []

    asyncio.run(scenario())


def test_pop_item_walks_back_to_empty(forest: Forest) -> None:
    async def scenario() -> None:
        session = ForestSession("pop_test", forest)
        assert await session.pop_item() is None
        items: list[TResponseInputItem] = [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": "Hi there!"},
            {"role": "user", "content": "How are you?"},
        ]
        await session.add_items(items)
        assert len(await session.get_items()) == 3
        assert await session.pop_item() == items[2]
        assert contents(await session.get_items()) == ["Hello", "Hi there!"]
        assert await session.pop_item() == items[1]
        assert await session.pop_item() == items[0]
        assert await session.pop_item() is None
        assert await session.get_items() == []

    asyncio.run(scenario())


def test_pop_touches_only_its_session(forest: Forest) -> None:
    async def scenario() -> None:
        one, two = ForestSession("session_1", forest), ForestSession("session_2", forest)
        await one.add_items([{"role": "user", "content": "Session 1 message"}])
        await two.add_items([
            {"role": "user", "content": "Session 2 message 1"},
            {"role": "user", "content": "Session 2 message 2"},
        ])  # fmt: skip
        popped = await two.pop_item()
        assert popped is not None and cast(dict[str, Any], popped)["content"].endswith("2")
        assert contents(await one.get_items()) == ["Session 1 message"]
        assert contents(await two.get_items()) == ["Session 2 message 1"]

    asyncio.run(scenario())


def test_get_items_with_a_limit(forest: Forest) -> None:
    async def scenario() -> None:
        session = ForestSession("count_test", forest)
        texts = ["Message 1", "Response 1", "Message 2", "Response 2", "Message 3", "Response 3"]
        await session.add_items([
            {"role": "user" if i % 2 == 0 else "assistant", "content": t}
            for i, t in enumerate(texts)
        ])  # fmt: skip
        assert contents(await session.get_items()) == texts
        assert contents(await session.get_items(limit=2)) == texts[-2:]
        assert contents(await session.get_items(limit=4)) == texts[-4:]
        assert contents(await session.get_items(limit=10)) == texts
        assert await session.get_items(limit=0) == []

    asyncio.run(scenario())


@pytest.mark.parametrize("method", METHODS)
def test_list_input_is_appended_to_history(forest: Forest, method: str) -> None:
    async def scenario() -> None:
        session = ForestSession("test_validation_parametrized", forest)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        history: list[TResponseInputItem] = [
            {"role": "user", "content": "Earlier message"},
            {"role": "assistant", "content": "Saved reply"},
        ]
        await session.add_items(history)
        new: list[TResponseInputItem] = [{"role": "user", "content": "Test message"}]
        model.enqueue([text("This should run")])
        await run_agent(method, agent, new, session=session)
        assert model.calls[-1].input == history + new

    asyncio.run(scenario())


@pytest.mark.parametrize("method", METHODS)
def test_session_input_callback_prepares_the_input(forest: Forest, method: str) -> None:
    async def scenario() -> None:
        session = ForestSession("session_1", forest)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        history: list[TResponseInputItem] = [
            {"role": "user", "content": "Hello there."},
            {"role": "assistant", "content": "Hi, I'm here to assist you."},
        ]
        await session.add_items(history)

        def users_only(old: list[Any], new: list[Any]) -> list[Any]:
            return [item for item in old if item["role"] == "user"] + new

        new: list[TResponseInputItem] = [{"role": "user", "content": "What your name?"}]
        model.enqueue([text("I'm gpt-4o")])
        config = RunConfig(tracing_disabled=True, session_input_callback=users_only)
        await run_agent(method, agent, new, session=session, run_config=config)
        assert model.calls[-1].input == [history[0], new[0]]

    asyncio.run(scenario())


@pytest.mark.parametrize("method", METHODS)
def test_a_callback_repeating_history_does_not_grow_the_session(
    forest: Forest, method: str
) -> None:
    async def scenario() -> None:
        session = ForestSession("session_repeat", forest)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)

        def repeat_first(old: list[Any], new: list[Any]) -> list[Any]:
            return new if not old else [*old, old[0], *new]

        config = RunConfig(tracing_disabled=True, session_input_callback=repeat_first)
        for turn in range(3):
            model.enqueue([text(f"assistant {turn}")])
            await run_agent(method, agent, f"user {turn}", session=session, run_config=config)
        stored = await session.get_items()
        users = [cast(dict[str, Any], i)["content"] for i in stored if i.get("role") == "user"]
        assert users == ["user 0", "user 1", "user 2"]
        assert len(stored) == 6

    asyncio.run(scenario())


def test_unicode_special_characters_and_sql_keywords(forest: Forest) -> None:
    async def scenario() -> None:
        session = ForestSession("special_chars_test", forest)
        texts = ["こんにちは", "😊👍", "Привет", "O'Reilly", "DROP TABLE sessions;",
                 '"SELECT * FROM users WHERE name = "admin";"',
                 "Robert'); DROP TABLE students;--", "Normal message"]  # fmt: skip
        await session.add_items([{"role": "user", "content": t} for t in texts])
        assert contents(await session.get_items()) == texts

    asyncio.run(scenario())


def test_concurrent_adds_from_threads_all_land(forest: Forest) -> None:
    session = ForestSession("concurrent_test", forest)

    def add(i: int) -> None:
        asyncio.run(session.add_items([{"role": "user", "content": f"Message {i}"}]))

    with concurrent.futures.ThreadPoolExecutor(max_workers=5) as pool:
        list(pool.map(add, range(10)))
    got = asyncio.run(session.get_items())
    assert set(contents(got)) == {f"Message {i}" for i in range(10)} and len(got) == 10


def test_a_failed_add_leaves_the_store_as_it_was(forest: Forest) -> None:
    async def scenario() -> None:
        session = ForestSession("rollback_test", forest)
        await session.add_items([{"role": "user", "content": "before"}])
        before = forest.entries("rollback_test")
        bad = cast(TResponseInputItem, {"role": "user", "content": object()})
        with pytest.raises(InvalidPayload):
            await session.add_items([{"role": "user", "content": "fine"}, bad])
        assert [e.id for e in forest.entries("rollback_test")] == [e.id for e in before]
        await session.add_items([{"role": "user", "content": "after failure"}])
        assert contents(await session.get_items()) == ["before", "after failure"]

    asyncio.run(scenario())


def test_an_add_items_failure_propagates_out_of_a_stream(forest: Forest) -> None:
    async def scenario() -> None:
        session = ForestSession("test_exception_session", forest)

        async def failing(items: list[TResponseInputItem], **_: Any) -> None:
            raise RuntimeError("Simulated session.add_items failure")

        session.add_items = failing  # type: ignore[method-assign]
        model = ScriptedModel()
        model.enqueue([text("This should not be reached")])
        result = Runner.run_streamed(Agent(name="test", model=model), "Hello", session=session,
                                     run_config=QUIET)  # fmt: skip

        async def consume() -> None:
            async for _ in result.stream_events():
                pass

        with pytest.raises(RuntimeError, match=r"Simulated session\.add_items failure"):
            await asyncio.wait_for(consume(), timeout=30)

    asyncio.run(scenario())


def test_session_settings(forest: Forest) -> None:
    default = ForestSession("default_settings_test", forest)
    assert isinstance(default.session_settings, SessionSettings)
    assert default.session_settings.limit is None
    five = ForestSession("constructor_settings_test", forest,
                         session_settings=SessionSettings(limit=5))  # fmt: skip
    assert five.session_settings is not None and five.session_settings.limit == 5
    zero = ForestSession("dictionary_settings_test", forest, session_settings={"limit": 0})
    assert isinstance(zero.session_settings, SessionSettings)
    assert zero.session_settings.limit == 0
    assert zero.session_settings.resolve({"limit": 4}).limit == 4
    with pytest.raises(TypeError, match="Unknown session settings: limitt"):
        ForestSession("invalid_settings_test", forest, session_settings={"limitt": 1})


def test_get_items_uses_the_settings_limit_unless_given_one(forest: Forest) -> None:
    async def scenario() -> None:
        three = ForestSession("uses_settings_limit_test", forest,
                              session_settings=SessionSettings(limit=3))  # fmt: skip
        await three.add_items([{"role": "user", "content": f"Message {i}"} for i in range(5)])
        assert contents(await three.get_items()) == ["Message 2", "Message 3", "Message 4"]
        five = ForestSession("explicit_override_test", forest,
                             session_settings=SessionSettings(limit=5))  # fmt: skip
        await five.add_items([{"role": "user", "content": f"Message {i}"} for i in range(10)])
        assert contents(await five.get_items(limit=2)) == ["Message 8", "Message 9"]

    asyncio.run(scenario())


def test_run_config_settings_override_the_session_default(forest: Forest) -> None:
    async def scenario() -> None:
        session = ForestSession("override_test", forest,
                                session_settings=SessionSettings(limit=100))  # fmt: skip
        await session.add_items([{"role": "user", "content": f"Message {i}"} for i in range(10)])
        model = ScriptedModel()
        model.enqueue([text("Got it")])
        config = RunConfig(tracing_disabled=True, session_settings=SessionSettings(limit=2))
        await Runner.run(Agent(name="test", model=model), "New question", session=session,
                         run_config=config)  # fmt: skip
        assert contents(cast(list[TResponseInputItem], model.calls[-1].input)) == [
            "Message 8", "Message 9", "New question"
        ]  # fmt: skip

    asyncio.run(scenario())


# --- tests/memory/test_session_limit.py ----------------------------------------------


async def _turns(method: str, agent: Agent[Any], model: ScriptedModel, session: Any,
                 n: int) -> None:  # fmt: skip
    for i in range(1, n + 1):
        model.enqueue([text(f"Reply {i}")])
        await run_agent(method, agent, f"Message {i}", session=session)


@pytest.mark.parametrize("method", METHODS)
def test_a_run_config_limit_bounds_the_history_sent(forest: Forest, method: str) -> None:
    async def scenario() -> None:
        session = ForestSession("limit_test", forest)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        await _turns(method, agent, model, session, 3)
        assert len(await session.get_items()) == 6
        model.enqueue([text("Reply 4")])
        config = RunConfig(tracing_disabled=True, session_settings=SessionSettings(limit=2))
        await run_agent(method, agent, "Message 4", session=session, run_config=config)
        sent = cast(list[dict[str, Any]], model.calls[-1].input)
        assert len(sent) == 3
        assert sent[0]["content"] == "Message 3"
        assert sent[1]["content"][0]["text"] == "Reply 3"
        assert sent[2]["content"] == "Message 4"

    asyncio.run(scenario())


@pytest.mark.parametrize("method", METHODS)
def test_a_limit_drops_an_output_whose_call_it_cut(forest: Forest, method: str) -> None:
    async def scenario() -> None:
        session = ForestSession("limit_tool_pair", forest)
        history = cast(list[TResponseInputItem], [
            {"role": "user", "content": "What is the weather?"},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather",
             "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "It is sunny.", "annotations": []}]},
        ])  # fmt: skip
        await session.add_items(history)
        assert await session.get_items(limit=2) == history[-2:]
        model = ScriptedModel()
        model.enqueue([text("Tomorrow is sunny too.")])
        config = RunConfig(tracing_disabled=True, session_settings=SessionSettings(limit=2))
        await run_agent(method, Agent(name="test", model=model), "What about tomorrow?",
                        session=session, run_config=config)  # fmt: skip
        assert model.calls[-1].input == [
            history[-1], {"role": "user", "content": "What about tomorrow?"}
        ]  # fmt: skip

    asyncio.run(scenario())


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("limit", "turns", "expected"), [(0, 2, 1), (None, 5, 11), (100, 1, 3)])
def test_limit_zero_none_and_larger_than_history(
    forest: Forest, method: str, limit: int | None, turns: int, expected: int
) -> None:
    async def scenario() -> None:
        session = ForestSession(f"limit_{limit}_test", forest)
        model = ScriptedModel()
        agent = Agent(name="test", model=model)
        await _turns(method, agent, model, session, turns)
        model.enqueue([text("last")])
        config = RunConfig(tracing_disabled=True, session_settings=SessionSettings(limit=limit))
        await run_agent(method, agent, "Final", session=session, run_config=config)
        sent = cast(list[dict[str, Any]], model.calls[-1].input)
        assert len(sent) == expected
        assert sent[-1]["content"] == "Final"
        if expected > 1:
            assert sent[0]["content"] == "Message 1"
            assert sent[1]["content"][0]["text"] == "Reply 1"

    asyncio.run(scenario())
