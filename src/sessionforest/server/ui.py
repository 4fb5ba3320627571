"""The web UI: the React app built from `web/` into `static/`, served at `/`.

The bundle is built by `npm run build` in `web/` and committed here, so
`pip install 'sessionforest[server]'` gives a working UI without Node;
tests/server/test_ui_bundle.py rebuilds it and fails when the committed copy is
stale. `python -m sessionforest.server.ui` prints the OpenRPC document the web
client's types are generated from (web/src/api/openrpc.json).
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).with_name("static")


def ui_routes() -> list[Mount]:
    """`/` and `/assets/*` from the shipped bundle (none when it is absent)."""
    if not (STATIC / "index.html").is_file():
        return []
    return [Mount("/", app=StaticFiles(directory=STATIC, html=True), name="ui")]


def openrpc_text() -> str:
    """The OpenRPC document as web/src/api/openrpc.json holds it (sorted, indented)."""
    from .api import METHODS
    from .openrpc import document

    return (
        orjson.dumps(document(METHODS), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
        + "\n"
    )


if __name__ == "__main__":  # pragma: no cover - a developer's tool
    sys.stdout.write(openrpc_text())
