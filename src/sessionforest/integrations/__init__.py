"""Framework integrations, each behind its own extra and over the `Forest` facade:

- `openai_agents`: `ForestSession`, an OpenAI Agents SDK session (`[openai-agents]`);
- `langgraph`: `ForestSaver` / `AsyncForestSaver`, LangGraph checkpointers (`[langgraph]`);
- `claude_agent`: `ForestSessionStore`, a Claude Agent SDK session store (`[claude-agent]`);
- `mcp`: the `forest mcp` server, built with the official MCP SDK (`[mcp]`).

Importing this package imports no framework; each subpackage needs its extra.
"""
