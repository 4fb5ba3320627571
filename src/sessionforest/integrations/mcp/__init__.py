"""The MCP server (extra `sessionforest[mcp]`): `forest mcp`, or in Python

    from sessionforest.integrations.mcp import build
    server = build(Forest.open("forest.db"))      # an mcp.server.MCPServer

server.py lists the tools and resources; reading.py bounds and redacts them.
"""

from __future__ import annotations

from .server import build, serve

__all__ = ["build", "serve"]
