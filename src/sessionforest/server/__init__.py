"""The JSON-RPC 2.0 server (`forest serve`): sessions/* over HTTP, WebSocket and stdio.

Needs the `[server]` extra (Starlette, uvicorn, websockets); importing this
package without it raises BackendUnavailable naming the pip command. The core
package never imports it. See docs/api.md for the methods.
"""

from __future__ import annotations

from ..errors import BackendUnavailable

try:
    import starlette  # noqa: F401
    import uvicorn  # noqa: F401
    import websockets  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised with the modules blocked
    raise BackendUnavailable("pip install 'sessionforest[server]'") from exc

from .serve import ServeOptions, run

__all__ = ["ServeOptions", "run"]
