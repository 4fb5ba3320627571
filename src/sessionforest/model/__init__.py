"""The model layer: frozen value types every other layer shares, and nothing else.

`value` (the Value base: a msgspec Struct whose encoding is its JSON),
`entries` (Entry, Node, Snapshot, visibility, schema versions), `sessions`
(SessionInfo, statuses, integrity reports), `trees` (workspace and agent
records) and `imports` (what importers consume and produce). It imports only
`errors`, `legacy`, `text` and `lazy`, so every layer above may import it. Each
name is loaded from its module on first use (PEP 562, `lazy.exports`): `forest sessions` needs
`SessionInfo`, never what importers consume.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import exports
from ..legacy import CURRENT_SCHEMA_VERSION, LEGACY_KINDS, SUPPORTED_SCHEMA_VERSIONS

_LAZY = {
    "Agent": "trees",
    "AgentRole": "trees",
    "Backlog": "sessions",
    "ChatReport": "imports",
    "ChatResult": "imports",
    "ChatSpec": "imports",
    "CheckReport": "sessions",
    "CheckpointRef": "entries",
    "Divergence": "entries",
    "Entry": "entries",
    "FollowReport": "imports",
    "ImportFailure": "imports",
    "ImportOutcome": "imports",
    "ImportReport": "imports",
    "Node": "entries",
    "PARENT_KIND": "trees",
    "Problem": "sessions",
    "RepairAction": "sessions",
    "RepairReport": "sessions",
    "SessionInfo": "sessions",
    "SessionSource": "sessions",
    "SessionStatus": "sessions",
    "SessionVisibility": "sessions",
    "SkippedLine": "imports",
    "Snapshot": "entries",
    "SnapshotNode": "entries",
    "StoredEntry": "imports",
    "StoredSession": "imports",
    "Transcript": "imports",
    "TreeItem": "trees",
    "Unrepaired": "sessions",
    "Visibility": "entries",
    "Workspace": "trees",
    "WorkspaceKind": "trees",
    "refuse_past": "entries",
}

if TYPE_CHECKING:
    from .entries import (
        CheckpointRef,
        Divergence,
        Entry,
        Node,
        Snapshot,
        SnapshotNode,
        Visibility,
        refuse_past,
    )
    from .imports import (
        ChatReport,
        ChatResult,
        ChatSpec,
        FollowReport,
        ImportFailure,
        ImportOutcome,
        ImportReport,
        SkippedLine,
        StoredEntry,
        StoredSession,
        Transcript,
    )
    from .sessions import (
        Backlog,
        CheckReport,
        Problem,
        RepairAction,
        RepairReport,
        SessionInfo,
        SessionSource,
        SessionStatus,
        SessionVisibility,
        Unrepaired,
    )
    from .trees import PARENT_KIND, Agent, AgentRole, TreeItem, Workspace, WorkspaceKind

__all__ = [
    "CURRENT_SCHEMA_VERSION",
    "LEGACY_KINDS",
    "PARENT_KIND",
    "SUPPORTED_SCHEMA_VERSIONS",
    "Agent",
    "AgentRole",
    "Backlog",
    "ChatReport",
    "ChatResult",
    "ChatSpec",
    "CheckReport",
    "CheckpointRef",
    "Divergence",
    "Entry",
    "FollowReport",
    "ImportFailure",
    "ImportOutcome",
    "ImportReport",
    "Node",
    "Problem",
    "RepairAction",
    "RepairReport",
    "SessionInfo",
    "SessionSource",
    "SessionStatus",
    "SessionVisibility",
    "SkippedLine",
    "Snapshot",
    "SnapshotNode",
    "StoredEntry",
    "StoredSession",
    "Transcript",
    "TreeItem",
    "Unrepaired",
    "Visibility",
    "Workspace",
    "WorkspaceKind",
    "refuse_past",
]


__getattr__, __dir__ = exports(__name__, _LAZY, __all__)
