"""The Claude Agent SDK integration (extra `sessionforest[claude-agent]`).

    from sessionforest.integrations.claude_agent import ForestSessionStore
    options = ClaudeAgentOptions(session_store=ForestSessionStore("forest.db"))

store.py says how a session is kept (exactly, for the SDK) and shown (as the
Claude Code importer reads it, for a person).
"""

from __future__ import annotations

from .store import ForestSessionStore, session_id_for

__all__ = ["ForestSessionStore", "session_id_for"]
