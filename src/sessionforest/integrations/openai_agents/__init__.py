"""The OpenAI Agents SDK integration (extra `sessionforest[openai-agents]`).

    from sessionforest.integrations.openai_agents import ForestSession
    result = await Runner.run(agent, "hi", session=ForestSession("chat-1", "forest.db"))

See session.py for what each Session method does to the tree, items.py for
how SDK items map to forest kinds.
"""

from __future__ import annotations

from .session import ForestSession

__all__ = ["ForestSession"]
