"""`forest mcp`: the official MCP SDK's Client against the server in-process, over stdio
(a spawned `forest mcp`) and streamable HTTP, and the real Claude Code CLI using it."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import claude_agent_sdk
import pytest
from mcp import Client, StdioServerParameters

from sessionforest import Forest
from sessionforest.integrations.mcp import build
from sessionforest.integrations.mcp.reading import ENTRY_CHARS, MAX_PAGE_CHARS
from standin import ProviderStandIn, Reply, ToolCall

FOREST = Path(sys.executable).with_name("forest")
SECRET = "AKIAIOSFODNN7EXAMPLE"  # the AWS documentation's example key
READ_TOOLS = {"find_chats", "list_chats", "recall", "read_chat", "list_branches",
              "list_checkpoints"}  # fmt: skip


def seed(forest: Forest) -> str:
    """A chat with a checkpoint, a branch, a tool exchange, a secret and a huge reply."""
    sid = forest.create_session(title="sqlite lock", harness="claude-code")
    ask = forest.append(
        sid,
        "user.message",
        {
            "content": [
                {"type": "text", "text": f"Why is the nightly import database locked? key {SECRET}"}
            ]
        },
    )
    forest.append(
        sid,
        "assistant.message",
        {
            "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_call", "id": "t1", "name": "grep", "input": {"pattern": "timeout"}},
            ]
        },
    )
    forest.append(sid, "tool.completed", {"call_id": "t1", "output": "importer.py: timeout=0"})
    forest.append(
        sid,
        "assistant.message",
        {
            "content": [
                {"type": "text", "text": "The importer opens its own connection with timeout=0."}
            ]
        },
    )
    forest.checkpoint(sid, "diagnosed")
    forest.append(sid, "user.message", {"content": [{"type": "text", "text": "Share it."}]})
    forest.move_head(sid, ask.id)  # a rewind: the next turn is a branch
    forest.append(
        sid,
        "user.message",
        {"content": [{"type": "text", "text": "Try WAL and a busy timeout instead."}]},
    )
    forest.append(
        sid, "assistant.message", {"content": [{"type": "text", "text": "busy " * 30_000}]}
    )  # 150,000 characters
    other = forest.create_session(title="css grid", harness="codex")
    forest.append(other, "user.message", {"content": [{"type": "text", "text": "center a div"}]})
    return sid  # fmt: skip


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    # What a model reads (the text content) is the same document.
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.structured_content


def test_tools_are_read_only_structured_and_bounded(forest: Forest) -> None:
    sid = seed(forest)

    async def scenario() -> None:
        async with Client(build(forest), raise_exceptions=True) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == READ_TOOLS
            for tool in tools.values():
                assert tool.annotations is not None and tool.annotations.read_only_hint is True
                assert tool.output_schema is not None and tool.description
            assert tools["read_chat"].meta == {"anthropic/maxResultSizeChars": 100_000}

            found = await call(client, "find_chats", query="database locked last month")
            assert found["chats"][0]["session_id"] == sid
            landed = found["chats"][0]
            entry = forest.entry(sid, landed["entry_id"])  # where the chat opens
            assert (entry.sequence, landed["active"]) == (landed["sequence"], True)
            assert SECRET not in json.dumps(found) and "[redacted]" in json.dumps(found)
            assert (await call(client, "find_chats", query="codex div"))["chats"][0]["title"] \
                == "css grid"  # fmt: skip

            hits = (await call(client, "recall", session_id=sid[:22], query="timeout"))["hits"]
            assert hits and all(h["entry_id"] for h in hits)
            assert {h["on_active_branch"] for h in hits} == {True, False}  # both branches

            page = await call(client, "read_chat", session_id=sid)
            assert page["on_active_branch"] and page["next"] is None
            texts = [e["text"] for e in page["entries"]]
            assert texts[0].startswith("Why is the nightly") and SECRET not in texts[0]
            assert "WAL" in texts[1] and page["entries"][2]["truncated"] and len(texts) == 3
            assert len(texts[2]) <= ENTRY_CHARS
            assert sum(map(len, texts)) <= 20_000

            branches = (await call(client, "list_branches", session_id=sid))["branches"]
            assert len(branches) == 2 and sum(b["active"] for b in branches) == 1
            other = next(b for b in branches if not b["active"])
            side = await call(client, "read_chat", session_id=sid, branch=other["tip"], limit=3)
            assert not side["on_active_branch"] and side["next"] == 3
            assert (
                side["entries"][1]["text"]
                == "Let me look.\n[tool call grep {'pattern': 'timeout'}]"
            )
            assert side["entries"][2]["text"] == "[tool result t1] importer.py: timeout=0"
            rest = await call(client, "read_chat", session_id=sid, branch=other["tip"], after=3)
            assert [e["text"] for e in rest["entries"]][1:] == ["diagnosed", "Share it."]
            assert rest["next"] is None

            marks = (await call(client, "list_checkpoints", session_id=sid))["checkpoints"]
            assert [m["label"] for m in marks] == ["diagnosed"]
            recent = await call(client, "list_chats", limit=1)
            assert recent["total"] == 2 and len(recent["chats"]) == 1

            wrong = await client.call_tool("read_chat", {"session_id": "no-such-chat"})
            assert wrong.is_error and "unknown session" in str(wrong.content)
            too_big = await client.call_tool(
                "read_chat", {"session_id": sid, "max_chars": MAX_PAGE_CHARS + 1}
            )
            assert too_big.is_error and "max_chars" in str(too_big.content)  # fmt: skip

            templates = (await client.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["forest://chat/{session_id}"]
            read = await client.read_resource(f"forest://chat/{sid}")
            doc = json.loads(read.contents[0].text)  # type: ignore[union-attr]
            assert doc["session_id"] == sid and SECRET not in read.contents[0].text  # type: ignore[union-attr]
            listed = json.loads((await client.read_resource("forest://chats")).contents[0].text)  # type: ignore[union-attr]
            assert {c["title"] for c in listed["chats"]} == {"sqlite lock", "css grid"}

    asyncio.run(scenario())


def test_every_page_of_a_huge_chat_stays_under_the_bound(forest: Forest) -> None:
    sid = forest.create_session(title="huge")
    for i in range(120):
        forest.append(sid, "user.message", {"content": [{"type": "text", "text": f"{i} " * 900}]})

    async def scenario() -> None:
        async with Client(build(forest), raise_exceptions=True) as client:
            after: int | None = 0
            seen = 0
            while after is not None:
                result = await client.call_tool(
                    "read_chat", {"session_id": sid, "after": after, "max_chars": MAX_PAGE_CHARS}
                )
                assert len(result.content[0].text) < 50_000  # type: ignore[union-attr]
                page = result.structured_content
                assert page is not None and page["entries"]
                seen += len(page["entries"])
                after = page["next"]
            assert seen == 120  # fmt: skip

    asyncio.run(scenario())


def test_allow_writes_adds_a_checkpoint_and_a_note(forest: Forest) -> None:
    sid = seed(forest)

    async def scenario() -> None:
        async with Client(build(forest, allow_writes=True), raise_exceptions=True) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == READ_TOOLS | {"create_checkpoint", "append_note"}
            for name in ("create_checkpoint", "append_note"):
                hints = tools[name].annotations
                assert hints is not None and hints.read_only_hint is False
                assert hints.destructive_hint is False
            mark = await call(client, "create_checkpoint", session_id=sid, label="wal-plan")
            note = await call(client, "append_note", session_id=sid, text="ask about WAL2")
            assert forest.entry(sid, mark["entry_id"]).kind == "checkpoint"
            stored = forest.entry(sid, note["entry_id"])
            assert stored.context_visibility == "hidden" and forest.head(sid) == stored.id

    asyncio.run(scenario())


def test_the_cli_serves_over_stdio_read_only(harness: Any) -> None:
    with harness.fresh() as forest:
        sid = seed(forest)
        location = harness.location(forest)
    params = StdioServerParameters(command=str(FOREST), args=["--db", location, "mcp"],
                                   env={**os.environ, "FOREST_SEMANTIC": "off"})  # fmt: skip

    async def scenario() -> None:
        async with Client(params, raise_exceptions=True) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == READ_TOOLS
            found = await call(client, "find_chats", query="nightly import locked")
            assert found["chats"][0]["session_id"] == sid
            page = await call(client, "read_chat", session_id=sid, limit=2)
            assert page["next"] == 2

    asyncio.run(scenario())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_cli_serves_streamable_http_on_loopback(harness: Any) -> None:
    with harness.fresh() as forest:
        sid = seed(forest)
        location = harness.location(forest)
    port = _free_port()
    server = subprocess.Popen(
        [str(FOREST), "--db", location, "mcp", "--http", "--port", str(port)],
        env={**os.environ, "FOREST_SEMANTIC": "off"},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)

        async def scenario() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", raise_exceptions=True) as client:
                found = await call(client, "find_chats", query="database locked")
                assert found["chats"][0]["session_id"] == sid

        asyncio.run(scenario())
    finally:
        server.terminate()
        server.wait(timeout=30)
    refused = subprocess.run([str(FOREST), "mcp", "--http", "--host", "0.0.0.0"],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert refused.returncode == 2 and "loopback" in refused.stderr


CLAUDE = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


@pytest.mark.slow
def test_claude_code_asks_the_server_and_reads_the_answer(
    harness: Any, provider_standin: ProviderStandIn, tmp_path: Path
) -> None:
    """Claude Code (the CLI the Claude Agent SDK ships) with `forest mcp` in its MCP
    config; the stand-in model calls find_chats; the tool's result is in the model's
    next request."""
    with harness.fresh() as forest:
        sid = seed(forest)
        location = harness.location(forest)
    tool = "mcp__forest__find_chats"
    replies = iter([Reply(tools=[ToolCall(tool, {"query": "nightly import database locked"})]),
                    Reply(text="It is the chat called sqlite lock.")])  # fmt: skip
    provider_standin.responder = lambda body: (
        next(replies, Reply(text="ok")) if body.get("tools") else Reply(text="Stand-in title")
    )
    home, work = tmp_path / "home", tmp_path / "work"
    (home / "tmp").mkdir(parents=True)
    work.mkdir()
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"forest": {
        "type": "stdio", "command": str(FOREST), "args": ["--db", location, "mcp"],
        "env": {"FOREST_SEMANTIC": "off"}}}}))  # fmt: skip
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "TMPDIR": str(home / "tmp"), "ANTHROPIC_BASE_URL": provider_standin.url,
           "ANTHROPIC_API_KEY": "sk-ant-standin", "DISABLE_AUTOUPDATER": "1",
           "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           # The tools offered directly, not deferred behind ToolSearch (2.1.3xx).
           "ENABLE_TOOL_SEARCH": "false",
           # Claude Code gives an MCP server 30 s to start by default; on a loaded
           # machine `forest mcp`'s first import can take longer, and the model then
           # sees no forest tools. The test is about the answer, not the start-up time.
           "MCP_TIMEOUT": "120000"}  # fmt: skip
    done = subprocess.run(
        [str(CLAUDE), "-p", "--model", "claude-sonnet-4-5", "--mcp-config", str(config),
         "--strict-mcp-config", f"--allowedTools={tool}", "Which chat was about the lock?"],
        cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "sqlite lock" in done.stdout
    turns = [r.body for r in provider_standin.requests if r.body.get("tools")]
    assert any(t["name"] == tool for t in turns[0]["tools"])  # the server's tools, offered
    results = [
        block for message in turns[-1]["messages"] if isinstance(message["content"], list)
        for block in message["content"] if block.get("type") == "tool_result"
    ]  # fmt: skip
    assert results, turns[-1]["messages"]
    text = json.dumps(results)
    assert sid in text and "sqlite lock" in text and SECRET not in text
