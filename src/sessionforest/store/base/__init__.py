"""The contracts between the facade (`sessionforest.Forest`) and a storage backend.

A backend is a `Backend`: a `Store` (sessions, entries, heads, integrity), a
`TreeStore` (workspaces and agents), a `BulkStore` (importers' per-chat
writes, whole-session restore and dump) and a `SearchIndex` provider (the
primitives the search funnel ranks with). Everything that is not storage --
the clock, ids, payload validation, stamping, the search funnel, projection,
import mapping, output documents -- lives above, in the facade and the
backend-neutral `rules`, so a second backend implements only these. The
conformance suite (`tests/conformance/`) runs against every registered backend.

Errors: a backend raises only `ForestError`s (it wraps its driver's), from the
families in errors.py; every method documents the ones it raises.
"""

# The modules: values (sentinels, value types), store (Store, TreeStore), search
# (SearchIndex), bulk (BulkStore and friends), backend (Backend), maintenance (the
# backend's thread for the work behind its writes). Each name is loaded from its
# module on first use (PEP 562): a listing that needs the values and the store
# contract never loads the search, bulk or vector contracts.

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy import exports

_LAZY = {
    "AUTO": "values",
    "AgentLinks": "bulk",
    "AppendRequest": "values",
    "AppendState": "values",
    "Appended": "values",
    "Auto": "values",
    "Backend": "backend",
    "BulkStore": "bulk",
    "ChatEvidence": "search",
    "ChatKey": "search",
    "ChatRow": "search",
    "ChatWriter": "bulk",
    "CommitProbe": "backend",
    "DURABILITIES": "values",
    "EntryKey": "search",
    "EntryReader": "bulk",
    "EntryRow": "search",
    "FULL_TEXT": "maintenance",
    "FollowedSource": "sources",
    "GroupedAppend": "values",
    "Handoff": "handoffs",
    "HandoffStore": "handoffs",
    "HeadRow": "backend",
    "Landing": "search",
    "Maintenance": "maintenance",
    "NewEntry": "values",
    "NewSession": "values",
    "Pending": "vectors",
    "SearchIndex": "search",
    "SessionIndex": "search",
    "SourceStore": "sources",
    "Spaceless": "search",
    "Stamping": "values",
    "Store": "store",
    "Term": "search",
    "TreeStore": "store",
    "UNSET": "values",
    "UNSTAMPED": "values",
    "Unset": "values",
    "VECTORS": "maintenance",
    "VectorStore": "vectors",
    "parse_session_cursor": "values",
    "session_cursor": "values",
}

if TYPE_CHECKING:
    from .backend import (
        Backend,
        CommitProbe,
        HeadRow,
    )
    from .bulk import (
        AgentLinks,
        BulkStore,
        ChatWriter,
        EntryReader,
    )
    from .handoffs import (
        Handoff,
        HandoffStore,
    )
    from .maintenance import (
        FULL_TEXT,
        VECTORS,
        Maintenance,
    )
    from .search import (
        ChatEvidence,
        ChatKey,
        ChatRow,
        EntryKey,
        EntryRow,
        Landing,
        SearchIndex,
        SessionIndex,
        Spaceless,
        Term,
    )
    from .sources import (
        FollowedSource,
        SourceStore,
    )
    from .store import (
        Store,
        TreeStore,
    )
    from .values import (
        AUTO,
        DURABILITIES,
        UNSET,
        UNSTAMPED,
        Appended,
        AppendRequest,
        AppendState,
        Auto,
        GroupedAppend,
        NewEntry,
        NewSession,
        Stamping,
        Unset,
        parse_session_cursor,
        session_cursor,
    )
    from .vectors import (
        Pending,
        VectorStore,
    )

__all__ = [
    "AUTO",
    "DURABILITIES",
    "FULL_TEXT",
    "UNSET",
    "UNSTAMPED",
    "VECTORS",
    "AgentLinks",
    "AppendRequest",
    "AppendState",
    "Appended",
    "Auto",
    "Backend",
    "BulkStore",
    "ChatEvidence",
    "ChatKey",
    "ChatRow",
    "ChatWriter",
    "CommitProbe",
    "EntryKey",
    "EntryReader",
    "EntryRow",
    "FollowedSource",
    "GroupedAppend",
    "Handoff",
    "HandoffStore",
    "HeadRow",
    "Landing",
    "Maintenance",
    "NewEntry",
    "NewSession",
    "Pending",
    "SearchIndex",
    "SessionIndex",
    "SourceStore",
    "Spaceless",
    "Stamping",
    "Store",
    "Term",
    "TreeStore",
    "Unset",
    "VectorStore",
    "parse_session_cursor",
    "session_cursor",
]


__getattr__, __dir__ = exports(__name__, _LAZY, __all__)
