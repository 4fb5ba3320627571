"""The documents surfaces print, built once for all of them: snapshot, log, tree, marks.

The CLI, the JSON-RPC server and the UI show the same things because they ask
the facade for these, never assembling them from store reads themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .gitstamp import Divergence, compare
from .model import Entry, Snapshot
from .store.base import Store
from .worktree import Worktrees

# What `tree --json` keeps of the snapshot.
TREE_KEYS = ("head", "active_path", "tips", "checkpoints", "nodes", "divergence")


def snapshot_of(
    store: Store, worktrees: Worktrees, session_id: str, entry: str | None = None
) -> Snapshot:
    """The tree skeleton, active path, tips, checkpoints and the divergence of `entry`
    (default: the head), read in one snapshot so they agree."""
    with store.reading():
        head = store.head(session_id)
        nodes = store.skeleton(session_id)
        path = [e.id for e in store.active_path(session_id)]
        checkpoints = [(c.id, str(c.payload["label"])) for c in store.checkpoints(session_id)]
        selected = entry or head
        stamp = store.entry(session_id, selected).stamp if selected is not None else None
    parents = {n.parent_id for n in nodes}
    tips = [n.id for n in nodes if n.id not in parents]
    if selected is None:
        divergence = Divergence("unknown", reason="session has no entries")
    else:
        divergence = worktrees.compare(session_id, stamp)
    return Snapshot(session_id, head, selected, tuple(nodes), tuple(path), tuple(tips),
                    tuple(checkpoints), divergence)  # fmt: skip


def divergence_mark(current: dict[str, Any] | None, entry: Entry) -> str | None:
    """`[diverged: head|dirty|both]` when a stamped entry's worktree has moved on.

    Callers take `current` once per listing (one git status); unstamped entries
    and sessions with no repository get no mark: unknown is not diverged.
    """
    if current is None:
        return None
    what = compare(entry.stamp, current, "").what
    return f"[diverged: {what}]" if what else None


def divergence_marks(
    worktrees: Worktrees, session_id: str, entries: Iterable[Entry]
) -> dict[str, str]:
    current = worktrees.current(session_id)
    marks = {e.id: divergence_mark(current, e) for e in entries}
    return {entry_id: mark for entry_id, mark in marks.items() if mark}


def log_document(
    store: Store, worktrees: Worktrees, session_id: str, limit: int | None = None
) -> list[dict[str, Any]]:
    """The active path (its last `limit` entries), root first, each entry's JSON with
    `diverged`."""
    path = store.active_path(session_id, limit)
    marks = divergence_marks(worktrees, session_id, path)
    return [{**e.to_json(), "diverged": e.id in marks} for e in path]


def tree_document(snapshot: Snapshot) -> dict[str, Any]:
    """The `tree --json` document: the snapshot's keys a tree drawing needs."""
    document: dict[str, Any] = dict(snapshot.to_json())
    return {key: document[key] for key in TREE_KEYS}
