"""The LangGraph integration (extra `sessionforest[langgraph]`): checkpointers.

    from sessionforest.integrations.langgraph import ForestSaver
    graph = builder.compile(checkpointer=ForestSaver("forest.db"))

`ForestSaver` answers LangGraph's sync and async calls alike;
`AsyncForestSaver.from_conn_string(...)` is its async-context form. saver.py
says what each call does to the forest, index.py what a thread's session holds.
"""

from __future__ import annotations

from .saver import AsyncForestSaver, ForestSaver, session_id_for

__all__ = ["AsyncForestSaver", "ForestSaver", "session_id_for"]
