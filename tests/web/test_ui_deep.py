"""Enter on an unsure query runs the deep search (issue 12's `search/deep`) from the
sidebar, in real headless Chromium against a real `forest serve` whose Anthropic SDK
talks to the provider stand-in (tests/standin.py) scripted as the model."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from server.conftest import Running, start
from standin import ProviderStandIn, Reply

from .conftest import axe, rpc, shot

UNSURE = "python error"  # the gate is not sure (narrow lead); see test_ui_e2e.py


@pytest.fixture
def deep_served(
    ui_store: dict[str, Any], tmp_path: Path, provider_standin: ProviderStandIn
) -> Iterator[tuple[Running, ProviderStandIn]]:
    db = tmp_path / "store.db"
    shutil.copy(ui_store["db"], db)
    env = {**provider_standin.environ(), "FOREST_PROVIDER": "anthropic", "FOREST_MODEL": "m"}
    running = start(db, env=env)
    yield running, provider_standin
    assert running.stop() == 0


def _unsure_page(page_for: Callable[..., Page], url: str, received: list[Any]) -> Page:
    """The app with the unsure query typed; `received` collects the WebSocket's answers."""

    def listen(page: Page) -> None:
        page.on("websocket", lambda ws: ws.on("framereceived", lambda f: received.append(f)))

    page = page_for(url + "/", before=listen)
    expect(page.get_by_text("model: m")).to_be_visible()  # chat/model said a model is there
    expect(page.get_by_text("● live")).to_be_visible()
    page.get_by_role("searchbox", name="Find a chat").fill(UNSURE)
    expect(
        page.get_by_role("list", name="Search results").get_by_role("button").first
    ).to_be_visible()
    return page


def _wait_for(standin: ProviderStandIn, path: str) -> None:
    deadline = time.monotonic() + 30
    while not any(r.path == path for r in standin.requests) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert any(r.path == path for r in standin.requests), [r.path for r in standin.requests]


def test_enter_on_an_unsure_query_asks_the_model_and_opens_its_answer(
    deep_served: tuple[Running, ProviderStandIn], page_for: Callable[..., Page]
) -> None:
    served, standin = deep_served
    shown: list[str] = []

    def model(body: dict[str, Any]) -> Reply:
        # The first user turn lists the cards; answer c2 and remember its title.
        first = body["messages"][0]["content"]
        text = first if isinstance(first, str) else first[0]["text"]
        shown.append(text)
        time.sleep(1.0)  # long enough to see the busy state
        return Reply(text='{"answer": "c2"}', input_tokens=90)

    standin.responder = model
    received: list[Any] = []
    page = _unsure_page(page_for, served.url, received)
    # As-you-type pre-started the deep search over the WebSocket: connection warmed, no turn.
    _wait_for(standin, "/v1/models")
    assert all(r.path == "/v1/models" for r in standin.requests)
    page.get_by_role("searchbox", name="Find a chat").press("Enter")
    status = page.locator("#search-status")
    expect(status).to_contain_text("asking the model")
    expect(status).to_have_attribute("aria-busy", "true")
    shot(page, "deep-busy-light")
    expect(status).to_contain_text("Answered by the model", timeout=30_000)
    expect(status).to_have_attribute("aria-busy", "false")
    card = re.search(r"^c2 \| (.+?) \| ", shown[0], re.M)
    assert card, shown[0]
    # The card gives the model a title cut shorter than the chat's own (an ellipsis
    # at the cut): the chat opened is the one whose title it begins.
    title = card.group(1).removesuffix("…")
    expect(page.locator("header.chat-header h1")).to_have_text(re.compile("^" + re.escape(title)))
    results = page.get_by_role("list", name="Search results")
    expect(results.get_by_role("button").first).to_contain_text(title)
    expect(results.get_by_role("button").first).to_have_attribute("aria-current", "page")
    shot(page, "deep-answer-light")
    # Asked over the same connection that pre-started it: the server used the prepared search.
    answers = [json.loads(f)["result"] for f in received if '"tier"' in str(f)]
    assert [(a["tier"], a["prestarted"], a["fallback"]) for a in answers] == [("model", True, None)]
    assert answers[0]["answer"] == answers[0]["hits"][0]["session_id"]
    usage = rpc(served.url, "search/usage", {})
    assert [(u["tier"], u["input_tokens"]) for u in usage] == [("model", 90)]
    assert [r.path for r in standin.requests].count("/v1/messages") == 1
    violations = axe(page)
    assert violations == [], json.dumps([[n["html"][:150] for n in v["nodes"]] for v in violations])
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_used_up_quota_is_said_and_the_index_list_stays(
    deep_served: tuple[Running, ProviderStandIn], page_for: Callable[..., Page]
) -> None:
    served, standin = deep_served
    standin.reply_error(429, "insufficient_quota")
    page = page_for(served.url + "/", scheme="dark")
    expect(page.get_by_text("model: m")).to_be_visible()
    expect(page.get_by_text("● live")).to_be_visible()
    box = page.get_by_role("searchbox", name="Find a chat")
    box.fill(UNSURE)
    results = page.get_by_role("list", name="Search results")
    expect(results.get_by_role("button").first).to_be_visible()
    before = results.get_by_role("button").all_inner_texts()
    box.press("Enter")
    status = page.locator("#search-status")
    expect(status).to_contain_text("Answered by the index", timeout=30_000)
    expect(status).to_contain_text("the Anthropic account's quota is used up")
    expect(status).to_have_attribute("title", re.compile("quota used up"))  # the provider's words
    expect(page.get_by_role("heading", level=1)).to_have_text("Open a chat")
    assert results.get_by_role("button").all_inner_texts() == before
    shot(page, "deep-quota-dark")
    usage = rpc(served.url, "search/usage", {})
    assert [(u["tier"], u["fallback"]) for u in usage] == [("index", "quota")]
    assert [r.path for r in standin.requests if r.path != "/v1/models"] == ["/v1/messages"]
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_deep_answer_for_an_older_query_never_overwrites_the_newer_one(
    deep_served: tuple[Running, ProviderStandIn], page_for: Callable[..., Page]
) -> None:
    served, standin = deep_served

    def slow(body: dict[str, Any]) -> Reply:
        time.sleep(2.0)
        return Reply(text='{"answer": "c1"}')

    standin.responder = slow
    page = _unsure_page(page_for, served.url, [])
    box = page.get_by_role("searchbox", name="Find a chat")
    box.press("Enter")
    status = page.locator("#search-status")
    expect(status).to_contain_text("asking the model")
    box.fill("OperationalError")  # typed while the model is still thinking
    results = page.get_by_role("list", name="Search results")
    expect(results.get_by_role("button")).to_have_count(1)
    expect(results).to_contain_text("database is locked")
    deadline = time.monotonic() + 30
    while not rpc(served.url, "search/usage", {}) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert rpc(served.url, "search/usage", {}), "the deep search finished"
    page.wait_for_timeout(500)
    expect(results.get_by_role("button")).to_have_count(1)
    expect(status).not_to_contain_text("Answered by the model")
    expect(page.get_by_role("heading", level=1)).to_have_text("Open a chat")
