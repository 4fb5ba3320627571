"""The provider layer through the real SDKs, against the local stand-in server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest, project, to_anthropic, to_openai
from sessionforest.errors import InvalidArgument, ProviderError, Unavailable, family
from sessionforest.providers import (
    ProviderConfig,
    TurnClient,
    complete,
    make_client,
    stream_adapter,
    stream_events,
    turn_client,
    warm,
)
from standin import Reply, anthropic_events, openai_events

CONFIGS = [
    ProviderConfig("anthropic", "claude-test", "messages"),
    ProviderConfig("openai", "gpt-test", "responses"),
    ProviderConfig("openai", "gpt-test", "chat"),
]
IDS = ["anthropic", "openai-responses", "openai-chat"]
# A one-shot turn goes through either: the SDK's client, or the HTTP API spoken directly
# (what a CLI deep search uses); both must send the same turn and fail the same way.
MAKERS = pytest.mark.parametrize("make", [make_client, TurnClient], ids=["sdk", "direct"])


def test_resolve_reads_flags_then_environment() -> None:
    assert ProviderConfig.resolve(env={}) is None
    env = {"FOREST_PROVIDER": "openai", "FOREST_MODEL": "local-model"}
    cfg = ProviderConfig.resolve(env=env)
    assert cfg == ProviderConfig("openai", "local-model", "responses")
    flagged = ProviderConfig.resolve("anthropic", "claude-x", env=env)
    assert flagged is not None and flagged.provider == "anthropic" and flagged.api == "messages"
    chat = ProviderConfig.resolve(env=env | {"FOREST_API": "chat"})
    assert chat is not None and chat.api == "chat"


@pytest.mark.parametrize(
    ("provider", "model", "api", "named"),
    [
        ("gemini", "m", None, "provider"),
        ("openai", None, None, "model"),
        ("anthropic", "m", "responses", "api"),
    ],
)
def test_resolve_names_the_bad_setting(
    provider: str, model: str | None, api: str | None, named: str
) -> None:
    with pytest.raises(InvalidArgument) as caught:
        ProviderConfig.resolve(provider, model, api=api, env={})
    assert caught.value.argument == named


@MAKERS
@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_complete_sends_one_tool_free_turn(
    provider_standin: Any, cfg: ProviderConfig, make: Any
) -> None:
    provider_standin.reply_text('{"answer": "c2"}', input_tokens=321, output_tokens=7)
    done = complete(
        cfg,
        make(cfg),
        system="Pick a chat.",
        messages=[{"role": "user", "content": "which chat?"}],
        max_tokens=50,
    )
    assert (done.text, done.input_tokens, done.output_tokens) == ('{"answer": "c2"}', 321, 7)
    assert done.seconds > 0
    (request,) = provider_standin.requests
    assert "tools" not in request.body
    assert request.body["model"] == cfg.model
    sent = repr(request.body)
    assert "Pick a chat." in sent and "which chat?" in sent


@pytest.mark.parametrize(
    ("status", "code", "reason"),
    [
        (429, "insufficient_quota", "quota"),
        (429, "rate_limit_exceeded", "rate_limit"),
        (401, "invalid_api_key", "auth"),
        (400, "invalid_request", "bad_request"),
        (500, "server_error", "error"),
    ],
)
@MAKERS
@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_failures_become_provider_errors_with_a_reason(
    provider_standin: Any, cfg: ProviderConfig, status: int, code: str, reason: str, make: Any
) -> None:
    provider_standin.reply_error(status, code)
    with pytest.raises(ProviderError) as caught:
        complete(
            cfg,
            make(cfg),
            system="s",
            messages=[{"role": "user", "content": "q"}],
            max_tokens=5,
        )
    error = caught.value
    assert (error.reason, error.status, error.provider) == (reason, status, cfg.provider)
    assert isinstance(error, Unavailable) and family(error).exit_code == 5
    assert cfg.model in str(error)
    assert len(provider_standin.requests) == 1  # retries are off: the caller owns the budget


@MAKERS
@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_a_slow_provider_times_out(provider_standin: Any, cfg: ProviderConfig, make: Any) -> None:
    provider_standin.reply(Reply(delay=1.0))
    with pytest.raises(ProviderError) as caught:
        complete(
            cfg,
            make(cfg),
            system="s",
            messages=[{"role": "user", "content": "q"}],
            max_tokens=5,
            timeout=0.2,
        )
    assert caught.value.reason == "timeout"


@MAKERS
def test_a_missing_key_is_an_auth_error(
    provider_standin: Any, monkeypatch: pytest.MonkeyPatch, make: Any
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    cfg = CONFIGS[1]
    with pytest.raises(ProviderError) as caught:
        make(cfg)
    assert caught.value.reason == "auth"


@pytest.mark.parametrize("cfg", CONFIGS, ids=IDS)
def test_the_direct_client_sends_what_the_sdk_sends(
    provider_standin: Any, cfg: ProviderConfig
) -> None:
    """Same path, same body, the key in the same header, warmed on one connection."""
    sent = []
    for make in (make_client, TurnClient):
        provider_standin.reply_text('{"answer": null}')
        client = make(cfg)
        warm(client)
        complete(cfg, client, system="s", messages=[{"role": "user", "content": "q"}],
                 max_tokens=5)  # fmt: skip
        assert provider_standin.open_connections == 1  # the warmed one, reused
        client.close()
        sent.append(provider_standin.requests[-2:])
        provider_standin.requests.clear()
    (sdk_warm, sdk_turn), (direct_warm, direct_turn) = sent
    assert (direct_warm.path, direct_turn.path) == (sdk_warm.path, sdk_turn.path)
    assert direct_turn.body == sdk_turn.body
    for header in ("x-api-key", "authorization", "anthropic-version"):
        assert direct_turn.headers.get(header) == sdk_turn.headers.get(header)


def test_a_proxy_leaves_the_turns_to_the_sdk(provider_standin: Any) -> None:
    cfg = CONFIGS[0]
    assert isinstance(turn_client(cfg, env={"ANTHROPIC_API_KEY": "k"}), TurnClient)
    behind = turn_client(cfg, env={"ANTHROPIC_API_KEY": "k", "HTTPS_PROXY": "http://p:3128"})
    assert not isinstance(behind, TurnClient)


def _chat(tmp_path: Path) -> tuple[Forest, str]:
    forest = Forest.open(tmp_path / "f.db")
    sid = forest.create_session(title="talk")
    forest.append(
        sid, "user.message", {"content": [{"type": "text", "text": "capital of France?"}]}
    )
    return forest, sid


@pytest.mark.parametrize("cfg", CONFIGS[:2], ids=IDS[:2])
def test_a_streamed_turn_is_recorded_through_the_adapter(
    provider_standin: Any, cfg: ProviderConfig, tmp_path: Path
) -> None:
    forest, sid = _chat(tmp_path)
    provider_standin.reply_text("Paris is the capital.", chunks=4)
    messages = project(forest, sid)
    if cfg.provider == "anthropic":
        request = to_anthropic(messages, session_id=sid)
        system, sent = request.get("system"), request["messages"]
    else:
        system, sent = None, to_openai(messages, "responses", session_id=sid)
    adapter = stream_adapter(cfg, forest, sid)
    deltas = 0
    done = None
    for event in stream_events(cfg, make_client(cfg), system=system, messages=sent, max_tokens=100):
        deltas += event["type"] in ("content_block_delta", "response.output_text.delta")
        done = adapter.feed(event) or done
    assert done is not None and done.complete
    assert deltas >= 3
    path = forest.active_path(sid)
    assert path[-1].kind == "assistant.message"
    texts = [b["text"] for b in path[-1].payload["content"] if b["type"] == "text"]
    assert texts == ["Paris is the capital."]
    assert "capital of France?" in repr(provider_standin.requests[0].body)
    forest.close()


@pytest.mark.parametrize("cfg", CONFIGS[:2], ids=IDS[:2])
def test_stopping_a_stream_records_an_incomplete_message(
    provider_standin: Any, cfg: ProviderConfig, tmp_path: Path
) -> None:
    forest, sid = _chat(tmp_path)
    provider_standin.reply(Reply(text="one two three four five six", chunks=6, chunk_delay=0.05))
    adapter = stream_adapter(cfg, forest, sid)
    events = stream_events(
        cfg,
        make_client(cfg),
        system=None,
        messages=[{"role": "user", "content": "x"}],
        max_tokens=9,
    )
    for event in events:
        adapter.feed(event)
        if "delta" in event["type"]:
            break
    events.close()  # the user's stop: the HTTP stream is closed
    stopped = adapter.interrupt()
    assert stopped is not None and not stopped.complete
    assert forest.active_path(sid)[-1].payload["incomplete"] is True
    forest.close()


def test_streaming_needs_the_responses_api() -> None:
    with pytest.raises(InvalidArgument):
        next(stream_events(CONFIGS[2], None, system=None, messages=[], max_tokens=1))


def test_the_standin_streams_what_the_adapters_accept(tmp_path: Path) -> None:
    """The generated streams are valid adapter input on their own, without an SDK between."""
    forest, sid = _chat(tmp_path)
    for cfg, events in (
        (CONFIGS[0], anthropic_events(Reply(text="hi there"), "m")),
        (CONFIGS[1], openai_events(Reply(text="hi there"), "m")),
    ):
        adapter = stream_adapter(cfg, forest, sid)
        results = [adapter.feed(e) for e in events]
        assert results[-1] is not None and results[-1].complete
    forest.close()
