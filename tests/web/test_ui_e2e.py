"""The web UI in real headless Chromium against a real `forest serve` (see conftest.py)."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, WebSocketRoute, expect

from server.conftest import Running, start

from .conftest import FOREST_CLI, axe, rpc, shot


@pytest.fixture
def served(ui_store: dict[str, Any], tmp_path: Path) -> Iterator[Running]:
    db = tmp_path / "store.db"
    shutil.copy(ui_store["db"], db)
    running = start(db)
    yield running
    assert running.stop() == 0


def open_chat(page: Page, title: str) -> None:
    page.get_by_role("navigation", name="Chats").get_by_role(
        "button", name=re.compile(re.escape(title))
    ).first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text(title)


def transcript(page: Page) -> Any:
    return page.get_by_role("region", name="Transcript")


def test_the_page_is_served_at_the_root_and_lists_chats_newest_first(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    rpc(served.url, "sessions/end", {"session_id": ui_store["anthropic"]})
    rpc(served.url, "sessions/archive", {"session_id": ui_store["openai"]})
    page = page_for(served.url + "/")
    nav = page.get_by_role("navigation", name="Chats")
    expect(nav).to_be_visible()
    for title, status in (("weather via anthropic", "ended"), ("weather via openai", "archived")):
        if status == "archived":  # out of the list unless asked for
            expect(nav.get_by_role("button", name=re.compile(title))).to_have_count(0)
            nav.get_by_role("checkbox", name=re.compile(r"archived \(1\)")).check()
        row = nav.get_by_role("button", name=re.compile(title))
        expect(row.locator(".status-badge")).to_have_text(status)
    nav.get_by_role("checkbox", name=re.compile("archived")).uncheck()
    listed = rpc(served.url, "sessions/list", {"include_hidden": False, "order": "updated"})
    listed["sessions"] = [s for s in listed["sessions"] if s["status"] != "archived"]
    # Newest first; chats with no entries are left out of the list unless asked for.
    titles = [s["title"] for s in listed["sessions"] if s["entry_count"] > 0]
    buttons = nav.get_by_role("list", name="All chats").locator("button.chat")
    expect(buttons.first).to_contain_text(titles[0][:20])
    # Virtualised: only the rows in view (and a few more) are in the DOM.
    assert 0 < buttons.count() < len(titles)
    assert page.errors == []  # type: ignore[attr-defined]


def test_find_as_you_type_highlights_and_enter_opens_a_confident_winner(
    served: Running, page_for: Callable[..., Page]
) -> None:
    page = page_for(served.url + "/")
    box = page.get_by_role("searchbox", name="Find a chat")
    box.press_sequentially("OperationalErro", delay=40)
    box.press("r")
    results = page.get_by_role("list", name="Search results")
    expect(results.get_by_role("button")).to_have_count(1)
    expect(results.locator("mark").first).to_have_text(re.compile("OperationalError", re.I))
    box.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Fix 'database is locked' in the nightly import"
    )
    shot(page, "search-light")


def test_matches_from_outside_a_time_window_are_listed_under_a_note(
    served: Running, page_for: Callable[..., Page]
) -> None:
    # The imported chat is months old: "yesterday" (against the server's clock)
    # leaves no chat, so the match from any time follows under its own note.
    page = page_for(served.url + "/")
    box = page.get_by_role("searchbox", name="Find a chat")
    box.fill("OperationalError yesterday")
    results = page.get_by_role("list", name="Search results")
    expect(results.get_by_role("note")).to_have_text("No chat matched “yesterday”; from any time:")
    expect(results.locator("li.outside").get_by_role("button")).to_have_count(1)
    expect(results.locator("li.outside")).to_contain_text("database is locked")
    shot(page, "search-outside-window")
    assert page.errors == []  # type: ignore[attr-defined]


def test_enter_on_an_unsure_query_keeps_the_list_and_says_why(
    served: Running, page_for: Callable[..., Page]
) -> None:
    page = page_for(served.url + "/")
    box = page.get_by_role("searchbox", name="Find a chat")
    box.fill("python error")  # issue 12's calibrated gate: a narrow lead
    results = page.get_by_role("list", name="Search results")
    expect(results.get_by_role("button").first).to_be_visible()
    box.press("Enter")
    expect(page.locator("#search-status")).to_contain_text("Not sure")
    expect(page.locator("#search-status")).to_contain_text("leads the next")
    expect(page.get_by_role("heading", level=1)).to_have_text("Open a chat")
    expect(results.get_by_role("button").first).to_be_visible()


def test_a_stale_search_answer_never_overwrites_a_newer_one(
    served: Running, page_for: Callable[..., Page]
) -> None:
    # As-you-type goes over the WebSocket (`prestart: true`): hold the first query's
    # message there and send it to the server only after the newer one was answered.
    held: list[str] = []
    to_server: list[Any] = []

    def route(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()
        to_server.append(server)

        def from_page(message: str | bytes) -> None:
            text = message if isinstance(message, str) else message.decode()
            if "search_chats" in text and "BeautifulSoup" in text and not held:
                held.append(text)
                return
            server.send(message)

        ws.on_message(from_page)

    page = page_for(served.url + "/", before=lambda p: p.route_web_socket("**/ws", route))
    expect(page.get_by_text("● live")).to_be_visible()
    box = page.get_by_role("searchbox", name="Find a chat")
    box.fill("BeautifulSoup")
    page.wait_for_timeout(400)
    assert held, "the first search was sent over the WebSocket"
    assert '"prestart": true' in held[0].replace('":true', '": true')
    box.fill("OperationalError")
    results = page.get_by_role("list", name="Search results")
    expect(results.get_by_role("button")).to_have_count(1)
    expect(results).to_contain_text("database is locked")
    to_server[-1].send(held[0])
    page.wait_for_timeout(500)
    expect(results).to_contain_text("database is locked")
    expect(results).not_to_contain_text("BeautifulSoup")


def test_transcript_renders_markdown_tools_thinking_hidden_and_states(
    served: Running, page_for: Callable[..., Page]
) -> None:
    page = page_for(served.url + "/")
    open_chat(page, "Fix 'database is locked' in the nightly import")
    t = transcript(page)
    expect(t.locator("article.msg.user").first).to_contain_text("nightly import fails")
    expect(t.locator("code").first).to_be_visible()  # inline code from Markdown
    tool = t.locator("details.tool").first
    expect(tool).not_to_have_attribute("open", "")
    tool.locator(":scope > summary").click()
    expect(tool.locator("h4", has_text="Call")).to_be_visible()
    expect(tool.locator("h4", has_text="Result")).to_be_visible()
    expect(t.locator(".state-complete").first).to_contain_text("complete")


def test_anthropic_and_openai_recordings_render_the_same(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    page = page_for(served.url + "/")
    rendered = {}
    for provider in ("anthropic", "openai"):
        open_chat(page, f"weather via {provider}")
        # one card for the whole assistant turn: the call, its result and the answer
        expect(transcript(page).locator("article.msg.assistant")).to_have_count(1)
        rendered[provider] = page.evaluate(
            """() => {
              const t = document.querySelector('section.transcript').cloneNode(true);
              // raw provider notifications are the provider's own events: left out
              t.querySelectorAll('.hidden-entry, .meta').forEach((e) => e.remove());
              t.querySelectorAll('[data-entry]').forEach((e) => e.removeAttribute('data-entry'));
              t.querySelectorAll('[aria-label]').forEach((e) => e.removeAttribute('aria-label'));
              return t.innerHTML;
            }"""
        )
        shot(page, f"transcript-{provider}")
    assert "Tomorrow in Paris" in rendered["anthropic"]
    assert "get_forecast" in rendered["anthropic"]
    assert rendered["anthropic"] == rendered["openai"]


def test_a_side_branch_is_read_by_click_and_by_keyboard_without_moving_the_head(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    page = page_for(served.url + "/")
    open_chat(page, "Fix 'database is locked' in the nightly import")
    snap = rpc(served.url, "sessions/forest_snapshot", {"session_id": ui_store["demo"]})
    side = next(t for t in snap["tips"] if t != snap["head"])
    tree = page.get_by_role("tree")
    head = tree.locator('[aria-current="true"]')
    expect(head).to_have_attribute("data-node", snap["head"])
    tree.locator(f'[data-node="{side}"]').click()
    expect(transcript(page).locator(f'[data-entry="{side}"]')).to_be_visible()
    expect(tree.locator(f'[data-node="{side}"]')).to_have_attribute("aria-selected", "true")
    assert rpc(served.url, "sessions/get", {"session_id": ui_store["demo"]})["head"] == snap["head"]
    # by keyboard: ArrowUp to the side branch's parent, Enter opens the path there
    parent = rpc(served.url, "sessions/entry", {"session_id": ui_store["demo"], "entry_id": side})
    tree.locator(f'[data-node="{side}"]').focus()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(f"/at/{parent['parent_id']}$"))
    assert rpc(served.url, "sessions/get", {"session_id": ui_store["demo"]})["head"] == snap["head"]
    expect(head).to_have_attribute("data-node", snap["head"])


def test_recall_shows_a_card_and_writes_nothing(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    page = page_for(served.url + "/")
    open_chat(page, "Fix 'database is locked' in the nightly import")
    before = rpc(served.url, "sessions/entries", {"session_id": ui_store["demo"], "limit": 1000})
    seq_before = httpx.get(served.url + "/healthz").json()["seq"]
    box = page.get_by_role("textbox", name="Message")
    box.fill("/recall busy timeout")
    box.press("Enter")
    card = page.get_by_role("region", name="Recall: busy timeout")
    expect(card).to_be_visible()
    expect(card.locator("mark").first).to_be_visible()
    after = rpc(served.url, "sessions/entries", {"session_id": ui_store["demo"], "limit": 1000})
    assert after == before
    assert httpx.get(served.url + "/healthz").json()["seq"] == seq_before
    shot(page, "recall-light")


def test_a_plain_message_is_recorded_and_says_no_model_is_configured(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    page = page_for(served.url + "/")
    open_chat(page, "Fix 'database is locked' in the nightly import")
    head = rpc(served.url, "sessions/get", {"session_id": ui_store["demo"]})["head"]
    box = page.get_by_role("textbox", name="Message")
    box.fill("Does **WAL** survive a crash?")
    box.press("Enter")
    expect(page.get_by_role("status").filter(has_text="No model is configured")).to_be_visible()
    entries = rpc(served.url, "sessions/log", {"session_id": ui_store["demo"]})
    assert entries[-1]["kind"] == "user.message"
    assert entries[-1]["parent_id"] == head
    assert entries[-1]["payload"]["content"][0]["text"] == "Does **WAL** survive a crash?"
    expect(transcript(page).locator("article.msg.user strong", has_text="WAL")).to_be_visible()


def test_checkpoint_command_labels_the_forest(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    page = page_for(served.url + "/")
    open_chat(page, "Fix 'database is locked' in the nightly import")
    box = page.get_by_role("textbox", name="Message")
    box.fill("/checkpoint ready-to-merge")
    box.press("Enter")
    expect(
        page.get_by_role("treeitem", name=re.compile("checkpoint ready-to-merge"))
    ).to_be_visible()
    snap = rpc(served.url, "sessions/forest_snapshot", {"session_id": ui_store["demo"]})
    assert "ready-to-merge" in [c["label"] for c in snap["checkpoints"]]


def test_editing_an_earlier_message_branches_from_its_parent(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    page = page_for(served.url + "/")
    open_chat(page, "Fix 'database is locked' in the nightly import")
    path = rpc(served.url, "sessions/log", {"session_id": ui_store["demo"]})
    users = [e for e in path if e["kind"] == "user.message"]
    target = users[-1]
    total = rpc(served.url, "sessions/get", {"session_id": ui_store["demo"]})["entry_count"]
    page.get_by_role("button", name=f"Edit message {target['sequence']}").click()
    box = page.get_by_role("textbox", name="Message")
    expect(box).to_have_value(re.compile("WAL mode"))
    box.fill("Let's try a retry loop instead.")
    box.press("Enter")
    new_path = rpc(served.url, "sessions/log", {"session_id": ui_store["demo"]})
    assert new_path[-1]["parent_id"] == target["parent_id"]
    assert new_path[-1]["payload"]["content"][0]["text"] == "Let's try a retry loop instead."
    assert rpc(served.url, "sessions/entry", {"session_id": ui_store["demo"],
                                              "entry_id": target["id"]}) == {
        **{k: v for k, v in target.items() if k != "diverged"}
    }  # fmt: skip
    info = rpc(served.url, "sessions/get", {"session_id": ui_store["demo"]})
    assert info["entry_count"] == total + 1


def test_an_append_by_another_client_shows_up_live(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    page = page_for(served.url + "/")
    open_chat(page, "Fix 'database is locked' in the nightly import")
    expect(page.get_by_role("status", name="Live updates: live")).to_be_visible()
    # another program through the server (as `forest` over JSON-RPC would)
    rpc(served.url, "sessions/append", {
        "session_id": ui_store["demo"], "kind": "user.message",
        "payload": {"content": [{"type": "text", "text": "appended from elsewhere"}]},
    })  # fmt: skip
    expect(transcript(page)).to_contain_text("appended from elsewhere", timeout=5000)
    # a second browser window
    other = page_for(served.url + "/")
    open_chat(other, "Fix 'database is locked' in the nightly import")
    box = other.get_by_role("textbox", name="Message")
    box.fill("typed in the second window")
    box.press("Enter")
    expect(transcript(page)).to_contain_text("typed in the second window", timeout=5000)


def test_a_cli_append_to_the_same_store_shows_up_live(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    page = page_for(served.url + "/")
    open_chat(page, "Fix 'database is locked' in the nightly import")
    expect(page.get_by_role("status", name="Live updates: live")).to_be_visible()
    # `forest append` in a terminal writes the store file itself, not through the server.
    subprocess.run(
        [FOREST_CLI, "--db", str(served.db), "append", ui_store["demo"],
         "-k", "user.message", "-t", "appended from a terminal"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    expect(transcript(page)).to_contain_text("appended from a terminal", timeout=5000)


TOKEN = "team-token_8c1f-2b9e"


def test_a_server_with_a_token_asks_for_it_and_then_works_live(
    ui_store: dict[str, Any], tmp_path: Path, page_for: Callable[..., Page]
) -> None:
    db = tmp_path / "store.db"
    shutil.copy(ui_store["db"], db)
    running = start(db, env={"FOREST_TOKEN": TOKEN})
    try:
        page = page_for(running.url + "/")
        form = page.get_by_role("form", name="This server needs an access token")
        expect(form).to_be_visible()
        expect(page.get_by_role("navigation", name="Chats")).to_have_count(0)
        assert axe(page) == []
        page.get_by_role("textbox", name="Access token").fill("not-the-token")
        page.get_by_role("button", name="Connect").click()
        expect(page.get_by_role("alert")).to_have_text("The server refused that token.")
        shot(page, "token-refused")
        page.get_by_role("textbox", name="Access token").fill(TOKEN)
        page.get_by_role("button", name="Connect").click()
        listed = httpx.post(
            f"{running.url}/rpc",
            json={"jsonrpc": "2.0", "method": "sessions/list", "id": 1,
                  "params": {"include_hidden": False, "order": "updated"}},
            headers={"Authorization": f"Bearer {TOKEN}"},
        ).json()["result"]  # fmt: skip
        chats = page.get_by_role("list", name="All chats").get_by_role("button")
        titles = [s["title"] for s in listed["sessions"] if s["entry_count"] > 0]
        expect(chats.first).to_be_visible()  # the list loaded with the token
        assert chats.first.locator(".chat-title").inner_text() in titles
        open_chat(page, "Fix 'database is locked' in the nightly import")
        # The WebSocket authenticated with its first message: live updates arrive.
        expect(page.get_by_role("status", name="Live updates: live")).to_be_visible()
        subprocess.run(
            [FOREST_CLI, "--db", str(db), "append", ui_store["demo"],
             "-k", "user.message", "-t", "appended while guarded"],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        expect(transcript(page)).to_contain_text("appended while guarded", timeout=5000)
        # A shared link carries the token in the fragment; the page moves it out of sight.
        linked = page_for(f"{running.url}/#token={TOKEN}")
        expect(linked.get_by_role("navigation", name="Chats")).to_be_visible()
        first_row = linked.get_by_role("list", name="All chats").locator("button.chat").first
        expect(first_row).to_be_visible()
        assert first_row.locator(".chat-title").inner_text() in titles
        assert TOKEN not in linked.url
        assert page.errors == [] and linked.errors == []  # type: ignore[attr-defined]
    finally:
        assert running.stop() == 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_reconnects_after_the_server_restarts(
    ui_store: dict[str, Any], tmp_path: Path, page_for: Callable[..., Page]
) -> None:
    db = tmp_path / "store.db"
    shutil.copy(ui_store["db"], db)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    first = subprocess.Popen([FOREST_CLI, "--db", str(db), "serve", "--port", str(port)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert first.stdout is not None and "http://" in first.stdout.readline()
    page = page_for(url + "/")
    open_chat(page, "Fix 'database is locked' in the nightly import")
    status = page.get_by_role("status", name=re.compile("Live updates"))
    expect(status).to_have_attribute("aria-label", "Live updates: live")
    first.terminate()
    assert first.wait(30) == 0
    expect(status).not_to_have_attribute("aria-label", "Live updates: live")
    proc = subprocess.Popen([FOREST_CLI, "--db", str(db), "serve", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None and "http://" in proc.stdout.readline()
        expect(status).to_have_attribute("aria-label", "Live updates: live", timeout=10_000)
        rpc(url, "sessions/append", {
            "session_id": ui_store["demo"], "kind": "user.message",
            "payload": {"content": [{"type": "text", "text": "after the restart"}]},
        })  # fmt: skip
        expect(transcript(page)).to_contain_text("after the restart", timeout=5000)
    finally:
        proc.terminate()
        proc.wait(30)
        for p in (first, proc):
            for stream in (p.stdout, p.stderr):
                if stream:
                    stream.close()


def test_the_big_forest_is_virtualised_and_stays_navigable(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    page = page_for(served.url + "/")
    open_chat(page, "the big one")
    tree = page.get_by_role("tree")
    expect(tree.locator('[aria-current="true"]')).to_be_visible(timeout=20_000)
    count = tree.get_by_role("treeitem").count()
    assert 0 < count < 400, f"{count} treeitems in the DOM: not virtualised"
    expect(page.locator(".forest-count")).to_contain_text("10000 entries · 301 branches")
    scroller = page.locator(".forest-scroll")
    scroller.evaluate("(el) => { el.scrollTop = 0; el.scrollLeft = 0; }")
    expect(tree.get_by_role("treeitem", name=re.compile(r"^#1 "))).to_be_visible()
    shot(page, "forest-big-light")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_main_screens_have_no_serious_accessibility_violations(
    served: Running, page_for: Callable[..., Page], scheme: str
) -> None:
    page = page_for(served.url + "/", scheme=scheme)
    open_chat(page, "Fix 'database is locked' in the nightly import")
    page.locator("details.tool summary").first.click()
    page.get_by_role("checkbox", name="Hidden entries").check()
    page.locator("details.thinking summary, details.hidden-entry summary").first.click()
    shot(page, f"main-{scheme}")
    assert axe(page) == []
    page.get_by_role("searchbox", name="Find a chat").fill("OperationalError")
    expect(page.get_by_role("list", name="Search results").locator("mark").first).to_be_visible()
    shot(page, f"search-{scheme}")
    assert axe(page) == []


def test_everything_is_reachable_by_keyboard(
    served: Running, page_for: Callable[..., Page]
) -> None:
    page = page_for(served.url + "/")
    # React 19 renders after the load event: Tab before the app is drawn focuses nothing.
    expect(page.get_by_role("searchbox", name="Find a chat")).to_be_visible()
    page.keyboard.press("Tab")
    expect(page.get_by_role("searchbox", name="Find a chat")).to_be_focused()
    page.keyboard.type("OperationalError")
    expect(page.get_by_role("list", name="Search results").get_by_role("button")).to_have_count(1)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_contain_text("database is locked")
    for _ in range(60):  # Tab on until the forest's node is focused
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('role')") == "treeitem":
            break
    # The hit names its entry, so the chat opened there: the forest's tab stop is that node.
    focused = page.evaluate("document.activeElement.getAttribute('aria-selected')")
    assert focused == "true"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")  # opens the path there, read-only; focus stays on the node
    expect(page.get_by_role("tree").locator('[aria-selected="true"]')).to_be_focused()


@pytest.fixture
def with_model(ui_store: dict[str, Any], tmp_path: Path, provider_standin: Any) -> Iterator[Any]:
    db = tmp_path / "store.db"
    shutil.copy(ui_store["db"], db)
    env = {**provider_standin.environ(), "FOREST_PROVIDER": "openai", "FOREST_MODEL": "gpt-standin"}
    running = start(db, env=env)
    yield running, provider_standin
    assert running.stop() == 0


def test_a_model_reply_streams_into_the_transcript_and_lands_as_entries(
    with_model: Any, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    served, standin = with_model
    words = " ".join(f"w{i}" for i in range(30))
    standin.reply_text(f"**Yes.** {words}", chunks=30, chunk_delay=0.08)
    page = page_for(served.url + "/")
    open_chat(page, "Fix 'database is locked' in the nightly import")
    expect(page.get_by_text("model: gpt-standin")).to_be_visible()
    box = page.get_by_role("textbox", name="Message")
    box.fill("Will WAL mode fix it?")
    box.press("Enter")
    streaming = transcript(page).get_by_role("article", name="Assistant, streaming")
    expect(streaming).to_contain_text("streaming")
    expect(streaming).to_contain_text("w3")
    shot(page, "streaming-light")
    expect(streaming).to_have_count(0, timeout=15_000)
    last = rpc(served.url, "sessions/log", {"session_id": ui_store["demo"]})[-1]
    assert last["kind"] == "assistant.message" and last["payload"]["incomplete"] is False
    assert last["payload"]["content"][0]["text"] == f"**Yes.** {words}"
    reply = transcript(page).locator(f'[data-entry="{last["id"]}"]')
    expect(reply.locator("strong", has_text="Yes.")).to_be_visible()
    expect(reply).to_contain_text("complete")
    body = json.dumps(standin.requests[-1].body)
    assert "Will WAL mode fix it?" in body and "nightly import fails" in body


def test_stop_interrupts_the_reply_cleanly(
    with_model: Any, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    served, standin = with_model
    standin.reply_text(" ".join(f"w{i}" for i in range(60)), chunks=60, chunk_delay=0.1)
    page = page_for(served.url + "/")
    open_chat(page, "Fix 'database is locked' in the nightly import")
    box = page.get_by_role("textbox", name="Message")
    box.fill("Tell me everything.")
    box.press("Enter")
    expect(transcript(page).get_by_role("article", name="Assistant, streaming")).to_contain_text(
        "w2"
    )
    page.get_by_role("button", name="Stop").click()
    expect(page.get_by_role("status").filter(has_text="Stopped")).to_be_visible()
    last = rpc(served.url, "sessions/log", {"session_id": ui_store["demo"]})[-1]
    assert last["kind"] == "assistant.message" and last["payload"]["incomplete"] is True
    stopped = transcript(page).locator(f'[data-entry="{last["id"]}"]')
    expect(stopped).to_contain_text("incomplete")
    if last["payload"].get("dropped"):  # the half-streamed text block is not kept
        expect(stopped).to_contain_text("not kept")
    shot(page, "stopped-light")
