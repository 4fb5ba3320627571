"""What the MCP tools return, built from the facade: bounded, redacted, structured.

Every text that leaves for a client (a model reads it) goes through
`redact.redact` first, as deep search's does (detect-secrets, whole body at a
time), and is cut to fit: an entry's text to `ENTRY_CHARS`, a page of a
transcript to the caller's `max_chars` (at most `MAX_PAGE_CHARS`), so no result
comes near the ~25k tokens Claude Code accepts from a tool. A page holds
whole entries in path order; `next` is where the next page starts.
"""

from __future__ import annotations

from typing import Any

# pydantic (the SDK's output schemas) needs typing_extensions' TypedDict before 3.12.
from typing_extensions import TypedDict

from ... import Forest
from ...entrytext import entry_text
from ...errors import InvalidArgument
from ...model import Entry, Node
from ...redact import redact

ENTRY_CHARS = 4_000  # one entry's text in a page
MAX_PAGE_CHARS = 40_000  # about 10k tokens: well under the 25k a client accepts
SNIPPET_CHARS = 300
MAX_LIMIT = 200


class ChatRef(TypedDict):
    session_id: str
    title: str
    harness: str
    updated_at: str
    snippet: str


class FoundChat(ChatRef):
    # The entry the snippet comes from (read_chat's `branch` takes it) and whether it
    # is on the active branch; null when only the title or summary matched.
    entry_id: str | None
    sequence: int | None
    active: bool | None


class FindResult(TypedDict):
    query: str
    confident: bool
    reason: str
    chats: list[FoundChat]


class ChatList(TypedDict):
    total: int
    offset: int
    chats: list[ChatRef]


class Hit(TypedDict):
    entry_id: str
    sequence: int
    kind: str
    snippet: str
    on_active_branch: bool


class RecallResult(TypedDict):
    session_id: str
    query: str
    hits: list[Hit]


class PageEntry(TypedDict):
    entry_id: str
    sequence: int
    kind: str
    text: str
    truncated: bool  # the text was cut (the entry holds more)


class Page(TypedDict):
    session_id: str
    title: str
    tip: str | None  # the entry the path ends at (the head unless a branch was asked for)
    on_active_branch: bool
    total: int  # entries on the path
    start: int
    next: int | None  # the `after` of the next page; None: this page reaches the tip
    entries: list[PageEntry]


class Branch(TypedDict):
    tip: str
    sequence: int
    kind: str
    depth: int
    preview: str
    active: bool


class BranchList(TypedDict):
    session_id: str
    head: str | None
    branches: list[Branch]


class CheckpointRef(TypedDict):
    entry_id: str
    sequence: int
    label: str
    summary: str
    created_at: str


class CheckpointList(TypedDict):
    session_id: str
    checkpoints: list[CheckpointRef]


class Written(TypedDict):
    session_id: str
    entry_id: str
    sequence: int
    kind: str


def safe(text: str, limit: int) -> tuple[str, bool]:
    """`text` redacted, then cut to `limit` characters: (text, whether it was cut)."""
    clean = redact(text).text
    if len(clean) <= limit:
        return clean, False
    return clean[: max(limit - 1, 0)] + "…", True


def _limit(name: str, value: int, top: int) -> int:
    if not 1 <= value <= top:
        raise InvalidArgument(name, f"must be 1..{top}, got {value}")
    return value


def find(forest: Forest, query: str, limit: int, harness: str | None) -> FindResult:
    found = forest.search_chats(query, limit=_limit("limit", limit, 50), harness=harness)
    chats = [
        FoundChat(session_id=h.session_id, title=safe(h.title, 200)[0], harness=h.harness,
                  updated_at=h.updated_at, snippet=safe(h.snippet, SNIPPET_CHARS)[0],
                  entry_id=h.entry_id, sequence=h.sequence, active=h.active)
        for h in found.hits
    ]  # fmt: skip
    return FindResult(query=query, confident=found.confident, reason=found.detail, chats=chats)


def chats(forest: Forest, limit: int, offset: int, harness: str | None) -> ChatList:
    listed = [
        s for s in forest.sessions(include_hidden=False, order="updated")
        if harness is None or s.harness == harness
    ]  # fmt: skip
    if offset < 0:
        raise InvalidArgument("offset", f"must be 0 or more, got {offset}")
    page = listed[offset : offset + _limit("limit", limit, MAX_LIMIT)]
    return ChatList(total=len(listed), offset=offset, chats=[
        ChatRef(session_id=s.id, title=safe(s.title, 200)[0], harness=s.harness,
                updated_at=s.updated_at, snippet="")
        for s in page
    ])  # fmt: skip


def recall(forest: Forest, session: str, query: str, limit: int) -> RecallResult:
    sid = forest.resolve_session(session)
    hits = forest.search_session_entries(sid, query, limit=_limit("limit", limit, 50))
    return RecallResult(session_id=sid, query=query, hits=[
        Hit(entry_id=h.entry_id, sequence=h.sequence, kind=h.kind,
            snippet=safe(h.snippet, SNIPPET_CHARS)[0], on_active_branch=h.on_active_branch)
        for h in hits
    ])  # fmt: skip


def path_to(nodes: list[Node], tip: str | None) -> list[Node]:
    """The root -> `tip` path through the skeleton (parent links, no payloads)."""
    by_id = {n.id: n for n in nodes}
    path: list[Node] = []
    current = by_id.get(tip) if tip else None
    while current is not None:
        path.append(current)
        current = by_id.get(current.parent_id) if current.parent_id else None
    path.reverse()
    return path


def read(
    forest: Forest, session: str, branch: str | None, after: int, limit: int, max_chars: int
) -> Page:
    sid = forest.resolve_session(session)
    _limit("limit", limit, MAX_LIMIT)
    _limit("max_chars", max_chars, MAX_PAGE_CHARS)
    if after < 0:
        raise InvalidArgument("after", f"must be 0 or more, got {after}")
    head = forest.head(sid)
    tip = forest.resolve_entry(sid, branch) if branch else head
    nodes = forest.skeleton(sid)
    path = path_to(nodes, tip)
    active = {n.id for n in path_to(nodes, head)}
    entries: list[PageEntry] = []
    budget = max_chars
    position = after
    while position < len(path) and len(entries) < limit and budget > 0:
        entry = forest.entry(sid, path[position].id)
        text, cut = safe(_text(entry), min(ENTRY_CHARS, budget))
        if cut and entries and budget < ENTRY_CHARS:
            break  # it would not fit whole: it starts the next page
        entries.append(PageEntry(entry_id=entry.id, sequence=entry.sequence, kind=entry.kind,
                                 text=text, truncated=cut))  # fmt: skip
        budget -= len(text)
        position += 1
    info = forest.session(sid)
    return Page(session_id=sid, title=safe(info.title, 200)[0], tip=tip,
                on_active_branch=tip is None or tip in active, total=len(path), start=after,
                next=position if position < len(path) else None, entries=entries)  # fmt: skip


def _text(entry: Entry) -> str:
    """An entry as a reader sees it: its text, tool calls and results named."""
    payload: Any = entry.payload
    text = entry_text(entry.kind, payload) or ""
    if entry.kind == "assistant.message":
        calls = [
            f"[tool call {b.get('name')} {str(b.get('input'))[:500]}]"
            for b in payload.get("content") or []
            if isinstance(b, dict) and b.get("type") == "tool_call"
        ]
        text = "\n".join([t for t in (text, *calls) if t])
    elif entry.kind == "tool.completed":
        output = payload.get("output")
        if isinstance(output, list):
            output = "\n".join(str(b.get("text", "")) for b in output if isinstance(b, dict))
        text = f"[tool result {payload.get('call_id')}] {output}"
    if not text and entry.context_visibility == "hidden":
        text = f"[{entry.kind}]"
    return text


def branches(forest: Forest, session: str) -> BranchList:
    sid = forest.resolve_session(session)
    head = forest.head(sid)
    nodes = forest.skeleton(sid)
    active = {n.id for n in path_to(nodes, head)}
    tips = forest.tips(sid)
    found = [
        Branch(tip=t.id, sequence=t.sequence, kind=t.kind, depth=len(path_to(nodes, t.id)),
               preview=safe(_text(t), 160)[0], active=t.id in active)
        for t in tips[-MAX_LIMIT:]
    ]  # fmt: skip
    return BranchList(session_id=sid, head=head, branches=found)


def checkpoints(forest: Forest, session: str) -> CheckpointList:
    sid = forest.resolve_session(session)
    marks = forest.checkpoints(sid)[-MAX_LIMIT:]
    return CheckpointList(session_id=sid, checkpoints=[
        CheckpointRef(entry_id=c.id, sequence=c.sequence,
                      label=safe(str(c.payload.get("label", "")), 200)[0],
                      summary=safe(str(c.payload.get("summary", "")), SNIPPET_CHARS)[0],
                      created_at=c.created_at)
        for c in marks
    ])  # fmt: skip


def written(entry: Entry) -> Written:
    return Written(session_id=entry.session_id, entry_id=entry.id, sequence=entry.sequence,
                   kind=entry.kind)  # fmt: skip
