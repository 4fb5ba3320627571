"""The web UI end to end: a real `forest serve` on a real SQLite store filled by the real
importers from ../shared/data, driven in Debian's headless Chromium through Playwright.

Screenshots go to build/screenshots/ (light and dark); the ones the README shows are
copied to docs/screenshots/ under the same names by hand after looking at them:
preview-light, claude-code-light, compare-dark, phone-chat-dark (test_ui_daily.py) and
streaming-light (test_ui_e2e.py).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from sessionforest import Forest
from sessionforest.adapters import AnthropicStreamAdapter, OpenAIResponsesStreamAdapter

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
WEB = ROOT / "web"
SHOTS = ROOT / "build" / "screenshots"
ADAPTER_FIXTURES = ROOT / "tests" / "adapters" / "fixtures"
FOREST_CLI = str(Path(sys.executable).parent / "forest")
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
QUESTION = "What will the weather be in Paris tomorrow?"
# The machine is shared (2 cores): waits are generous; nothing here is a timing claim
# (the figures are in benchmarks/bench_ui.py).
expect.set_options(timeout=15_000)


def _replay(adapter: Any, name: str) -> Any:
    import json

    lines = (ADAPTER_FIXTURES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    result = None
    for line in lines:
        result = adapter.feed(json.loads(line)) or result
    return result or adapter.close()


def record_equivalent(forest: Forest, provider: str) -> str:
    """The same conversation streamed by one provider (as tests/adapters records it)."""
    adapter = {"anthropic": AnthropicStreamAdapter, "openai": OpenAIResponsesStreamAdapter}[
        provider
    ]
    sid = forest.create_session(title=f"weather via {provider}", harness=f"{provider}-harness")
    forest.append(sid, "user.message", {"content": [{"type": "text", "text": QUESTION}]})
    first = _replay(adapter(forest, sid), f"{provider}_equiv_turn1")
    call = first.payload["content"][-1]
    forest.append(
        sid,
        "tool.completed",
        {"call_id": call["id"], "name": call["name"], "output": "18°C, sunny"},
    )
    _replay(adapter(forest, sid), f"{provider}_equiv_turn2")
    return sid


def big_chat(forest: Forest, entries: int = 10_000, branches: int = 300) -> str:
    """A chat of `entries` entries: one long chain and `branches` two-entry side branches."""
    sid = forest.create_session(title="the big one", harness="bench")
    chain = entries - 2 * branches
    ids: list[str] = []
    parent = None
    while len(ids) < chain:
        n = min(1000, chain - len(ids))
        items = [
            ("user.message" if (len(ids) + i) % 2 == 0 else "assistant.message",
             {"content": [{"type": "text", "text": f"turn {len(ids) + i}"}]}, None)
            for i in range(n)
        ]  # fmt: skip
        made = forest.append_many(sid, items, parent)
        ids += [e.id for e in made]
        parent = ids[-1]
    step = chain // branches
    for b in range(branches):
        forest.append_many(
            sid,
            [("user.message", {"content": [{"type": "text", "text": f"side {b}"}]}, None),
             ("assistant.message", {"content": [{"type": "text", "text": f"side reply {b}"}]},
              None)],
            ids[b * step],
        )  # fmt: skip
    forest.move_head(sid, ids[-1])
    return sid


@pytest.fixture(scope="session")
def ui_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One store for the module: imported chats, the demo, both providers' recordings."""
    db = tmp_path_factory.mktemp("ui") / "store.db"
    for path in sorted((DATA / "chatgpt").glob("*.json")):
        _cli(db, "import", "chatgpt", str(path))
    _cli(db, "import", "claude-code", str(DATA / "claude-code"))
    for path in sorted((DATA / "pi").glob("*.jsonl")):
        _cli(db, "import", "pi", str(path))
    _cli(db, "demo")
    forest = Forest.open(db)
    try:
        demo = next(s for s in forest.sessions() if s.harness == "demo")
        info = {
            "db": db,
            "demo": demo.id,
            "anthropic": record_equivalent(forest, "anthropic"),
            "openai": record_equivalent(forest, "openai"),
            "big": big_chat(forest),
        }
    finally:
        forest.close()
    return info


def _cli(db: Path, *args: str) -> None:
    subprocess.run([FOREST_CLI, "--db", str(db), *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Chromium for a module's tests. Not for the whole run: while Playwright's sync API is
    open its event loop counts as running in this thread, and a later module of the same
    worker (pytest-xdist) that calls asyncio.run() would fail."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: scripts/test installs Debian's chromium")
    with sync_playwright() as p:
        # Playwright gives each launch a fresh, temporary --user-data-dir.
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page_for(browser: Browser) -> Iterator[Callable[..., Page]]:
    contexts = []

    def make(
        url: str,
        scheme: str = "light",
        width: int = 1400,
        height: int = 860,
        before: Callable[[Page], None] | None = None,
    ) -> Page:
        ctx = browser.new_context(color_scheme=scheme, viewport={"width": width, "height": height})
        contexts.append(ctx)
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.set_default_timeout(10_000)
        if before is not None:  # routes that must be in place before the page loads
            before(page)
        page.goto(url)
        page.errors = errors  # type: ignore[attr-defined]
        return page

    yield make
    for ctx in contexts:
        ctx.close()


def shot(page: Page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def rpc(url: str, method: str, params: dict[str, Any]) -> Any:
    reply = httpx.post(
        f"{url}/rpc", json={"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
    ).json()
    assert "error" not in reply, reply
    return reply["result"]


def axe(page: Page) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it is now."""
    # Evaluated over the DevTools protocol, not added as a <script>: the server's
    # Content-Security-Policy refuses inline scripts, as it should.
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate((WEB / "node_modules" / "axe-core" / "axe.min.js").read_text())
    result = page.evaluate("async () => (await axe.run(document)).violations")
    return [v for v in result if v["impact"] in ("serious", "critical")]


__all__ = ["SHOTS", "axe", "rpc", "shot", "shutil"]
