"""The web UI under the server's Content-Security-Policy, in real headless Chromium.

The page must work with nothing loaded from elsewhere (no CSP violation while it
lists, opens, searches and goes live), must refuse to be framed by another
page (clickjacking), and a remote image put into it loads nothing (a tracking
pixel in a transcript learns nothing). The "remote" server is a real HTTP
server on another loopback port that counts every request it gets.
"""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from playwright.sync_api import Page, expect

from server.conftest import Running, start
from sessionforest import Forest

# Every violation the page reports, kept where the test can read it.
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


class _Counter(http.server.BaseHTTPRequestHandler):
    """Counts what it is asked for; `/frame?URL` is a page that frames URL."""

    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        kind = "image/gif"
        body = b"GIF89a"
        if self.path.startswith("/frame?"):
            target = self.path.split("?", 1)[1]
            kind = "text/html"
            body = f'<html><body><iframe id="ui" src="{target}" width="800" height="600">' \
                   "</iframe></body></html>".encode()  # fmt: skip
        else:
            type(self).hits.append(self.path)
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def remote() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server standing for a transcript author's: (its URL, requests seen)."""
    hits: ClassVar[list[str]] = []
    handler = type("Counter", (_Counter,), {"hits": hits})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def small(tmp_path: Path, remote: tuple[str, list[str]]) -> Iterator[Running]:
    db = tmp_path / "store.db"
    with Forest.open(db) as forest:
        sid = forest.create_session("pixel chat", "test")
        forest.append(sid, "user.message", {"content": [{"type": "text", "text": "hello"}]})
        text = f"Here you go ![logo]({remote[0]}/pixel.gif?reader=1) and **bold** text"
        forest.append(sid, "assistant.message", {"content": [{"type": "text", "text": text}]})
    running = start(db)
    yield running
    assert running.stop() == 0


def _violations(page: Page) -> list[str]:
    return list(page.evaluate("window.__violations"))


def test_the_ui_works_under_the_policy(
    small: Running, page_for: Callable[..., Page], remote: tuple[str, list[str]]
) -> None:
    page = page_for(small.url + "/", before=lambda p: p.add_init_script(WATCH))
    nav = page.get_by_role("navigation", name="Chats")
    expect(nav).to_be_visible()
    nav.get_by_role("button", name=re.compile("pixel chat")).first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("pixel chat")
    expect(page.get_by_role("status", name="Live updates: live")).to_be_visible()
    expect(page.get_by_role("region", name="Transcript")).to_contain_text("bold")
    search = page.get_by_role("searchbox").first
    search.fill("hello")
    expect(nav.get_by_role("button", name=re.compile("pixel chat")).first).to_be_visible()
    page.wait_for_timeout(500)  # anything the page loads late has had its chance
    # The markdown image pointed at the remote server: nothing was fetched from it, and
    # whatever the page tried to load from elsewhere was that image and nothing else.
    assert remote[1] == []
    for violation in _violations(page):
        assert violation.startswith("img-src") and remote[0] in violation, violation
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_remote_image_put_into_the_page_loads_nothing(
    small: Running, page_for: Callable[..., Page], remote: tuple[str, list[str]]
) -> None:
    page = page_for(small.url + "/", before=lambda p: p.add_init_script(WATCH))
    expect(page.get_by_role("navigation", name="Chats")).to_be_visible()
    page.evaluate(
        """(url) => { const img = document.createElement('img'); img.src = url;
                      document.body.appendChild(img); }""",
        f"{remote[0]}/injected.gif",
    )
    page.wait_for_function("window.__violations.length > 0")
    assert any(v.startswith("img-src") for v in _violations(page))
    assert remote[1] == []


def test_another_page_cannot_frame_the_ui(
    small: Running, page_for: Callable[..., Page], remote: tuple[str, list[str]]
) -> None:
    # A page of another origin on this machine (another port) frames the UI. Before:
    # the framed UI loaded and worked (clicks could drive it).
    page = page_for(f"{remote[0]}/frame?{small.url}/")
    page.wait_for_load_state("load")
    page.wait_for_timeout(2000)  # what the frame would render has had its chance
    frame = next(f for f in page.frames if f is not page.main_frame)
    # Refused by frame-ancestors / X-Frame-Options: the frame never holds the app.
    assert frame.url.startswith("chrome-error:"), frame.url
    assert page.frame_locator("#ui").get_by_role("navigation", name="Chats").count() == 0
    # The same page framing itself still works: the refusal is the UI's own.
    assert page.main_frame.url.startswith(remote[0])
