"""The UI a daily user keeps open (issue 29), in real Chromium on the real imports (Claude
Code, pi, ChatGPT, the demo) served by a real `forest serve`: look without moving, a
transcript made for coding agents, landing on a hit, the chat's own search, the forest,
comparing branches, choosing a chat, URLs, narrow screens; and #22's UI items (remote
images, referrers, huge messages)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from server.conftest import Running, start

from .conftest import axe, rpc, shot

DEMO = "Fix 'database is locked' in the nightly import"
CLAUDE = "Claude Code CLI Tool Development Summary"
WORKERS = "OK, so this was just so you know what there is now"


@pytest.fixture
def served(ui_store: dict[str, Any], tmp_path: Path) -> Iterator[Running]:
    db = tmp_path / "store.db"
    shutil.copy(ui_store["db"], db)
    running = start(db)
    yield running
    assert running.stop() == 0


def open_chat(page: Page, title: str) -> None:
    """Open a chat by its address (the list is virtualised: most rows are not drawn)."""
    base = page.url.split("#")[0]
    page.goto(f"{base}#/chat/{sid_of(base.rstrip('/'), title)}")
    expect(page.locator(".chat-header h1")).to_contain_text(title[:40])


def sid_of(url: str, title: str) -> str:
    listed = rpc(url, "sessions/list", {"include_hidden": True, "limit": 1000})["sessions"]
    return next(s["id"] for s in listed if s["title"].startswith(title))


def transcript(page: Page) -> Any:
    return page.get_by_role("region", name="Transcript")


def no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"the page scrolls sideways ({width} px)"  # type: ignore[index]


def test_a_node_opens_its_branch_read_only_and_only_continue_moves_the_head(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    sid = ui_store["demo"]
    before = rpc(served.url, "sessions/get", {"session_id": sid})
    snap = rpc(served.url, "sessions/forest_snapshot", {"session_id": sid})
    side = next(t for t in snap["tips"] if t not in snap["active_path"])
    page = page_for(served.url + "/")
    open_chat(page, DEMO)
    tree = page.get_by_role("tree")
    tree.locator(f'[data-node="{side}"]').click()
    expect(page).to_have_url(re.compile(f"#/chat/{sid}/at/{side}$"))
    banner = page.get_by_role("region", name="Preview")
    expect(banner).to_contain_text("Reading another branch")
    marked = transcript(page).locator(".msg.highlight")
    expect(marked).to_contain_text("cannot share the connection")
    expect(page.get_by_role("textbox", name="Message")).to_be_disabled()
    # Looking wrote nothing: the head and the chat's place in the list stay.
    after = rpc(served.url, "sessions/get", {"session_id": sid})
    assert (after["head"], after["updated_at"]) == (before["head"], before["updated_at"])
    shot(page, "preview-light")
    assert axe(page) == []
    # Back and Forward move between the views.
    page.go_back()
    expect(page).to_have_url(re.compile(f"#/chat/{sid}$"))
    expect(page.get_by_role("region", name="Preview")).to_have_count(0)
    page.go_forward()
    expect(banner).to_be_visible()
    # The versions switcher beside the edited message previews the other version in place.
    switch = transcript(page).get_by_role("group", name=re.compile("Version 1 of 2"))
    switch.get_by_role("button", name="Next version").click()
    expect(page).not_to_have_url(re.compile(side))
    page.go_back()
    banner.get_by_role("button", name="Continue from here").click()
    expect(page).to_have_url(re.compile(f"#/chat/{sid}$"))
    moved = rpc(served.url, "sessions/get", {"session_id": sid})
    assert moved["head"] == side
    assert moved["updated_at"] == before["updated_at"]  # a head move is not activity
    expect(tree.locator('[aria-current="true"]')).to_have_attribute("data-node", side)
    expect(page.get_by_role("textbox", name="Message")).to_be_enabled()


def test_a_pasted_address_opens_the_same_view_at_its_entry(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    # The 10,000-entry chat at its 18th entry: far before the last page, loaded to show it.
    sid = ui_store["big"]
    path = rpc(served.url, "sessions/log", {"session_id": sid, "limit": 10_000})
    target = path[17]
    # The window comes first: the path to the entry is drawn and marked while the snapshot
    # of every node (the forest's, and where the path goes on) is still held back.
    held: list[Route] = []

    def hold_snapshot(route: Route) -> None:
        body = route.request.post_data or ""
        if '"sessions/forest_snapshot"' in body:
            held.append(route)
        else:
            route.continue_()

    page = page_for(
        served.url + f"/#/chat/{sid}/at/{target['id']}",
        before=lambda p: p.route("**/rpc", hold_snapshot),
    )
    marked = transcript(page).locator(".msg.highlight")
    expect(marked).to_contain_text("turn 17", timeout=30_000)
    expect(marked).to_be_in_viewport()
    assert held  # the snapshot was asked for and is not answered yet
    assert transcript(page).locator("article").count() <= 18
    shot(page, "hit-window-light")
    while held:
        held.pop().continue_()
    expect(page.get_by_role("region", name="Preview")).to_contain_text("On the active branch")
    # Then a page after it, the mark left where it was.
    expect(transcript(page).locator(f'[data-entry="{path[117]["id"]}"]')).to_have_count(1)
    expect(marked).to_be_in_viewport()
    shot(page, "hit-at-entry-light")
    # What follows is read as the reader scrolls down (or on request).
    scroller = transcript(page)
    for _ in range(60):
        if scroller.locator(f'[data-entry="{path[250]["id"]}"]').count():
            break
        scroller.evaluate("el => { el.scrollTop = el.scrollHeight; }")
        page.wait_for_timeout(250)
    expect(transcript(page).locator(f'[data-entry="{path[250]["id"]}"]')).to_have_count(1)
    assert page.errors == []  # type: ignore[attr-defined]
    # The same address on a phone, dark: the chat pane alone, the entry marked in view.
    phone = page_for(
        served.url + f"/#/chat/{sid}/at/{target['id']}", scheme="dark", width=390, height=844
    )
    marked = transcript(phone).locator(".msg.highlight")
    expect(marked).to_contain_text("turn 17", timeout=30_000)
    expect(transcript(phone).locator(f'[data-entry="{path[117]["id"]}"]')).to_have_count(1)
    expect(marked).to_be_in_viewport()
    no_sideways_scroll(phone)
    shot(phone, "phone-hit-at-entry-dark")


def test_claude_code_turns_read_at_a_glance(served: Running, page_for: Callable[..., Page]) -> None:
    page = page_for(served.url + "/")
    open_chat(page, CLAUDE)
    t = transcript(page)
    sid = sid_of(served.url, CLAUDE)
    log = rpc(served.url, "sessions/log", {"session_id": sid, "limit": 1000})
    replies = sum(1 for e in log if e["kind"] == "assistant.message")
    cards = t.locator("article.msg.assistant")
    expect(cards.first).to_be_visible()
    assert cards.count() * 3 < replies, "one card per turn, not per block"
    for card in cards.all()[:5]:
        assert card.get_by_role("button", name=re.compile("Regenerate")).count() == 1
    bash = t.locator("details.tool", has=page.locator(".tool-name", has_text="Bash"))
    expect(bash.first.locator(".tool-key")).not_to_be_empty()
    expect(bash.locator(".tool-status.done").first).to_contain_text("done")
    edit = t.locator("details.tool[open]", has=page.locator(".tool-name", has_text="Edit")).first
    expect(edit.locator(".diff .add").first).to_be_visible()
    expect(edit.locator(".diff .del").first).to_be_visible()
    expect(t.locator("time").first).to_have_attribute("title", re.compile(r"\d{4}"))
    # Hidden notifications are out of the transcript and the tree unless asked for.
    expect(t.locator(".hidden-entry")).to_have_count(0)
    expect(page.locator(".forest-count")).to_contain_text("1 branch")
    page.get_by_role("checkbox", name="Hidden entries").check()
    expect(t.locator(".hidden-entry").first).to_be_attached()
    expect(page.locator(".forest-count")).not_to_contain_text(" 1 branch")
    page.get_by_role("checkbox", name="Hidden entries").uncheck()
    page.get_by_role("checkbox", name="Tools").uncheck()
    expect(t.locator("details.tool")).to_have_count(0)
    page.get_by_role("checkbox", name="Tools").check()
    # The README's picture: a turn's header, its tools and its edit as a diff.
    edit.evaluate(
        "el => { const turn = el.closest('article'), view = turn.closest('section');"
        " view.scrollTop += turn.getBoundingClientRect().top - view.getBoundingClientRect().top; }"
    )  # only the transcript scrolls (scrollIntoView would scroll the page too)
    shot(page, "claude-code-light")
    assert axe(page) == []


def test_a_todo_list_is_a_checklist_and_a_task_names_its_worker(
    served: Running, page_for: Callable[..., Page]
) -> None:
    page = page_for(served.url + "/")
    open_chat(page, "Build a simple Pomodoro timer")
    todos = transcript(page).get_by_role("list", name="Todo list").first
    expect(todos.locator("li.todo").first).to_be_visible()
    assert todos.locator("li.todo").count() >= 3


def test_worker_chats_are_reachable_from_their_parent_and_the_list(
    served: Running, page_for: Callable[..., Page]
) -> None:
    page = page_for(served.url + "/")
    open_chat(page, WORKERS)
    workers = page.locator("details.workers")
    expect(workers.locator("summary")).to_contain_text(re.compile(r"Worker chats \(\d+\)"))
    workers.locator("summary").click()
    workers.get_by_role("button").first.click()
    back = page.get_by_role("button", name=re.compile("^Worker of: OK, so this was"))
    expect(back).to_be_visible()
    back.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(WORKERS)
    # Every imported worker chat, linked or not, is listed on request.
    nav = page.get_by_role("navigation", name="Chats")
    hidden = [
        s
        for s in rpc(served.url, "sessions/list", {"include_hidden": True, "limit": 1000})[
            "sessions"
        ]
        if s["visibility"] == "hidden" and s["harness"] != "chat_search"
    ]
    checkbox = nav.get_by_role("checkbox", name=re.compile("worker chats"))
    expect(checkbox).to_have_accessible_name(re.compile(f"worker chats \\({len(hidden)}\\)"))
    checkbox.check()
    expect(nav.locator(".status-badge", has_text="worker").first).to_be_visible()
    checkbox.uncheck()


def test_the_chat_search_lists_hits_with_their_branch_and_opens_at_the_entry(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    page = page_for(served.url + "/")
    open_chat(page, DEMO)
    box = page.get_by_role("searchbox", name="Search this chat")
    box.press_sequentially("connection", delay=30)
    hits = page.get_by_role("region", name="Hits in this chat")
    other = hits.get_by_role("button", name=re.compile("other branch"))
    expect(other.first).to_be_visible()
    expect(hits.get_by_role("button", name=re.compile("active branch")).first).to_be_visible()
    expect(hits.locator("mark").first).to_be_visible()
    shot(page, "chat-search-light")
    other.first.click()
    expect(page.get_by_role("region", name="Preview")).to_contain_text("another branch")
    expect(transcript(page).locator(".msg.highlight")).to_contain_text("connection")
    # /recall's card opens the other branch's preview the same way.
    page.goto(served.url + f"/#/chat/{ui_store['demo']}")
    message = page.get_by_role("textbox", name="Message")
    message.fill("/recall shared connection")
    message.press("Enter")
    card = page.get_by_role("region", name="Recall: shared connection")
    card.get_by_role("button", name=re.compile("other branch")).first.click()
    expect(page.get_by_role("region", name="Preview")).to_contain_text("another branch")


def test_two_branches_compare_side_by_side(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    sid = ui_store["demo"]
    snap = rpc(served.url, "sessions/forest_snapshot", {"session_id": sid})
    side = next(t for t in snap["tips"] if t not in snap["active_path"])
    page = page_for(served.url + f"/#/chat/{sid}/at/{side}")
    page.get_by_role("button", name="Compare with the active branch").click()
    expect(page).to_have_url(re.compile(f"/compare/{snap['head']}/{side}$"))
    compare = page.get_by_role("region", name="Compare branches")
    expect(compare).to_contain_text("From their common ancestor")
    rows = compare.get_by_role("row")
    expect(rows.nth(1)).to_contain_text("WAL mode")
    expect(rows.nth(1)).to_contain_text("shared connection")
    expect(compare.get_by_role("region", name="Files")).to_contain_text("Not compared")
    for scheme in ("light", "dark"):
        dark = page_for(served.url + f"/#/chat/{sid}/compare/{snap['head']}/{side}", scheme=scheme)
        expect(
            dark.get_by_role("region", name="Compare branches").get_by_role("row").nth(1)
        ).to_be_visible()
        shot(dark, f"compare-{scheme}")
        assert axe(dark) == []


def test_a_long_compare_draws_its_turns_a_window_at_a_time(
    served: Running, page_for: Callable[..., Page]
) -> None:
    sid = rpc(served.url, "sessions/create", {"title": "two long branches"})["id"]

    def chain(parent: str | None, side: str, n: int) -> str:
        items = [
            {
                "kind": "user.message" if i % 2 == 0 else "assistant.message",
                "payload": {"content": [{"type": "text", "text": f"{side} turn {i}"}]},
            }
            for i in range(n)
        ]
        made = rpc(
            served.url,
            "sessions/append_many",
            {"session_id": sid, "items": items, "parent": parent},
        )
        return str(made[-1]["id"])

    shared = chain(None, "shared", 2)
    a, b = chain(shared, "left", 200), chain(shared, "right", 200)
    page = page_for(served.url + f"/#/chat/{sid}/compare/{a}/{b}")
    compare = page.get_by_role("region", name="Compare branches")
    rows = compare.locator(".compare-row.differs")
    expect(rows.first).to_contain_text("left turn 0")
    more = compare.get_by_role("button", name=re.compile(r"^Show more turns \(\d+ not shown\)"))
    expect(more).to_be_visible()
    drawn = rows.count()
    assert 0 < drawn < 100, drawn  # 100 turns (a message and its reply) a side
    # Scrolled to the end of what is drawn, the next turns are drawn, until all are.
    while drawn < 100:
        compare.evaluate("el => { el.scrollTop = el.scrollHeight; }")
        expect(rows).not_to_have_count(drawn)
        drawn = rows.count()
    expect(rows).to_have_count(100)
    expect(more).to_have_count(0)
    expect(rows.last).to_contain_text("left turn 199")
    expect(rows.last).to_contain_text("right turn 199")


def test_choosing_a_chat_groups_filters_and_keys(
    served: Running, page_for: Callable[..., Page]
) -> None:
    page = page_for(served.url + "/")
    nav = page.get_by_role("navigation", name="Chats")
    expect(nav.locator(".group-header").first).to_be_visible()
    expect(
        nav.locator(".group-header", has_text="Yesterday")
        .or_(nav.locator(".group-header", has_text="Today"))
        .first
    ).to_be_visible()
    nav.get_by_label("Group").select_option("project")
    expect(nav.locator(".group-header", has_text="ledger")).to_be_visible()
    nav.get_by_label("Harness").select_option("pi")
    chats = nav.get_by_role("list", name="All chats").locator("button.chat")
    expect(chats.first).to_be_visible()
    for label in chats.locator(".label").all_inner_texts():
        assert label == "pi"
    nav.get_by_label("Harness").select_option("")
    nav.get_by_label("Group").select_option("date")
    # Untitled empty chats are not listed unless asked for.
    listed = rpc(served.url, "sessions/list", {"include_hidden": False, "limit": 1000})
    if any(s["entry_count"] == 0 for s in listed["sessions"]):
        expect(
            nav.get_by_role("checkbox", name=re.compile("chats without messages"))
        ).not_to_be_checked()
    # `/` and Ctrl+K focus the search; arrows walk the results; Enter opens.
    page.locator("body").press("/")
    box = page.get_by_role("searchbox", name="Find a chat")
    expect(box).to_be_focused()
    box.press("Escape")
    page.locator("main").click()
    page.keyboard.press("Control+k")
    expect(box).to_be_focused()
    box.fill("sqlite3 OperationalError locked")
    results = page.get_by_role("list", name="Search results")
    expect(results.get_by_role("button").first).to_be_visible()
    box.press("ArrowDown")
    expect(results.get_by_role("button").first).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_contain_text("database is locked")
    # From the open chat in the list, ArrowDown moves to the next one.
    box.fill("")
    current = nav.locator('button.chat[aria-current="page"]')
    current.focus()
    page.keyboard.press("ArrowDown")
    # Waited for, not read at once: a row that is not drawn yet is focused once drawn.
    focused = nav.locator("button.chat:focus")
    expect(focused).to_have_count(1)
    expect(focused).not_to_have_attribute("aria-current", "page")


# A Claude Code file of four file-history snapshots: entries, but not one message.
NO_MESSAGES = "a95fea4a-b88a-4e49-ac07-4cc323d8700c.jsonl"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_chats_without_a_message_are_hidden_unless_asked_for(
    served: Running, page_for: Callable[..., Page], scheme: str
) -> None:
    listed = rpc(served.url, "sessions/list", {"include_hidden": False, "limit": 1000})["sessions"]
    [quiet] = [s for s in listed if (s["source"] or {}).get("path", "").endswith(NO_MESSAGES)]
    assert quiet["entry_count"] == 4 and quiet["messages"] == 0
    [titled] = [s["id"] for s in listed if s["title"] == "TUI Cache Handling: Empty State Fix"]
    hidden = sum(1 for s in listed if s["messages"] == 0 and s["status"] != "archived")
    for width in (1400, 390):
        page = page_for(served.url + "/", scheme=scheme, width=width, height=844)
        nav = page.get_by_role("navigation", name="Chats")
        box = nav.get_by_role("checkbox", name=re.compile("chats without messages"))
        expect(box).not_to_be_checked()
        expect(nav.locator("label", has_text="chats without messages")).to_contain_text(
            f"({hidden})"
        )
        nav.get_by_label("Harness").select_option("claude-code")
        rows = nav.get_by_role("list", name="All chats").locator("button.chat")
        expect(rows.first).to_be_visible()
        # Every row drawn counts messages, and none of them shows 0.
        for meta in rows.locator(".count").all_inner_texts():
            assert re.fullmatch(r"[\d,]+ messages?", meta) and meta != "0 messages", meta
        row = nav.locator(f'button.chat[data-chat="{quiet["id"]}"]')
        box.check()
        scroller = nav.locator(".chat-scroll")
        for _ in range(40):  # the list is virtualised: scroll until the row is drawn
            if row.count():
                break
            scroller.evaluate("el => { el.scrollTop += 300; }")
            page.wait_for_timeout(100)
        expect(row).to_contain_text("0 messages")
        row.scroll_into_view_if_needed()
        page.wait_for_timeout(300)  # the virtualised rows measured where they landed
        no_sideways_scroll(page)
        shot(page, f"{'phone-' if width < 700 else ''}list-without-messages-{scheme}")
        assert axe(page) == []
        box.uncheck()
        expect(row).to_have_count(0)
        # Hidden from the list, still found: a summary-only Claude Code chat by its title.
        find = page.get_by_role("searchbox", name="Find a chat")
        find.fill("TUI cache empty state")
        expect(
            page.get_by_role("list", name="Search results").locator(f'button[data-chat="{titled}"]')
        ).to_be_visible()
        page.close()


def test_a_row_shows_messages_and_branches_and_archives_from_its_menu(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    sid = ui_store["demo"]
    [counts] = rpc(served.url, "sessions/counts", {"session_ids": [sid]})
    assert counts["branches"] >= 1
    page = page_for(served.url + "/")
    nav = page.get_by_role("navigation", name="Chats")
    nav.get_by_label("Harness").select_option("demo")
    row = nav.locator(".chat-row", has=page.locator(f'button.chat[data-chat="{sid}"]'))
    expect(row).to_contain_text(f"{counts['messages']} messages")
    expect(row.locator(".branch-badge")).to_have_text(f"{counts['branches'] + 1} branches")
    menu = row.get_by_role("button", name=re.compile("^Actions for"))
    menu.click()
    expect(row.get_by_role("menuitem", name="Rename…")).to_be_focused()
    shot(page, "row-menu-light")
    assert axe(page) == []
    row.get_by_role("menuitem", name="Archive").click()
    expect(row).to_have_count(0)
    assert rpc(served.url, "sessions/get", {"session_id": sid})["status"] == "archived"
    # Still found by what was said in it.
    box = page.get_by_role("searchbox", name="Find a chat")
    box.fill("database is locked nightly")
    expect(
        page.get_by_role("list", name="Search results").locator(f'button[data-chat="{sid}"]')
    ).to_be_visible()
    box.fill("")
    # Shown on request, and brought back from the same menu.
    nav.get_by_role("checkbox", name=re.compile(r"archived \(1\)")).check()
    expect(row.locator(".status-badge", has_text="archived")).to_be_visible()
    menu.click()
    expect(row.get_by_role("menuitem", name="Archive", exact=True)).to_have_count(0)
    expect(row.get_by_role("menuitem", name="Unarchive")).to_be_visible()
    shot(page, "row-unarchive-light")
    row.get_by_role("menuitem", name="Unarchive").click()
    expect(row.locator(".status-badge", has_text="archived")).to_have_count(0)
    assert rpc(served.url, "sessions/get", {"session_id": sid})["status"] == "active"
    archived = nav.get_by_role("checkbox", name=re.compile("archived"))
    archived.click()
    expect(archived).to_have_count(0)  # nothing archived is left to ask for
    expect(row).to_be_visible()
    # An archived chat that is open is brought back from its header too.
    rpc(served.url, "sessions/archive", {"session_id": sid})
    page.goto(f"{served.url}/#/chat/{sid}")
    header = page.locator(".chat-header")
    expect(header.locator(".status-badge", has_text="archived")).to_be_visible()
    header.get_by_role("button", name="Unarchive", exact=True).click()
    expect(header.locator(".status-badge", has_text="archived")).to_have_count(0)
    assert rpc(served.url, "sessions/get", {"session_id": sid})["status"] == "active"


def test_a_chat_is_renamed_in_place_enter_saves_and_escape_cancels(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    sid = ui_store["demo"]
    old = rpc(served.url, "sessions/get", {"session_id": sid})["title"]
    new = "Nightly import: the lock, fixed"
    for scheme in ("light", "dark"):
        page = page_for(served.url + "/", scheme=scheme)
        nav = page.get_by_role("navigation", name="Chats")
        nav.get_by_label("Harness").select_option("demo")
        row = nav.locator(".chat-row", has=page.locator(f'button.chat[data-chat="{sid}"]'))
        menu = row.get_by_role("button", name=re.compile("^Actions for"))
        menu.click()
        row.get_by_role("menuitem", name="Rename…").click()
        field = row.get_by_role("textbox", name=re.compile("^New title for"))
        expect(field).to_be_focused()
        expect(field).to_have_value(old)
        field.fill("never saved")
        shot(page, f"rename-{scheme}")
        assert axe(page) == []
        # Escape puts the title back and the focus on the row's menu button; nothing is written.
        field.press("Escape")
        expect(field).to_have_count(0)
        expect(menu).to_be_focused()
        expect(row.locator(".chat-title")).to_have_text(old)
        assert rpc(served.url, "sessions/get", {"session_id": sid})["title"] == old
    # Enter saves: the row, the open chat's header and the store have the new title.
    menu.click()
    row.get_by_role("menuitem", name="Rename…").click()
    field.fill(f"  {new}  ")
    field.press("Enter")
    expect(field).to_have_count(0)
    expect(row.locator(".chat-title")).to_have_text(new)
    assert rpc(served.url, "sessions/get", {"session_id": sid})["title"] == new
    row.locator("button.chat").click()
    expect(page.locator(".chat-header h1")).to_have_text(new)
    # A rename from another client reaches the open page live.
    rpc(served.url, "sessions/rename", {"session_id": sid, "title": "renamed elsewhere"})
    expect(row.locator(".chat-title")).to_have_text("renamed elsewhere")
    expect(page.locator(".chat-header h1")).to_have_text("renamed elsewhere")
    # An emptied title saves nothing: the edit closes.
    menu.click()
    row.get_by_role("menuitem", name="Rename…").click()
    field.fill("")
    field.press("Enter")
    expect(field).to_have_count(0)
    assert rpc(served.url, "sessions/get", {"session_id": sid})["title"] == "renamed elsewhere"


def test_a_live_change_is_applied_in_place_not_by_reading_everything_again(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any]
) -> None:
    sid = ui_store["demo"]
    page = page_for(served.url + "/")
    open_chat(page, DEMO)
    expect(page.get_by_role("status", name="Live updates: live")).to_be_visible()
    expect(page.get_by_role("tree")).to_be_visible()
    asked: list[str] = []
    page.on(
        "request",
        lambda r: (
            asked.append(json.loads(r.post_data or "{}").get("method", ""))
            if r.url.endswith("/rpc")
            else None
        ),
    )
    note = {"content": [{"type": "text", "text": "a note from another window"}]}
    added = rpc(
        served.url,
        "sessions/append",
        {"session_id": sid, "kind": "user.message", "payload": note},
    )
    expect(transcript(page)).to_contain_text("a note from another window")
    expect(page.get_by_role("tree").locator(f'[data-node="{added["id"]}"]')).to_have_count(1)
    expect(page.get_by_role("tree").locator('[aria-current="true"]')).to_have_attribute(
        "data-node", added["id"]
    )
    # The chat's row and the new entry were read; not the list, the path or the forest.
    assert "sessions/get" in asked and "sessions/log" in asked, asked
    assert not {"sessions/list", "sessions/forest_snapshot"} & set(asked), asked
    assert asked.count("sessions/log") == 1, asked
    # A reply on another branch moves the head there: that view is read again.
    first = rpc(served.url, "sessions/log", {"session_id": sid, "limit": 1000})[0]
    again = {"content": [{"type": "text", "text": "started over from the top"}]}
    rpc(
        served.url,
        "sessions/append",
        {"session_id": sid, "kind": "user.message", "parent": first["id"], "payload": again},
    )
    expect(transcript(page)).to_contain_text("started over from the top")
    expect(transcript(page)).not_to_contain_text("a note from another window")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_phone_shows_one_pane_at_a_time_without_sideways_scrolling(
    served: Running, page_for: Callable[..., Page], ui_store: dict[str, Any], scheme: str
) -> None:
    page = page_for(served.url + "/", scheme=scheme, width=390, height=844)
    nav = page.get_by_role("navigation", name="Chats")
    expect(nav).to_be_visible()
    no_sideways_scroll(page)
    shot(page, f"phone-list-{scheme}")
    open_chat(page, CLAUDE)
    expect(nav).to_be_hidden()
    no_sideways_scroll(page)
    send = page.get_by_role("button", name="Send")
    expect(send).to_be_in_viewport()
    box = send.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 390
    shot(page, f"phone-chat-{scheme}")
    assert axe(page) == []
    page.get_by_role("button", name="Forest").click()
    forest = page.get_by_role("region", name="Forest view")
    expect(forest).to_be_in_viewport()
    expect(forest.locator('[aria-current="true"]')).to_be_in_viewport()
    shot(page, f"phone-forest-{scheme}")
    forest.locator('[aria-current="true"]').click()  # reading a node closes the drawer
    expect(forest).not_to_be_in_viewport()
    page.get_by_role("button", name="Back to the chats").click()
    expect(nav).to_be_visible()
    sid = ui_store["demo"]
    snap = rpc(served.url, "sessions/forest_snapshot", {"session_id": sid})
    page.goto(served.url + f"/#/chat/{sid}/compare/{snap['tips'][0]}/{snap['tips'][1]}")
    expect(
        page.get_by_role("region", name="Compare branches").get_by_role("row").nth(1)
    ).to_be_visible()
    no_sideways_scroll(page)


def test_remote_images_are_links_never_loads_and_a_huge_message_is_shown_lazily(
    served: Running, page_for: Callable[..., Page]
) -> None:
    sid = rpc(served.url, "sessions/create", {"title": "hostile transcript"})["id"]
    pixel = "![pixel](https://tracker.example/p.gif) and [a link](https://docs.example/x)"
    rpc(served.url, "sessions/append", {"session_id": sid, "kind": "user.message",
        "payload": {"content": [{"type": "text", "text": pixel}]}})  # fmt: skip
    huge = "error at line 1\n" * 330_000  # 5 MB of log
    rpc(served.url, "sessions/append", {"session_id": sid, "kind": "assistant.message",
        "payload": {"content": [{"type": "text", "text": huge}]}})  # fmt: skip
    outside: list[str] = []

    def refuse(route: Route) -> None:
        outside.append(route.request.url)
        route.abort()

    page = page_for(
        served.url + "/",
        before=lambda p: p.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), refuse),
    )
    page.goto(served.url + f"/#/chat/{sid}")
    t = transcript(page)
    link = t.get_by_role("link", name=re.compile("pixel"))
    expect(link).to_have_attribute("href", "https://tracker.example/p.gif")
    expect(link).to_have_attribute("rel", re.compile("noreferrer"))
    expect(t.get_by_role("link", name="a link")).to_have_attribute("rel", re.compile("noreferrer"))
    assert t.locator("img").count() == 0
    show = t.get_by_role("button", name=re.compile(r"Show all \(5\.\d MB"))
    expect(show).to_be_visible()
    assert outside == []
    show.click()
    expect(t.locator("pre.plain")).to_contain_text("error at line 1")
    assert outside == []
