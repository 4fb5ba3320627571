"""sessionforest: AI-agent conversation history as a durable, branchable forest.

`Session` is the in-memory tree (yoagent-compatible JSONL); `Forest` is the
durable store of many sessions with movable heads, on SQLite by default.
"""

from .errors import (
    BackendUnavailable,
    DeltaRefused,
    DuplicateId,
    EmptySession,
    ForeignEntry,
    ForestError,
    HeadMoved,
    HistoryDiverged,
    ImportRejected,
    InvalidArgument,
    InvalidPayload,
    JsonlParseError,
    LegacyKind,
    MigrationError,
    SessionDamaged,
    SessionError,
    SessionExists,
    SessionQuarantined,
    StoreError,
    UnknownCheckpoint,
    UnknownEntry,
    UnknownKind,
    UnknownParent,
    UnknownSession,
    UnsupportedSchemaVersion,
)
from .model import CheckReport, Entry, Node, Problem, SessionInfo, SessionStatus, Visibility
from .session import Session, SessionEntry
from .store.sqlite import Forest

__all__ = [
    "BackendUnavailable",
    "CheckReport",
    "DeltaRefused",
    "DuplicateId",
    "EmptySession",
    "Entry",
    "ForeignEntry",
    "Forest",
    "ForestError",
    "HeadMoved",
    "HistoryDiverged",
    "ImportRejected",
    "InvalidArgument",
    "InvalidPayload",
    "JsonlParseError",
    "LegacyKind",
    "MigrationError",
    "Node",
    "Problem",
    "Session",
    "SessionDamaged",
    "SessionEntry",
    "SessionError",
    "SessionExists",
    "SessionInfo",
    "SessionQuarantined",
    "SessionStatus",
    "StoreError",
    "UnknownCheckpoint",
    "UnknownEntry",
    "UnknownKind",
    "UnknownParent",
    "UnknownSession",
    "UnsupportedSchemaVersion",
    "Visibility",
]
