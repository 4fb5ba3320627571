"""The documents surfaces print, built once for all of them: snapshot, log, tree, marks.

The CLI, the JSON-RPC server and the UI show the same things because they ask
the facade for these, never assembling them from store reads themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

from . import compare, wrappers
from .entrytext import OPENING_CHARS, entry_text
from .gitstamp import Divergence
from .gitstamp import compare as compare_stamps
from .model import CheckpointRef, Entry, SessionInfo, Snapshot, SnapshotNode, refuse_past
from .store.base import Store, TreeStore
from .wire import ChatCounts, Compare, CompareGitJson, CompareRow, LogEntryJson, WorkerChat, Workers
from .worktree import Worktrees

# How many of a worker chat's first entries are read for the prompt it started from.
WORKER_SCAN = 20
# A preview's length, and the tool arguments that say what a call did (the UI's
# transcript.keyArgument reads the same names).
PREVIEW_CHARS = 120
KEY_ARGUMENTS = (
    "command",
    "cmd",
    "file_path",
    "notebook_path",
    "pattern",
    "path",
    "query",
    "url",
    "description",
)

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
    tips = tuple(n.id for n in nodes if n.id not in parents)
    if selected is None:
        divergence = Divergence("unknown", reason="session has no entries")
    else:
        divergence = worktrees.compare(session_id, stamp)
    active = set(path)
    # Unpacked, not read by attribute: a 10,000-node tree is 60,000 reads fewer.
    shown = tuple(
        SnapshotNode(node_id, parent_id, sequence, kind, visibility, node_id in active)
        for node_id, parent_id, sequence, kind, visibility, _version in nodes
    )
    marks = tuple(CheckpointRef(entry_id, label) for entry_id, label in checkpoints)
    return Snapshot(session_id, head, selected, tuple(path), tips, marks, shown, divergence)


def divergence_mark(current: dict[str, Any] | None, entry: Entry) -> str | None:
    """`[diverged: head|dirty|both]` when a stamped entry's worktree has moved on.

    Callers take `current` once per listing (one git status); unstamped entries
    and sessions with no repository get no mark: unknown is not diverged.
    """
    if current is None:
        return None
    what = compare_stamps(entry.stamp, current, "").what
    return f"[diverged: {what}]" if what else None


def divergence_marks(
    worktrees: Worktrees, session_id: str, entries: Iterable[Entry]
) -> dict[str, str]:
    current = worktrees.current(session_id)
    marks = {e.id: divergence_mark(current, e) for e in entries}
    return {entry_id: mark for entry_id, mark in marks.items() if mark}


def log_document(
    store: Store,
    worktrees: Worktrees,
    session_id: str,
    limit: int | None = None,
    end: str | None = None,
    max_bytes: int | None = None,
) -> list[LogEntryJson]:
    """The active path (or the path to `end`; its last `limit` entries), root first, each
    entry's JSON with `diverged`. `max_bytes`: TooLarge when the entries' stored JSON
    alone is larger, before any of it is decoded (the document would be larger still)."""
    path = (
        store.active_path(session_id, limit)
        if end is None
        else store.path_to(session_id, end, limit)
    )
    if max_bytes is not None:
        refuse_past(path, max_bytes, "the path's entries")
    return _marked(worktrees, session_id, path)


def _marked(worktrees: Worktrees, session_id: str, path: Sequence[Entry]) -> list[LogEntryJson]:
    """Each entry's JSON with `diverged`, and `wrapper` on a user message the harness
    wrote (wrappers.label: a command, an IDE selection, a reminder), so every surface
    shows it as a label, not as something the person said."""
    marks = divergence_marks(worktrees, session_id, path)
    out: list[LogEntryJson] = []
    for e in path:
        doc: LogEntryJson = {**e.to_json(), "diverged": e.id in marks}  # type: ignore[typeddict-item]
        if e.kind == "user.message":
            found = wrappers.label(_user_text(e.payload))
            if found:
                doc["wrapper"] = found
        out.append(doc)
    return out


def _user_text(payload: dict[str, Any]) -> str:
    content = payload.get("content")
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )


def compare_document(
    store: Store,
    worktrees: Worktrees,
    session_id: str,
    a: str,
    b: str,
    max_bytes: int | None = None,
) -> Compare:
    """`sessions/compare`, `forest diff`: see compare.py. `max_bytes`: TooLarge, before
    decoding, when the two branches' entries' stored JSON is larger."""
    with store.reading():
        path_a = store.path_to(session_id, a)
        path_b = store.path_to(session_id, b)
    shared = compare.common_prefix(path_a, path_b)
    tail_a, tail_b = path_a[shared:], path_b[shared:]
    if max_bytes is not None:
        refuse_past([*tail_a, *tail_b], max_bytes, "the branches' entries")
    turns_a, turns_b = compare.turns(tail_a), compare.turns(tail_b)
    rows = [
        CompareRow(
            [e.id for e in turns_a[i].entries] if i is not None else None,
            [e.id for e in turns_b[j].entries] if j is not None else None,
            same,
        )
        for i, j, same in compare.align(turns_a, turns_b)
    ]
    directory = worktrees.directory(session_id, recheck=True)
    git = compare.git_part(directory, path_a[-1].stamp, path_b[-1].stamp)
    return Compare(
        session_id, a, b, path_a[shared - 1].id if shared else None, shared,
        _marked(worktrees, session_id, tail_a), _marked(worktrees, session_id, tail_b),
        rows, cast(CompareGitJson, git),
    )  # fmt: skip


def workers_document(store: Store, trees: TreeStore, session_id: str) -> Workers:
    """The worker chats linked under `session_id` in the agent tree (each with the prompt
    it started from, so a task call can name its worker), and the chat it works for."""
    store.session(session_id)  # an unknown session is an error, not an empty answer
    agent = trees.agent_for_session(session_id)
    parent: SessionInfo | None = None
    workers: list[WorkerChat] = []
    if agent is not None and agent.role == "worker" and agent.parent_id is not None:
        parent = store.session(trees.agent(agent.parent_id).session_id)
    elif agent is not None and agent.role == "orchestrator":
        for worker in trees.agent_children(agent.id, False):
            info = store.session(worker.session_id)
            policy = worker.policy or {}
            workers.append(
                WorkerChat(
                    info.id,
                    info.title,
                    policy.get("agent_type"),
                    _first_prompt(store, info.id),
                    info.entry_count,
                    info.created_at,
                )
            )
    return Workers(parent, workers)


def _first_prompt(store: Store, session_id: str) -> str:
    """The first visible user message's text (what a task call handed its worker)."""
    for e in store.entries_after(session_id, 0, WORKER_SCAN):
        if e.kind == "user.message" and e.context_visibility != "hidden":
            return (entry_text(e.kind, e.payload) or "")[:OPENING_CHARS]
    return ""


def tree_document(snapshot: Snapshot) -> dict[str, Any]:
    """The `tree --json` document: the snapshot's keys a tree drawing needs."""
    document: dict[str, Any] = dict(snapshot.to_json())
    return {key: document[key] for key in TREE_KEYS}


def preview_text(kind: str, p: dict[str, Any], chars: int = PREVIEW_CHARS) -> str:
    """One short line saying what an entry is (a forest node's label and tooltip): its
    text, else its first tool call and key argument, else its result or label."""
    text = entry_text(kind, p) or ""
    content = p.get("content")
    if not text.strip() and isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_call":
                args = block.get("input")
                key = next(
                    (args[k] for k in KEY_ARGUMENTS if isinstance(args, dict)
                     and isinstance(args.get(k), str)),
                    "",
                )  # fmt: skip
                text = f"{block.get('name')} {key}"
                break
            if isinstance(block, dict) and block.get("type") == "thinking":
                text = f"(thinking) {block.get('thinking') or ''}"
    if kind == "tool.completed":
        output = p.get("output")
        text = "→ " + ((output if isinstance(output, str) else entry_text("user.message", {
            "content": output}) or "") or "(empty)")  # fmt: skip
    text = " ".join(text[: chars * 4].split())
    return text if len(text) <= chars else text[: chars - 1] + "…"


def previews(store: Store, session_id: str, entry_ids: Sequence[str]) -> dict[str, str]:
    """`preview_text` of each entry, read in one snapshot."""
    with store.reading():
        found = [store.entry(session_id, i) for i in dict.fromkeys(entry_ids)]
    return {e.id: preview_text(e.kind, e.payload) for e in found}


def chat_counts(store: Store, session_ids: Sequence[str]) -> list[ChatCounts]:
    """Messages and branches of each chat, read in one snapshot."""
    with store.reading():
        return [
            ChatCounts(sid, store.messages(sid), store.branches(sid))
            for sid in dict.fromkeys(session_ids)
        ]
