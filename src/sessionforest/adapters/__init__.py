"""Provider stream events -> durable forest entries, one adapter per provider format.

Adapters take raw streaming events as JSON dicts (or SDK event objects) and
never import a provider SDK; deltas are assembled here and never persisted.
"""

from .anthropic import AnthropicStreamAdapter
from .base import AssembledMessage, Recorder, StreamAdapter
from .openai import OpenAIResponsesStreamAdapter

__all__ = [
    "AnthropicStreamAdapter",
    "AssembledMessage",
    "OpenAIResponsesStreamAdapter",
    "Recorder",
    "StreamAdapter",
]
