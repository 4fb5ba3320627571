"""The facade's model side: deep search, and a session's context as a model is sent it.

`Forest` is a `ModelFacade`: the surfaces (CLI, server, integrations) reach the
deep-search tier (deep.py), projection (projection.py) and the providers'
renderings (render_providers.py) only through these methods, never by
importing those modules (the "surfaces" import contract, pyproject.toml). The
providers themselves (configuration, the client cache, streaming a reply)
stay the surfaces' to drive: `sessionforest.providers`.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .model import refuse_past

if TYPE_CHECKING:
    from .deep import DeepSearch, Prepared, Prestarts
    from .model import Entry
    from .projection import Message
    from .providers import Clients, ProviderConfig
    from .wire import UsageRecordJson

# deep.py (and the SDK-facing modules behind it) load on the first deep search, not
# with the facade: a CLI call that never asks a model never pays for them.
_LAZY = {"DeepSearch": "deep", "Prepared": "deep", "Prestarts": "deep", "Message": "projection"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __package__), name)


__all__ = ["DeepSearch", "Message", "ModelFacade", "Prepared", "Prestarts"]


class ModelFacade:
    """The deep-search and model-context half of `Forest`."""

    if TYPE_CHECKING:  # Forest's

        def active_path(self, session_id: str, limit: int | None = None) -> list[Entry]: ...

    def project(self, session_id: str, max_bytes: int | None = None) -> list[Message]:
        """The provider-neutral context of the active branch, root first (what a model
        would be sent; fails closed, projection.py). `max_bytes`: TooLarge, before
        decoding, when the path's entries' stored JSON is larger."""
        from .projection import project_entries

        path = self.active_path(session_id)
        if max_bytes is not None:
            refuse_past(path, max_bytes, "the active path's entries")
        return project_entries(session_id, path)

    def model_context(self, session_id: str, provider: str) -> tuple[Any, Sequence[Any]]:
        """The active branch rendered for `provider`'s SDK: (system, turns). Anthropic
        takes the system prompt apart; OpenAI's Responses API as input items (no system)."""
        from .render_providers import to_anthropic, to_openai

        messages = self.project(session_id)
        if provider == "anthropic":
            rendered = to_anthropic(messages, session_id=session_id)
            return rendered.get("system"), rendered["messages"]
        return None, to_openai(messages, "responses", session_id=session_id)

    def deep_search(
        self,
        query: str,
        config: ProviderConfig | None,
        *,
        now: datetime | None = None,
        limit: int = 8,
        harness: str | None = None,
        prepared: Prepared | None = None,
        clients: Clients | None = None,
    ) -> DeepSearch:
        """find-a-chat with the model tier (docs/deep-search.md): the index and its gate
        first; a model only when the gate is unsure and `config` names one. `prepared`:
        a pre-started search (`Prestarts.take`); `clients`: the SDK client cache."""
        from . import deep

        return deep.deep_search(
            self, query, config, now=now, limit=limit, harness=harness,
            prepared=prepared, clients=clients,
        )  # fmt: skip

    def deep_usage(self) -> list[UsageRecordJson]:
        """The model usage every deep search recorded, oldest first."""
        from . import deep

        return deep.usage(self)
