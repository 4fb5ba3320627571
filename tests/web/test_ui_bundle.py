"""The shipped web bundle and the typed client stay in step with their sources.

`pip install sessionforest[server]` serves src/sessionforest/server/static without
Node, so that copy is committed; these tests rebuild it from web/ and fail when it is
stale, and fail when the OpenRPC document the client's types are generated from
(web/src/api/openrpc.json) no longer equals what the server publishes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from sessionforest.server.ui import STATIC, openrpc_text

WEB = Path(__file__).resolve().parents[2] / "web"


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_the_client_is_generated_from_the_servers_own_openrpc_document() -> None:
    committed = (WEB / "src" / "api" / "openrpc.json").read_text(encoding="utf-8")
    assert committed == openrpc_text(), (
        "web/src/api/openrpc.json is stale: run `python -m sessionforest.server.ui > "
        "web/src/api/openrpc.json && npm --prefix web run build`"
    )


def test_the_shipped_bundle_is_what_web_builds(tmp_path: Path) -> None:
    types = WEB / "src" / "api" / "types.gen.ts"
    before = types.read_bytes()
    env = {**os.environ, "SF_UI_OUT": str(tmp_path / "static")}
    # gen + tsc (the client type-checks against the generated types) + vite build
    done = subprocess.run(["npm", "run", "build"], cwd=WEB, env=env, capture_output=True,
                          text=True)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert types.read_bytes() == before, "web/src/api/types.gen.ts was stale (now regenerated)"
    built, shipped = _files(tmp_path / "static"), _files(STATIC)
    assert sorted(built) == sorted(shipped), "run `npm --prefix web run build` and commit"
    for name, content in built.items():
        assert shipped[name] == content, f"{name} differs: run `npm --prefix web run build`"
