"""The model layer: frozen value types every other layer shares, and nothing else.

`value` (the Value base: a msgspec Struct whose encoding is its JSON),
`entries` (Entry, Node, Snapshot, visibility, schema versions), `sessions`
(SessionInfo, statuses, integrity reports), `trees` (workspace and agent
records) and `imports` (what importers consume and produce). It imports only
`errors`, `legacy` and `text`, so every layer above may import it.
"""

from ..legacy import CURRENT_SCHEMA_VERSION, LEGACY_KINDS, SUPPORTED_SCHEMA_VERSIONS
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
