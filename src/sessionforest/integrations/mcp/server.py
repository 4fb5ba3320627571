"""`forest mcp`: the user's chat history as an MCP server, built with the official SDK.

Tools (all read-only, annotated so, unless `allow_writes`):

- `find_chats(query)`: find a chat across every harness (the same funnel as
  `forest find`: time phrases, harness words, the confidence gate);
- `list_chats(limit, offset)`: the most recently active chats;
- `recall(session_id, query)`: the entries of one chat that match;
- `read_chat(session_id, branch, after, limit, max_chars)`: a page of the
  active path, or of the path to any branch tip, bounded in entries and in
  characters (`next` continues it);
- `list_branches(session_id)`, `list_checkpoints(session_id)`;
- with `allow_writes`: `create_checkpoint(session_id, label)` and
  `append_note(session_id, text)` (a hidden note: shown to people, never
  sent to a model).

Resources: `forest://chats` (recent chats) and `forest://chat/{session_id}`
(the first page of a chat's active path). Every result is structured (an
output schema from the TypedDicts in reading.py), redacted and bounded as
reading.py says; tools returning transcript text set
`anthropic/maxResultSizeChars` so Claude Code hands them to the model whole.
Errors are tool errors naming what was wrong (an unknown chat, a bad page).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from ... import Forest
from ...errors import ForestError
from . import reading
from .reading import (
    BranchList,
    ChatList,
    CheckpointList,
    FindResult,
    Page,
    RecallResult,
    Written,
)

T = TypeVar("T")

INSTRUCTIONS = (
    "The user's AI-agent chat history (every harness, every branch). find_chats locates a "
    "chat from a description ('the sqlite lock fix last week'); recall searches inside one; "
    "read_chat pages through its active path or any branch (list_branches). Text is "
    "redacted of secrets."
)
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                       open_world_hint=False)  # fmt: skip
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                        open_world_hint=False)  # fmt: skip
# Claude Code saves a result over 50,000 characters to a file unless the tool allows
# more; a page is at most reading.MAX_PAGE_CHARS of text plus its JSON.
TRANSCRIPT_META = {"anthropic/maxResultSizeChars": 2 * reading.MAX_PAGE_CHARS + 20_000}


async def _call(fn: Callable[..., T], *args: Any) -> T:
    """Run the store work on a worker thread; a ForestError becomes the tool's error."""
    try:
        return await asyncio.to_thread(fn, *args)
    except ForestError as exc:
        raise ToolError(str(exc)) from exc


def build(forest: Forest, *, allow_writes: bool = False) -> MCPServer:
    """The MCP server over `forest` (read-only unless `allow_writes`)."""
    server: MCPServer = MCPServer("sessionforest", instructions=INSTRUCTIONS)

    @server.tool(title="Find a chat", annotations=READ)
    async def find_chats(query: str, limit: int = 8, harness: str | None = None) -> FindResult:
        """Find chats across all harnesses from a description of what was discussed.

        Words, "quoted phrases", -exclusions, time phrases ("yesterday", "last
        week", "in march") and harness names ("codex", "claude code") all work.
        `confident` says whether the top chat is a sure answer; each chat names the
        entry its snippet comes from (`entry_id`, `sequence`; read_chat with
        `branch` = that entry opens there) and whether it is on the active branch."""
        return await _call(reading.find, forest, query, limit, harness)

    @server.tool(title="List recent chats", annotations=READ)
    async def list_chats(limit: int = 20, offset: int = 0, harness: str | None = None) -> ChatList:
        """The most recently active chats, newest first (page with offset)."""
        return await _call(reading.chats, forest, limit, offset, harness)

    @server.tool(title="Search inside a chat", annotations=READ)
    async def recall(session_id: str, query: str, limit: int = 10) -> RecallResult:
        """The entries of one chat matching `query`, best first, with whether each is on
        the chat's active branch. `session_id` may be a unique prefix."""
        return await _call(reading.recall, forest, session_id, query, limit)

    @server.tool(title="Read a chat", annotations=READ, meta=TRANSCRIPT_META)
    async def read_chat(
        session_id: str,
        branch: str | None = None,
        after: int = 0,
        limit: int = 40,
        max_chars: int = 20_000,
    ) -> Page:
        """A page of a chat's transcript, root first: its active path, or the path to
        `branch` (a tip from list_branches, or any entry id or sequence number).
        At most `limit` entries and `max_chars` characters; continue from `next`."""
        return await _call(reading.read, forest, session_id, branch, after, limit, max_chars)

    @server.tool(title="List a chat's branches", annotations=READ)
    async def list_branches(session_id: str) -> BranchList:
        """Every branch tip of a chat (edits, rewinds, regenerations), marking the one the
        active path ends at."""
        return await _call(reading.branches, forest, session_id)

    @server.tool(title="List a chat's checkpoints", annotations=READ)
    async def list_checkpoints(session_id: str) -> CheckpointList:
        """The labelled states of a chat a person can go back to."""
        return await _call(reading.checkpoints, forest, session_id)

    if allow_writes:

        @server.tool(title="Create a checkpoint", annotations=WRITE)
        async def create_checkpoint(
            session_id: str, label: str, summary: str | None = None
        ) -> Written:
            """Label the chat's current state (a checkpoint entry at its head)."""

            def write() -> Written:
                sid = forest.resolve_session(session_id)
                return reading.written(forest.checkpoint(sid, label, summary))

            return await _call(write)

        @server.tool(title="Append a note", annotations=WRITE)
        async def append_note(session_id: str, text: str) -> Written:
            """Append a note to the chat at its head: shown to people, never sent to a
            model (hidden), found by search."""

            def write() -> Written:
                sid = forest.resolve_session(session_id)
                payload = {"content": [{"type": "text", "text": text}], "note": {"by": "mcp"}}
                return reading.written(forest.append(sid, "user.message", payload,
                                                     visibility="hidden"))  # fmt: skip

            return await _call(write)

    @server.resource("forest://chats", name="chats", mime_type="application/json")
    async def chats_resource() -> ChatList:
        """The 50 most recently active chats."""
        return await _call(reading.chats, forest, 50, 0, None)

    @server.resource("forest://chat/{session_id}", name="chat", mime_type="application/json")
    async def chat_resource(session_id: str) -> Page:
        """The first page of a chat's active path."""
        return await _call(reading.read, forest, session_id, None, 0, 40, 20_000)

    return server


def serve(
    location: str | None,
    *,
    http: bool = False,
    host: str = "127.0.0.1",
    port: int = 8766,
    allow_writes: bool = False,
) -> None:
    """Run the server until its client goes away (stdio) or it is stopped (HTTP)."""
    forest = Forest.open(location, readonly=not allow_writes, create=allow_writes)
    try:
        server = build(forest, allow_writes=allow_writes)
        if http:
            server.run("streamable-http", host=host, port=port)
        else:
            server.run("stdio")
    finally:
        forest.close()
