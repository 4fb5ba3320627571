"""Deep search (T2) through the real anthropic and openai SDKs against the local stand-in.

Every scripted behaviour ends with its documented outcome, and no request
the stand-in recorded carries a planted secret or a tool definition.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest, deep
from sessionforest.deep import (
    LOOKUP_TOKENS,
    MAX_LOOKUPS,
    Prestarts,
    deep_search,
    estimate_tokens,
    usage,
)
from sessionforest.ids import iso
from sessionforest.providers import Clients, ProviderConfig
from standin import ProviderStandIn, Reply

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)
AWS = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PEM = "MIIEpAIBAAKCAQEAx4mH0ZcUs1Jn3kqXwplantedkeybody"
SECRETS = (AWS, AWS_SECRET, PEM)
LONG = " ".join(f"drill {i} with spaced repetition notes and stroke order" for i in range(40))


def _chat(forest: Forest, title: str, texts: list[str], days: int) -> str:
    start = NOW - timedelta(days=days)
    sid = forest.create_session(title, "claude", created_at=iso(start))
    for i, text in enumerate(texts):
        kind = "user.message" if i % 2 == 0 else "assistant.message"
        payload = {"content": [{"type": "text", "text": text}]}
        forest.append(sid, kind, payload, created_at=iso(start + timedelta(minutes=i)))
    return sid


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[Forest, dict[str, str]]]:
    forest = Forest.open(tmp_path / "deep.db", clock=lambda: NOW)
    ids = {
        "new": _chat(
            forest,
            "Kanji flashcards",
            [
                "build a kanji deck",
                f"kanji deck sync: aws_access_key = '{AWS}' aws_secret_access_key = "
                f"'{AWS_SECRET}' {LONG}",
                f"kanji deck deploy key:\n-----BEGIN RSA PRIVATE KEY-----\n{PEM}\n"
                f"-----END RSA PRIVATE KEY-----\n{LONG}",
                LONG,
                LONG,
                LONG,
            ],
            3,
        ),
        # Close in time to "new": two equally matched chats, neither idle twice as
        # long as the other, so neither the words nor recency settle the search.
        "old": _chat(forest, "Kanji flashcards (earlier)", ["build a kanji deck", LONG], 4),
        "misc": _chat(forest, "Sourdough starter", ["feed the starter", "checkpoint"], 5),
    }
    yield forest, ids
    forest.close()


CONFIGS = {
    "anthropic": ProviderConfig("anthropic", "claude-test", "messages", 30.0),
    "openai-responses": ProviderConfig("openai", "gpt-test", "responses", 30.0),
    "openai-chat": ProviderConfig("openai", "gpt-test", "chat", 30.0),
}


@pytest.fixture(params=list(CONFIGS))
def cfg(request: pytest.FixtureRequest) -> ProviderConfig:
    return CONFIGS[request.param]


def _label_of(standin: ProviderStandIn, session_title: str) -> str:
    """The card label the first request gave the chat titled `session_title`."""
    text = _bodies(standin)[0]
    for line in text.splitlines():
        if f"| {session_title} |" in line:
            return line.split(" | ", 1)[0].split()[-1]
    raise AssertionError(f"no card for {session_title!r} in {text!r}")


def _bodies(standin: ProviderStandIn) -> list[str]:
    return [json.dumps(r.body) for r in standin.requests if r.body]


def _clean(standin: ProviderStandIn) -> None:
    """No planted secret and no tool definition in anything sent to the provider."""
    assert standin.requests
    for request in standin.requests:
        raw = json.dumps(request.body)
        for secret in SECRETS:
            assert secret not in raw, f"{secret} reached {request.path}"
        assert "tools" not in request.body and "tool_choice" not in request.body
        assert "functions" not in request.body


def _settles(check: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.02)
    return check()


def _find(forest: Forest, cfg: ProviderConfig | None, **kw: Any) -> Any:
    return deep_search(forest, "kanji flashcards", cfg, now=NOW, **kw)


def test_the_unsure_index_asks_the_model_which_answers_at_once(
    store: Any, provider_standin: ProviderStandIn, cfg: ProviderConfig
) -> None:
    forest, _ = store
    assert not forest.search_chats("kanji flashcards", now=NOW).confident
    provider_standin.reply_text('{"answer": "c2"}', input_tokens=321, output_tokens=7)
    result = _find(forest, cfg)
    named = forest.search_chats("kanji flashcards", now=NOW).hits[1].session_id
    assert (result.tier, result.fallback, result.answer) == ("model", None, named)
    assert result.search.hits[0].session_id == named and result.lookups == 0
    assert result.usage == {
        "provider": cfg.provider,
        "model": cfg.model,
        "input_tokens": 321,
        "output_tokens": 7,
    }
    doc = result.to_json()
    assert doc["tier"] == "model" and doc["elapsed_ms"] >= doc["model_ms"] >= 0
    assert next(r.path for r in provider_standin.requests if r.body).endswith(
        {
            "anthropic": "messages",
            "openai": "responses" if cfg.api == "responses" else "completions",
        }[cfg.provider]
    )
    first = _bodies(provider_standin)[0]
    assert "c1 |" in first and "c2 |" in first and "Kanji flashcards" in first
    _clean(provider_standin)


def test_searches_given_a_client_cache_share_one_client_and_its_connection(
    store: Any, provider_standin: ProviderStandIn, cfg: ProviderConfig
) -> None:
    """The server's way: its `Clients` cache; without one each search makes and closes
    its own client."""
    forest, _ = store
    clients = Clients()
    for _ in range(3):
        provider_standin.reply_text('{"answer": "c2"}')
        assert _find(forest, cfg, clients=clients, record=False).tier == "model"
    assert clients.get(cfg) is clients.get(cfg)
    assert provider_standin.open_connections == 1  # one pooled connection, kept for the next
    clients.close()
    assert _settles(lambda: provider_standin.open_connections == 0)
    provider_standin.reply_text('{"answer": "c2"}')
    assert _find(forest, cfg, record=False).tier == "model"
    assert _settles(lambda: provider_standin.open_connections == 0)  # its own, closed


def test_lookups_run_by_us_then_an_answer(
    store: Any, provider_standin: ProviderStandIn, cfg: ProviderConfig
) -> None:
    forest, ids = store
    provider_standin.reply_text('{"lookup": "find_chats", "query": "sourdough starter"}')
    provider_standin.reply_text('{"lookup": "chat_outline", "chat": "c1"}')
    provider_standin.reply_text('{"lookup": "peek_chat", "chat": "c1"}')
    provider_standin.reply_text('{"answer": "c3"}')
    result = _find(forest, cfg)
    assert (result.tier, result.fallback, result.lookups) == ("model", None, 3)
    assert result.answer == ids["misc"]  # a card the find_chats lookup added
    assert 0 < result.lookup_tokens <= LOOKUP_TOKENS
    bodies = _bodies(provider_standin)
    assert len(bodies) == 4
    assert "Sourdough starter" in bodies[1]  # the new card went back to the model
    assert "[redacted]" in bodies[3].split("Lookup result")[-1]  # the peeked window
    _clean(provider_standin)


@pytest.mark.parametrize(
    ("script", "fallback"),
    [
        (["not json at all"], "invalid_answer"),
        (['{"answer": "c2"} and some chatter'], "invalid_answer"),
        (['{"answer": "c99"}'], "invalid_answer"),
        (['{"lookup": "peek_chat", "chat": "c99"}'], "invalid_answer"),
        (['{"lookup": "delete_everything"}'], "invalid_answer"),
        (['{"lookup": "chat_outline", "chat": "c1"}'] * (MAX_LOOKUPS + 1), "lookup_budget"),
    ],
)
def test_a_bad_reply_falls_back_to_the_index(
    store: Any, provider_standin: ProviderStandIn, script: list[str], fallback: str
) -> None:
    forest, _ = store
    for text in script:
        provider_standin.reply_text(text)
    index = forest.search_chats("kanji flashcards", now=NOW)
    result = _find(forest, CONFIGS["anthropic"])
    assert (result.tier, result.fallback, result.answer) == ("index", fallback, None)
    assert result.fallback_detail
    assert [h.session_id for h in result.search.hits] == [h.session_id for h in index.hits]
    assert result.lookups <= MAX_LOOKUPS
    _clean(provider_standin)


def test_the_lookup_token_budget_is_ours(store: Any, provider_standin: ProviderStandIn) -> None:
    forest, _ = store
    for _ in range(3):  # three long peeks ask for about 3,000 tokens
        provider_standin.reply_text('{"lookup": "peek_chat", "chat": "c1"}')
    result = _find(forest, CONFIGS["openai-responses"])
    assert (result.tier, result.fallback) == ("index", "token_budget")
    assert result.lookup_tokens <= LOOKUP_TOKENS
    sent = _bodies(provider_standin)
    assert len(sent) == 3  # the third result was never sent
    assert estimate_tokens(sent[-1]) >= estimate_tokens(sent[0])
    _clean(provider_standin)


@pytest.mark.parametrize(
    ("status", "code", "fallback", "words"),
    [
        (429, "insufficient_quota", "quota", "quota"),
        (429, "rate_limit_exceeded", "quota", "rate limited"),
        (529, "overloaded_error", "provider_error", ""),
        (500, "server_error", "provider_error", ""),
    ],
)
def test_provider_errors_fall_back_and_quota_says_so(
    store: Any,
    provider_standin: ProviderStandIn,
    cfg: ProviderConfig,
    status: int,
    code: str,
    fallback: str,
    words: str,
) -> None:
    forest, _ = store
    provider_standin.reply_error(status, code)
    result = _find(forest, cfg)
    assert (result.tier, result.fallback) == ("index", fallback)
    assert words in (result.fallback_detail or "")
    assert result.search.hits  # the index's answer
    _clean(provider_standin)


def test_a_connection_reset_is_a_provider_error(
    store: Any, provider_standin: ProviderStandIn
) -> None:
    forest, _ = store
    provider_standin.reply(Reply(reset=True))
    result = _find(forest, CONFIGS["openai-chat"])
    assert (result.tier, result.fallback) == ("index", "provider_error")


def test_a_reply_past_the_model_budget_is_cut_at_it(
    store: Any, provider_standin: ProviderStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The budget is 8 s (docs/deep-search.md); the cut is the same at a tenth of it,
    # a reply 2 s past it (10 s against 8 s took the suite 8 s and a stand-in thread 10).
    assert deep.MODEL_SECONDS == 8.0
    monkeypatch.setattr(deep, "MODEL_SECONDS", 0.8)
    forest, _ = store
    provider_standin.reply_text('{"answer": "c1"}', delay=2.8)
    result = _find(forest, CONFIGS["anthropic"])
    assert (result.tier, result.fallback) == ("index", "timeout")
    assert 300 <= result.model_ms <= 2_300 and result.elapsed_ms >= result.model_ms


def test_a_confident_index_never_starts_a_model(
    store: Any, provider_standin: ProviderStandIn
) -> None:
    forest, _ = store
    assert forest.search_chats("sourdough starter", now=NOW).confident
    result = deep_search(forest, "sourdough starter", CONFIGS["anthropic"], now=NOW)
    assert (result.tier, result.fallback, result.usage) == ("index", None, None)
    assert provider_standin.requests == []


def test_without_a_provider_the_index_answers(store: Any) -> None:
    forest, _ = store
    result = _find(forest, None)
    assert (result.tier, result.fallback) == ("index", "provider_error")
    assert "no model configured" in (result.fallback_detail or "")


def test_usage_is_a_hidden_session_never_listed_or_found(
    store: Any, provider_standin: ProviderStandIn
) -> None:
    forest, ids = store
    before = {s.id: (s.head, s.entry_count) for s in forest.sessions()}
    provider_standin.reply_text('{"answer": "c1"}', input_tokens=50, output_tokens=4)
    provider_standin.reply_error(429, "insufficient_quota")
    first = _find(forest, CONFIGS["anthropic"])
    second = _find(forest, CONFIGS["openai-responses"])
    records = usage(forest)
    assert [(r["provider"], r["tier"], r["fallback"]) for r in records] == [
        ("anthropic", "model", None),
        ("openai", "index", "quota"),
    ]
    assert records[0]["input_tokens"] == 50 and records[0]["task_family"] == "chat_search"
    assert {r["session_id"] for r in records} == {first.usage_session, second.usage_session}
    # Nothing appended to any chat; the usage sessions are hidden everywhere.
    assert {s.id: (s.head, s.entry_count) for s in forest.sessions() if s.id in before} == before
    listed = {s.id for s in forest.sessions(include_hidden=False)}
    assert listed == set(ids.values())
    for query in ("chat search", "chat_search", "anthropic usage", "kanji"):
        found = {h.session_id for h in forest.search_chats(query, now=NOW).hits}
        assert not found & {first.usage_session, second.usage_session}


def test_a_prestarted_search_is_used_once_and_expires(
    store: Any, provider_standin: ProviderStandIn
) -> None:
    forest, _ = store
    now = [0.0]
    starts = Prestarts(clock=lambda: now[0])
    cfg = CONFIGS["anthropic"]
    search = forest.search_chats("kanji flashcards", now=NOW)
    starts.start(
        "client-a", forest, "kanji flashcards", cfg, now=NOW, limit=8, harness=None, search=search
    )
    prepared = starts.take("client-a", "kanji flashcards", 8, None)
    assert prepared is not None and len(prepared.cards) == 2
    assert [r.path for r in provider_standin.requests] == ["/v1/models"]  # warmed, no turn
    assert starts.take("client-a", "kanji flashcards", 8, None) is None  # once
    assert provider_standin.open_connections == 1  # the warmed connection, kept for Enter
    provider_standin.reply_text('{"answer": "c1"}')
    result = _find(forest, cfg, prepared=prepared)
    assert result.prestarted and result.tier == "model"
    assert _settles(lambda: provider_standin.open_connections == 0)  # closed after use
    # A newer query replaces the client's earlier one (whose connection is closed);
    # another query is not served.
    starts.start("client-a", forest, "kanji", cfg, now=NOW, limit=8, harness=None, search=search)
    assert _settles(lambda: provider_standin.open_connections == 1)
    starts.start(
        "client-a", forest, "kanji flashcards", cfg, now=NOW, limit=8, harness=None, search=search
    )
    assert starts.take("client-a", "kanji", 8, None) is None
    assert _settles(lambda: provider_standin.open_connections == 0)
    # Dropped (its client went away): nothing is left open.
    starts.start("client-c", forest, "kanji", cfg, now=NOW, limit=8, harness=None, search=search)
    assert _settles(lambda: provider_standin.open_connections == 1)
    starts.drop("client-c")
    assert _settles(lambda: provider_standin.open_connections == 0)
    assert starts.take("client-c", "kanji", 8, None) is None
    # Unused for three minutes: gone.
    starts.start(
        "client-b", forest, "kanji flashcards", cfg, now=NOW, limit=8, harness=None, search=search
    )
    now[0] = 181.0
    assert starts.take("client-b", "kanji flashcards", 8, None) is None
    _clean(provider_standin)


def test_the_cli_runs_deep_find_and_reports_usage(
    store: Any, provider_standin: ProviderStandIn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from sessionforest.cli.main import cli

    _, ids = store
    monkeypatch.delenv("FOREST_PROVIDER", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    db = str(tmp_path / "deep.db")
    runner = CliRunner()
    provider_standin.reply_text('{"answer": "c1"}', input_tokens=99, output_tokens=3)
    argv = ["--db", db, "find", "kanji flashcards", "--now", NOW.isoformat()]
    out = runner.invoke(cli, [*argv, "--deep", "--provider", "openai", "--model", "m", "--json"])
    assert out.exit_code == 0, (out.output, out.exception)
    doc = json.loads(out.stdout)
    assert (doc["tier"], doc["fallback"], doc["usage"]["input_tokens"]) == ("model", None, 99)
    assert doc["answer"] == doc["hits"][0]["session_id"]
    # Text output says which tier answered; quota is surfaced as such.
    provider_standin.reply_error(429, "insufficient_quota")
    text = runner.invoke(cli, [*argv, "--deep", "--provider", "anthropic", "--model", "m"])
    assert text.exit_code == 0 and "the index answered (quota" in text.stdout
    # Without --deep, find stays index-only: no request.
    before = len(provider_standin.requests)
    assert runner.invoke(cli, [*argv, "--json"]).exit_code == 0
    assert len(provider_standin.requests) == before
    shown = runner.invoke(cli, ["--db", db, "usage", "--json"])
    assert shown.exit_code == 0
    searches = json.loads(shown.stdout)["searches"]
    assert [(s["provider"], s["fallback"]) for s in searches] == [
        ("openai", None),
        ("anthropic", "quota"),
    ]
    listed = runner.invoke(cli, ["--db", db, "usage"])
    assert "2 deep searches" in listed.stdout
    sessions = runner.invoke(cli, ["--db", db, "sessions", "--json"])
    listed_ids = {s["id"] for s in json.loads(sessions.stdout)}
    assert listed_ids == set(ids.values())  # the usage sessions are hidden
