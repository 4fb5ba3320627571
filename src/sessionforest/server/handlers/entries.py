"""`sessions/*` methods on one session's entries: writing them (append, append_many,
move_head, checkpoint, seek_checkpoint) and reading them (entry, entries, log,
forest_snapshot, project, status)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, Struct

from ...forest import UNSET as FOREST_UNSET
from ...forest import AppendRequest
from ...forest_models import Message
from ...kinds import KINDS
from ...model import Divergence, Entry, Snapshot, refuse_past
from ...store.base import Unset
from ...wire import Compare, EntriesPage, EntryJson, Json, LogEntryJson
from ..changes import Change, appended
from ..context import Call
from ..limits import LOG_DEFAULT, MAX_ITEMS, MAX_PAGE, MAX_PREVIEWS
from ..registry import ExpectHead, Group, Id, Params, expected
from .sessions import SessionParams

group = Group("entries")

Kind = Annotated[str, Meta(extra_json_schema={"enum": sorted(KINDS)})]
Visibility = Literal["context", "hidden"]

# --- writing entries -------------------------------------------------------------------


class AppendParams(Params):
    session_id: Id
    kind: Kind
    payload: dict[str, Any]
    parent: Id | None = None
    visibility: Visibility | None = None
    expect_head: ExpectHead = UNSET
    created_at: str | None = None


@group.method("sessions/append", AppendParams, EntryJson, "append")
def append(call: Call, p: AppendParams) -> AppendRequest:
    """Append an entry below `parent` (default: the head); the head moves to it.

    The payload must meet its kind's contract (published per kind in the
    schemas as `<Kind>` payloads); appending below anything but the head starts
    a new branch. Concurrent appends are committed together (group commit),
    each still all or nothing.
    """
    return AppendRequest(
        p.session_id, p.kind, p.payload, p.parent, p.visibility, expected(p.expect_head),
        p.created_at,
    )  # fmt: skip


class AppendItem(Struct, forbid_unknown_fields=True):
    kind: Kind
    payload: dict[str, Any]
    visibility: Visibility | None = None


class AppendManyParams(Params):
    session_id: Id
    items: Annotated[list[AppendItem], Meta(min_length=1, max_length=MAX_ITEMS)]
    parent: Id | None = None
    expect_head: ExpectHead = UNSET


@group.method("sessions/append_many", AppendManyParams, list[EntryJson], "write", appends=True)
def append_many(call: Call, p: AppendManyParams) -> list[EntryJson]:
    """Append a whole turn as one chain in ONE transaction: all of it or nothing."""
    items = [(i.kind, i.payload, i.visibility) for i in p.items]
    entries = append_turn(call, p.session_id, items, p.parent, expected(p.expect_head))
    return [e.to_json() for e in entries]


def append_turn(
    call: Call,
    session_id: str,
    items: Sequence[tuple[str, dict[str, Any], str | None]],
    parent: str | None = None,
    expect_head: str | Unset | None = FOREST_UNSET,
) -> list[Entry]:
    """`Forest.append_many` on the writer thread, and the `appended` change it makes."""
    entries = call.forest.append_many(session_id, items, parent, expect_head)
    call.changed(appended(entries, call.status_of(session_id)))
    return entries


class MoveHeadParams(Params):
    session_id: Id
    entry_id: Id
    expect_head: ExpectHead = UNSET


@group.method("sessions/move_head", MoveHeadParams, EntryJson, "write")
def move_head(call: Call, p: MoveHeadParams) -> EntryJson:
    """Point the head at `entry_id` (history and files untouched); returns that entry."""
    forest = call.forest
    forest.move_head(p.session_id, p.entry_id, expect_head=expected(p.expect_head))
    entry = forest.entry(p.session_id, p.entry_id)
    call.changed(Change(p.session_id, "head_moved", entry.id, call.status_of(p.session_id)))
    return entry.to_json()


class CheckpointParams(Params):
    session_id: Id
    label: Annotated[str, Meta(min_length=1)]
    summary: str | None = None


@group.method("sessions/checkpoint", CheckpointParams, EntryJson, "write", appends=True)
def checkpoint(call: Call, p: CheckpointParams) -> EntryJson:
    """Record a checkpoint entry labelling the current state (the head moves onto it)."""
    entry = call.forest.checkpoint(p.session_id, p.label, p.summary)
    call.changed(appended([entry], call.status_of(p.session_id)))
    return entry.to_json()


class SeekParams(Params):
    session_id: Id
    label: Annotated[str, Meta(min_length=1)]


@group.method("sessions/seek_checkpoint", SeekParams, EntryJson, "write")
def seek_checkpoint(call: Call, p: SeekParams) -> EntryJson:
    """Move the head to the most recent checkpoint with `label`; returns it."""
    entry = call.forest.seek_checkpoint(p.session_id, p.label)
    call.changed(Change(p.session_id, "head_moved", entry.id, call.status_of(p.session_id)))
    return entry.to_json()


# --- reading -------------------------------------------------------------------------


class EntryParams(Params):
    session_id: Id
    entry_id: Id


@group.method("sessions/entry", EntryParams, EntryJson, "read")
def entry(call: Call, p: EntryParams) -> EntryJson:
    """One entry, with its payload and stamp."""
    return call.forest.entry(p.session_id, p.entry_id).to_json()


class EntriesParams(Params):
    session_id: Id
    after_sequence: Annotated[int, Meta(ge=0)] = 0
    limit: Annotated[int, Meta(ge=1, le=MAX_PAGE)] = 200


@group.method("sessions/entries", EntriesParams, EntriesPage, "read")
def entries(call: Call, p: EntriesParams) -> Json:
    """Entries of every branch with a sequence above `after_sequence`, in sequence order.

    Pages: pass the answer's `next_after` as the next `after_sequence`. After a
    reconnect, `after_sequence` = the last sequence seen reads exactly what was
    missed; `head` is the head when the page was read.
    """
    forest = call.forest
    head = forest.head(p.session_id)
    page = forest.entries_after(p.session_id, p.after_sequence, p.limit)
    refuse_past(page, call.server.limits.max_response, "the page's entries")
    more = len(page) == p.limit
    next_after = page[-1].sequence if more else None
    return EntriesPage(p.session_id, head, [e.to_json() for e in page], next_after).to_json()


class LogParams(Params):
    session_id: Id
    # Only the last `limit` entries of the path (read in time proportional to it).
    limit: (
        Annotated[
            int,
            Meta(
                ge=1,
                description=f"the last this many entries (default and null: {LOG_DEFAULT}; "
                "when more come before, the first returned has a parent: read those as "
                "the path to it, `end`)",
            ),
        ]
        | None
    ) = None
    # The path to this entry instead of the head's (a branch read without moving the
    # head; a page of earlier entries is the path to the first shown one's parent).
    end: Id | None = None


@group.method("sessions/log", LogParams, list[LogEntryJson], "read")
def log(call: Call, p: LogParams) -> list[LogEntryJson]:
    """The active path, or the path to `end` (its last `limit` entries), root first,
    each entry marked `diverged` (as `forest log --json`). The head is never moved."""
    limit = p.limit if p.limit is not None else LOG_DEFAULT  # never the whole path unasked
    return call.forest.log_document(p.session_id, limit, p.end, call.server.limits.max_response)


class CompareParams(Params):
    session_id: Id
    a: Id
    b: Id


@group.method("sessions/compare", CompareParams, Compare, "read")
def compare(call: Call, p: CompareParams) -> Json:
    """Two branches (the paths to entries `a` and `b`) from their common ancestor: each
    side's later entries, their turns aligned, and — when both ends are stamped and the
    session's directory is a repository here — `git diff` between the stamped HEADs and
    whether their uncommitted states differ (as `forest diff`)."""
    limit = call.server.limits.max_response
    return call.forest.compare(p.session_id, p.a, p.b, limit).to_json()


class PreviewsParams(Params):
    session_id: Id
    entry_ids: Annotated[list[Id], Meta(min_length=1, max_length=MAX_PREVIEWS)]


@group.method("sessions/previews", PreviewsParams, dict[str, str], "read")
def previews(call: Call, p: PreviewsParams) -> dict[str, str]:
    """A short line of text per entry (its text, else its tool call and key argument):
    what a forest node shows."""
    return call.forest.previews(p.session_id, p.entry_ids)


class SnapshotParams(Params):
    session_id: Id
    entry: Id | None = None


@group.method("sessions/forest_snapshot", SnapshotParams, Snapshot, "read")
def forest_snapshot(call: Call, p: SnapshotParams) -> Json:
    """Every node, the active path, head, tips, checkpoints and divergence, read at once.

    Divergence compares `entry`'s stamp (default: the head's) with the worktree now.
    """
    return call.forest.snapshot(p.session_id, p.entry).to_json()


@group.method("sessions/project", SessionParams, list[Message], "read")
def project_session(call: Call, p: SessionParams) -> list[Message]:
    """The provider-neutral context of the active branch (what a model would be sent)."""
    return call.forest.project(p.session_id, call.server.limits.max_response)


class StatusParams(Params):
    session_id: Id
    entry_id: Id | None = None


@group.method("sessions/status", StatusParams, Divergence, "read")
def status(call: Call, p: StatusParams) -> Json:
    """Whether the entry's worktree stamp (default: the head's) matches the worktree now."""
    return call.forest.divergence(p.session_id, p.entry_id).to_json()
