"""`ForestSessionStore`: the Claude Agent SDK's own conformance suite, the Claude Code
view a person reads, and a real `query(...)` resumed from the store through the SDK's
bundled CLI against the stand-in model, on every backend."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    SessionKey,
    TextBlock,
    get_session_messages_from_store,
    query,
)
from claude_agent_sdk.testing import run_session_store_conformance

from sessionforest import Forest
from sessionforest.integrations.claude_agent import ForestSessionStore, session_id_for
from standin import ProviderStandIn, Reply

KEY: SessionKey = {
    "project_key": "-home-me-proj",
    "session_id": "1b5c0f7e-0000-4000-8000-000000000001",
}


def test_the_sdk_conformance_suite_passes_in_full(harness: Any) -> None:
    made: list[ForestSessionStore] = []

    def make_store() -> ForestSessionStore:
        made.append(ForestSessionStore(harness.fresh()))
        return made[-1]

    asyncio.run(run_session_store_conformance(make_store))
    assert len(made) >= 15  # one store per contract (and the probe): every optional one ran


def line(uuid: str, parent: str | None, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    role = "user" if kind == "user" else "assistant"
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": KEY["session_id"],
            "timestamp": f"2026-03-01T10:00:0{len(uuid) % 10}.000Z", "cwd": "/home/me/proj",
            "message": {"role": role, "content": content}, **extra}  # fmt: skip


def test_lines_are_kept_exactly_and_deduplicated_by_uuid(forest: Forest) -> None:
    async def scenario() -> None:
        store = ForestSessionStore(forest, view=False)
        batch = [line("u1", None, "user", "hi"), {"type": "custom-title", "customTitle": "t"}]
        await store.append(KEY, batch)
        await store.append(KEY, batch)  # the SDK retries a batch it is unsure of
        assert await store.load(KEY) == [*batch, batch[1]]  # lines without a uuid: kept
        again = ForestSessionStore(forest)  # another process
        assert await again.load(KEY) == [*batch, batch[1]]
        assert forest.session(session_id_for(KEY["project_key"], KEY["session_id"])).visibility \
            == "hidden"  # fmt: skip

    asyncio.run(scenario())


def test_the_chat_a_person_reads_is_the_claude_code_import(forest: Forest) -> None:
    """A rewind (two children of one line), a tool call with its result and a subagent:
    the forest chat has the importer's branch, tool entries and worker chat."""
    tool_use = [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]
    result = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]
    lines = [
        line("u1", None, "user", "list the files"),
        line("a1", "u1", "assistant", tool_use),
        line("u2", "a1", "user", result),
        line("a2", "u2", "assistant", [{"type": "text", "text": "There is a.txt."}]),
        line("u3", "a2", "user", "delete it"),
        line("u3b", "a2", "user", "no, keep it and rename it"),  # the rewind
        line("a3", "u3b", "assistant", [{"type": "text", "text": "Renamed."}]),
    ]
    agent = [{**line("s1", None, "user", "look around"), "isSidechain": True,
              "agentId": "abc"},
             {**line("s2", "s1", "assistant", [{"type": "text", "text": "done"}]),
              "isSidechain": True, "agentId": "abc"}]  # fmt: skip

    async def scenario() -> None:
        store = ForestSessionStore(forest)
        await store.append(KEY, lines[:4])
        await store.append(KEY, lines[4:])
        await store.append({**KEY, "subpath": "subagents/agent-abc"}, agent)
        await store.append(KEY, [line("u4", "a3", "user", "thanks")])  # rebuilds with it
        chat = store.chat_id(KEY)
        assert chat is not None
        kinds = [e.kind for e in forest.active_path(chat)]
        assert "tool.completed" in kinds and kinds[-1] == "user.message"
        assert len(forest.tips(chat)) == 2  # the rewound turn is a branch
        texts = [str(e.payload) for e in forest.active_path(chat)]
        assert any("rename" in t for t in texts) and not any("delete it" in t for t in texts)
        worker = forest.agent_for_session(chat)
        assert worker is not None and forest.agent_children(worker.id)  # the subagent
        assert forest.session(chat).harness == "claude-code"
        # Found as any imported chat is (the store's own hidden sessions are not chats).
        assert [h.session_id for h in forest.search_chats("renamed").hits] == [chat]

    asyncio.run(scenario())


def test_delete_hides_a_session_and_keeps_its_history(forest: Forest) -> None:
    async def scenario() -> None:
        store = ForestSessionStore(forest, view=False)
        await store.append(KEY, [line("u1", None, "user", "hi")])
        await store.append({**KEY, "subpath": "subagents/agent-1"}, [line("s", None, "user", "x")])
        sid = session_id_for(KEY["project_key"], KEY["session_id"])
        before = len(forest.entries(sid))
        await store.delete(KEY)
        assert await store.load(KEY) is None
        assert await store.list_subkeys(KEY) == []
        assert len(forest.entries(sid)) == before + 1  # a mark; the batches stay
        await store.append(KEY, [line("u1", None, "user", "hi again")])  # starts over
        assert [e["message"]["content"] for e in await store.load(KEY) or []] == ["hi again"]

    asyncio.run(scenario())


def _environment(home: Path, standin: ProviderStandIn) -> dict[str, str]:
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "TMPDIR": str(home / "tmp"),
        "ANTHROPIC_BASE_URL": standin.url,
        "ANTHROPIC_API_KEY": "sk-ant-standin",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


async def _turn(prompt: str, options: ClaudeAgentOptions) -> tuple[str, str]:
    """(the session id, the reply text) of one query."""
    session, text = "", ""
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, AssistantMessage):
            text += "".join(b.text for b in message.content if isinstance(b, TextBlock))
        if isinstance(message, ResultMessage):
            session = message.session_id
    return session, text


@pytest.mark.slow
def test_a_real_query_resumes_a_session_from_the_store(
    forest: Forest, provider_standin: ProviderStandIn, tmp_path: Path
) -> None:
    """The SDK's bundled CLI writes a session; its local transcripts are then removed,
    so the resume can only come from the store; the model's next request has the
    first turn in it."""
    replies = iter(["Noted: the word is kumquat.", "You asked me to remember kumquat."])

    def respond(body: dict[str, Any]) -> Reply:
        return Reply(text=next(replies)) if body.get("tools") else Reply(text="Stand-in title")

    provider_standin.responder = respond
    store = ForestSessionStore(forest)
    work = tmp_path / "work"
    work.mkdir()
    options = ClaudeAgentOptions(env=_environment(tmp_path / "home", provider_standin),
                                 cwd=str(work), session_store=store, model="claude-sonnet-4-5",
                                 max_turns=1)  # fmt: skip

    async def scenario() -> None:
        session, text = await _turn("Remember the word kumquat.", options)
        assert session and "kumquat" in text
        shutil.rmtree(tmp_path / "home" / ".claude" / "projects")  # only the store has it
        stored = await get_session_messages_from_store(store, session, directory=str(work))
        assert [m.type for m in stored][:2] == ["user", "assistant"]
        options.resume = session
        resumed, answer = await _turn("Which word did I ask you to remember?", options)
        assert "kumquat" in answer
        model_turns = [r.body for r in provider_standin.requests if r.body.get("tools")]
        sent = str(model_turns[-1]["messages"])
        assert "Remember the word kumquat." in sent and "Noted: the word is kumquat." in sent
        key: SessionKey = {"project_key": stored_key(store, session), "session_id": resumed}
        chat = store.chat_id(key)
        assert chat is not None  # the person's view: the Claude Code import of it
        texts = " ".join(str(e.payload) for e in forest.active_path(chat))
        assert "Which word did I ask you to remember?" in texts

    asyncio.run(scenario())


def stored_key(store: ForestSessionStore, session: str) -> str:
    """The project key the SDK stored `session` under (from the store's own sessions)."""
    for info in store.forest.sessions():
        if info.harness == "claude-agent-sdk" and info.title.endswith(f"/{session}"):
            return info.title.rsplit("/", 1)[0]
    raise AssertionError(f"{session} is not in the store")
