"""The whole JSON-RPC API: every group of methods, in the order rpc.discover lists them.

A new method goes into its area's module in `handlers/` (a new area: a new
module there with its own `Group`, named here); nothing registers on import.
"""

from __future__ import annotations

from . import openrpc
from .handlers import entries, feed, io, search, sessions, talk
from .registry import Registry

METHODS = Registry(
    sessions.group,
    entries.group,
    search.group,
    io.group,
    feed.group,
    openrpc.group,
    talk.group,
)
