"""`sessions/*` methods about whole sessions: create, list, get, counts, resolve, rename,
end, archive, unarchive."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from ...errors import InvalidArgument
from ...ids import MAX_TITLE
from ...model import SessionInfo
from ...wire import ChatCounts, Json, Resolved, SessionsPage, Workers
from ..changes import Change
from ..context import Call
from ..limits import MAX_COUNTED, MAX_PAGE
from ..registry import Group, Id, Params

group = Group("sessions")


class CreateParams(Params):
    title: str = ""
    harness: str = ""
    cwd: str | None = None
    session_id: Id | None = None
    visibility: Literal["top-level", "hidden"] = "top-level"
    created_at: str | None = None


@group.method("sessions/create", CreateParams, SessionInfo, "write")
def create(call: Call, p: CreateParams) -> Json:
    """Create an empty session; `cwd` binds it to a directory of the server's machine.

    Over HTTP and WebSocket `cwd` must lie inside one of the server's
    `--bind-root` directories (none given: no binding); the stdio peer may
    bind any directory, as the CLI does.
    """
    forest = call.forest
    cwd: str | None = p.cwd
    if cwd is not None and call.client.transport != "stdio":
        cwd = str(call.server.bind_roots.resolve(cwd))
    sid = forest.create_session(
        p.title, p.harness, cwd, session_id=p.session_id, visibility=p.visibility,
        created_at=p.created_at,
    )  # fmt: skip
    info = forest.session(sid)
    call.server.statuses.set(sid, info.status)
    call.changed(Change(sid, "created", None, info.status, title=info.title))
    return info.to_json()


class ListParams(Params):
    # Hidden sessions (subagents' side chats, deep-search usage records) are listed
    # only on request, as `forest list` does (`--all`).
    include_hidden: bool = False
    order: Literal["created", "updated"] = "created"
    offset: Annotated[int, Meta(ge=0)] = 0
    # The `next_cursor` of the page before: the next page at the cost of one page,
    # however deep (an offset skips every row before it). Not with an offset.
    cursor: Annotated[str, Meta(min_length=1, max_length=512)] | None = None
    limit: Annotated[int, Meta(ge=1, le=MAX_PAGE)] = MAX_PAGE


@group.method("sessions/list", ListParams, SessionsPage, "read")
def list_sessions(call: Call, p: ListParams) -> Json:
    """A page of sessions: oldest first (`order="created"`) or latest activity first;
    hidden ones only with `include_hidden`. Page on with `cursor` (`next_cursor`)."""
    if p.cursor is not None and p.offset:
        raise InvalidArgument("offset", "give a cursor or an offset, not both")
    # The page and the count, not every session: each listed one counts its entries.
    forest = call.forest
    # One row more than the page says whether another page follows.
    rows = forest.sessions(
        include_hidden=p.include_hidden, order=p.order, limit=p.limit + 1, offset=p.offset,
        after=p.cursor,
    )  # fmt: skip
    page, more = rows[: p.limit], len(rows) > p.limit
    total = forest.count_sessions(include_hidden=p.include_hidden)
    next_offset = p.offset + len(page) if more and p.cursor is None else None
    next_cursor = forest.cursor(page[-1]) if more else None
    return SessionsPage(page, total, next_offset, next_cursor).to_json()


class SessionParams(Params):
    session_id: Id


@group.method("sessions/get", SessionParams, SessionInfo, "read")
def get(call: Call, p: SessionParams) -> Json:
    """One session as listed: title, harness, status, head, entry count, source."""
    return call.forest.session(p.session_id).to_json()


class CountsParams(Params):
    session_ids: Annotated[list[Id], Meta(min_length=1, max_length=MAX_COUNTED)]


@group.method("sessions/counts", CountsParams, list[ChatCounts], "read")
def counts(call: Call, p: CountsParams) -> list[Json]:
    """Each chat's visible messages (every branch) and branch points, in the order
    asked: what a chat list shows beside the rows it draws (`sessions/list` leaves
    them out, so a list of thousands of chats counts nothing)."""
    return [c.to_json() for c in call.forest.chat_counts(p.session_ids)]


class ResolveParams(Params):
    session: Annotated[str, Meta(min_length=1, max_length=128)]
    entry: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


@group.method("sessions/resolve", ResolveParams, Resolved, "read")
def resolve(call: Call, p: ResolveParams) -> Json:
    """The ids that refs name as a person types them, as the CLI takes them.

    `session`: a full id or a unique prefix; `entry`: a full id, a sequence
    number as `log` prints it, or a unique prefix. Every other method takes
    exact ids only.
    """
    sid = call.forest.resolve_session(p.session)
    entry = call.forest.resolve_entry(sid, p.entry) if p.entry is not None else None
    return Resolved(sid, entry).to_json()


class RenameParams(Params):
    session_id: Id
    # Longer ones are refused with the length named (Forest.rename), not by the schema alone.
    title: Annotated[str, Meta(max_length=4 * MAX_TITLE)]


@group.method("sessions/rename", RenameParams, SessionInfo, "write")
def rename(call: Call, p: RenameParams) -> Json:
    """Give the session the user's own title (one line, at most 200 characters; not
    empty): an import of its source keeps it. Answers the session as listed and
    notifies `sessions/changed` with `change` = "renamed"."""
    info = call.forest.rename(p.session_id, p.title)
    call.changed(Change(p.session_id, "renamed", info.head, info.status, title=info.title))
    return info.to_json()


@group.method("sessions/end", SessionParams, SessionInfo, "write")
def end(call: Call, p: SessionParams) -> Json:
    """Mark the session ended (it stays searchable and readable)."""
    return _set_status(call, p.session_id, "ended")


@group.method("sessions/archive", SessionParams, SessionInfo, "write")
def archive(call: Call, p: SessionParams) -> Json:
    """Mark the session archived (it stays searchable and readable)."""
    return _set_status(call, p.session_id, "archived")


@group.method("sessions/unarchive", SessionParams, SessionInfo, "write")
def unarchive(call: Call, p: SessionParams) -> Json:
    """Bring an archived session back to the list (active again); a session that is not
    archived is returned as it is."""
    before = call.forest.session(p.session_id).status
    info = call.forest.unarchive(p.session_id)
    if info.status != before:
        call.server.statuses.set(p.session_id, info.status)
        call.changed(Change(p.session_id, "status", info.head, info.status))
    return info.to_json()


def _set_status(call: Call, session_id: str, status: str) -> Json:
    call.forest.set_status(session_id, status)
    info = call.forest.session(session_id)
    call.server.statuses.set(session_id, info.status)
    call.changed(Change(session_id, "status", info.head, info.status))
    return info.to_json()


@group.method("sessions/workers", SessionParams, Workers, "read")
def workers(call: Call, p: SessionParams) -> Json:
    """The worker chats the agent tree links under this chat (with the prompt each
    started from), and the chat this one works for when it is a worker."""
    return call.forest.workers(p.session_id).to_json()
