"""Model providers through their official SDKs: configuration, clients, one turn, streams.

Everything that talks to a model (the web UI's composer, deep search) goes
through here, so a provider is configured, built and failed the same way
everywhere:

- `ProviderConfig.resolve` picks the provider and model (flags first, then
  `FOREST_PROVIDER` / `FOREST_MODEL`); API keys and base URLs are left to the
  SDKs' own variables (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`,
  `OPENAI_API_KEY`, `OPENAI_BASE_URL`), so a local OpenAI-compatible server
  works unchanged.
- `make_client` builds the SDK's client with retries off: callers own their
  time budgets, and an SDK retrying a 429 behind their back would spend them.
  `Clients` keeps one per configuration for a long-lived process (the server:
  its deep searches and the web UI's replies share them; importing an SDK and
  opening its connection pool take seconds).
- `turn_client` is what a one-shot process (the CLI's `find --deep`) sends its
  turns with: `TurnClient`, the provider's HTTP API spoken directly over one
  kept-alive connection, because importing an SDK (its types are built at
  import) costs more than the whole search may (docs/benchmarks.md, CLI wall
  time). Its requests are the SDK's own (paths, headers that matter, bodies)
  and the same variables configure it; behind a proxy it is the SDK's client.
- `complete` runs one non-streaming, tool-free turn; `stream_events` yields a
  streamed turn's raw events as dicts, which `stream_adapter` turns into
  durable entries (adapters/).
- Every SDK failure becomes `ProviderError` with a `reason` a caller can act
  on (`classify`): quota, rate_limit, timeout, auth, bad_request or error.

The SDKs are optional (`sessionforest[anthropic]`, `sessionforest[openai]`);
without them the functions raise `BackendUnavailable` naming the extra.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

import orjson

from .errors import BackendUnavailable, InvalidArgument, ProviderError

if TYPE_CHECKING:
    from http.client import HTTPConnection

    from .adapters import StreamAdapter
    from .adapters.base import TurnWriter

ProviderName = Literal["anthropic", "openai"]
Api = Literal["messages", "responses", "chat"]

PROVIDERS: tuple[ProviderName, ...] = ("anthropic", "openai")
# The API each provider speaks by default; OpenAI also offers "chat" for servers
# that only implement Chat Completions (complete() only: streams need Responses).
DEFAULT_API: dict[ProviderName, Api] = {"anthropic": "messages", "openai": "responses"}
DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """Which provider and model to talk to, and how long one request may take."""

    provider: ProviderName
    model: str
    api: Api
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def resolve(
        cls,
        provider: str | None = None,
        model: str | None = None,
        *,
        api: str | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ProviderConfig | None:
        """The configuration from flags, then `FOREST_PROVIDER` / `FOREST_MODEL` / `FOREST_API`.

        None when no provider is named anywhere (no model configured). A
        provider without a model, an unknown provider, or an API the provider
        does not speak raises `InvalidArgument` naming the setting.
        """
        env = os.environ if env is None else env
        name = provider or env.get("FOREST_PROVIDER") or None
        if name is None:
            return None
        if name not in PROVIDERS:
            raise InvalidArgument(
                "provider",
                f"{name!r} is not one of {', '.join(PROVIDERS)} (--provider or FOREST_PROVIDER)",
            )
        chosen_model = model or env.get("FOREST_MODEL") or None
        if not chosen_model:
            raise InvalidArgument(
                "model", f"provider {name} needs a model (--model or FOREST_MODEL)"
            )
        chosen_api = api or env.get("FOREST_API") or DEFAULT_API[name]
        allowed: tuple[str, ...] = ("messages",) if name == "anthropic" else ("responses", "chat")
        if chosen_api not in allowed:
            raise InvalidArgument(
                "api", f"{name} speaks {' or '.join(allowed)}, not {chosen_api!r}"
            )
        return cls(name, chosen_model, chosen_api, timeout or DEFAULT_TIMEOUT)  # type: ignore[arg-type]

    def to_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "api": self.api}


@dataclass(frozen=True, slots=True)
class Completion:
    """One finished, tool-free turn: the reply text, token usage and model time."""

    text: str
    input_tokens: int
    output_tokens: int
    seconds: float


def _sdk(provider: ProviderName) -> Any:
    try:
        if provider == "anthropic":
            import anthropic

            return anthropic
        import openai

        return openai
    except ImportError as exc:
        raise BackendUnavailable(f"pip install 'sessionforest[{provider}]'") from exc


def make_client(cfg: ProviderConfig) -> Any:
    """The official SDK's synchronous client; keys and base URL from the SDK's variables."""
    sdk = _sdk(cfg.provider)
    factory = sdk.Anthropic if cfg.provider == "anthropic" else sdk.OpenAI
    try:
        return factory(max_retries=0, timeout=cfg.timeout)
    except Exception as exc:  # the SDK refuses to build without credentials
        raise classify(cfg, exc) from exc


class Clients:
    """One SDK client per configuration, made on first use and shared by threads (the
    SDKs' synchronous clients are safe to share: each request takes a pooled connection)."""

    def __init__(self) -> None:
        self._made: dict[ProviderConfig, Any] = {}
        self._lock = threading.Lock()

    def get(self, cfg: ProviderConfig) -> Any:
        with self._lock:
            client = self._made.get(cfg)
            if client is None:
                client = self._made[cfg] = make_client(cfg)
            return client

    def warm(self, cfg: ProviderConfig) -> None:
        """`get` ahead of the first use; a failure is left for that use to report."""
        with contextlib.suppress(Exception):
            self.get(cfg)

    def close(self) -> None:
        """Close every client's connections (best effort) and forget them."""
        with self._lock:
            made, self._made = list(self._made.values()), {}
        for client in made:
            with contextlib.suppress(Exception):
                client.close()


_QUOTA_WORDS = ("insufficient_quota", "quota", "credit balance", "billing")


def classify(cfg: ProviderConfig, exc: BaseException) -> ProviderError:
    """The `ProviderError` for an SDK exception: what went wrong, in a word a caller acts on."""
    if isinstance(exc, ProviderError):
        return exc
    sdk = _sdk(cfg.provider)
    status = getattr(exc, "status_code", None)
    body = str(getattr(exc, "body", "") or "") + " " + str(exc)
    timed_out = isinstance(exc, (sdk.APITimeoutError, TimeoutError))
    detail = str(exc).strip() or type(exc).__name__
    return ProviderError(cfg.provider, cfg.model, _reason(status, body, timed_out), detail,
                         status=status)  # fmt: skip


def _reason(status: int | None, body: str, timed_out: bool) -> str:
    """What went wrong, from the HTTP status and the error's text (SDK or raw body)."""
    lowered = body.lower()
    if timed_out:
        return "timeout"
    if status == 402 or (status in (400, 403, 429) and any(w in lowered for w in _QUOTA_WORDS)):
        return "quota"
    if status == 429:
        return "rate_limit"
    if status in (401, 403) or "api_key" in lowered or "authentication" in lowered:
        return "auth"
    if status is not None and 400 <= status < 500:
        return "bad_request"
    return "error"


# --- one-shot turns without the SDK -------------------------------------------------

# The Messages API version the Anthropic SDK sends (anthropic 2.15; a test compares the
# two clients' requests, so an SDK that moves on is noticed).
ANTHROPIC_VERSION = "2026-10-21"
DEFAULT_BASE = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}
# Any of these set: the process goes through a proxy, which the SDKs' HTTP client honours.
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY",
                   "all_proxy")  # fmt: skip


class TurnClient:
    """A provider's HTTP API for `complete` and `warm` alone, over one kept-alive
    connection, configured by the SDK's variables (key, base URL). Not shared by
    threads: one search's client."""

    def __init__(self, cfg: ProviderConfig, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self.cfg = cfg
        headers = {"content-type": "application/json", "accept": "application/json"}
        if cfg.provider == "anthropic":
            base = env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE["anthropic"]
            # The SDK sends either as a bearer token, the key winning.
            key = env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN")
            if key:
                headers["authorization"] = f"Bearer {key}"
            else:
                raise self._error("auth", "no API key: set ANTHROPIC_API_KEY")
            headers["anthropic-version"] = ANTHROPIC_VERSION
            suffix = "/v1"
        else:
            base = env.get("OPENAI_BASE_URL") or DEFAULT_BASE["openai"]
            key = env.get("OPENAI_API_KEY")
            if not key:
                raise self._error("auth", "the api_key client option must be set: OPENAI_API_KEY")
            headers["authorization"] = f"Bearer {key}"
            for variable, header in (("OPENAI_ORG_ID", "openai-organization"),
                                     ("OPENAI_PROJECT_ID", "openai-project")):  # fmt: skip
                if env.get(variable):
                    headers[header] = env[variable]
            suffix = ""
        url = urlsplit(base)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise InvalidArgument("base URL", f"{base!r} is not an http or https URL")
        self._url = url
        self._prefix = url.path.rstrip("/") + suffix
        self._headers = headers
        self._conn: HTTPConnection | None = None

    def _error(self, reason: str, detail: str, status: int | None = None) -> ProviderError:
        return ProviderError(self.cfg.provider, self.cfg.model, reason, detail, status=status)

    def _connection(self, timeout: float) -> HTTPConnection:
        if self._conn is None:
            import http.client

            host, port = self._url.hostname or "", self._url.port
            if self._url.scheme == "https":
                import ssl

                try:  # the CA bundle the SDKs' HTTP client uses
                    import certifi

                    context = ssl.create_default_context(cafile=certifi.where())
                except ImportError:
                    context = ssl.create_default_context()
                self._conn = http.client.HTTPSConnection(host, port, timeout=timeout,
                                                         context=context)  # fmt: skip
            else:
                self._conn = http.client.HTTPConnection(host, port, timeout=timeout)
        self._conn.timeout = timeout
        if self._conn.sock is not None:
            self._conn.sock.settimeout(timeout)
        return self._conn

    def request(self, method: str, path: str, body: Any, timeout: float) -> Any:
        """One request; its JSON answer. Any failure raises ProviderError (no retry)."""
        import http.client

        conn = self._connection(timeout)
        payload = None if body is None else orjson.dumps(body)
        try:
            conn.request(method, self._prefix + path, body=payload, headers=self._headers)
            response = conn.getresponse()
            raw = response.read()
        except TimeoutError as exc:
            self.close()
            raise self._error("timeout", f"Request timed out: {exc}") from exc
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            detail = f"Connection error: {exc or type(exc).__name__}"
            raise self._error(_reason(None, detail, False), detail) from exc
        if response.will_close:
            self.close()
        text = raw.decode("utf-8", "replace")
        if response.status >= 400:
            detail = f"Error code: {response.status} - {text.strip()}"
            raise self._error(_reason(response.status, text, False), detail, response.status)
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise self._error("error", f"the answer is not JSON: {text[:80]!r}") from exc

    def warm(self) -> None:
        """Open the connection with a request that is not a model turn."""
        self.request("GET", "/models", None, self.cfg.timeout)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def turn_client(cfg: ProviderConfig, env: Mapping[str, str] | None = None) -> Any:
    """The client one search sends its turns with: a `TurnClient`, or the SDK's client
    (`make_client`) when a proxy is configured (the SDK's HTTP client honours it)."""
    env = os.environ if env is None else env
    if any(env.get(variable) for variable in PROXY_VARIABLES):
        return make_client(cfg)
    return TurnClient(cfg, env)


def warm(client: Any) -> None:
    """Open a client's connection with a request that is not a model turn; best
    effort (the turn itself reports failures)."""
    try:
        if isinstance(client, TurnClient):
            client.warm()
        else:
            client.models.list()
    except Exception:
        return


def _turn(
    client: TurnClient, system: str, messages: Sequence[Mapping[str, Any]], max_tokens: int,
    timeout: float,
) -> tuple[str, int, int]:  # fmt: skip
    """(text, input tokens, output tokens) of one turn sent as the SDK would send it."""
    cfg = client.cfg
    if cfg.provider == "anthropic":
        body = {"model": cfg.model, "max_tokens": max_tokens, "system": system,
                "messages": list(messages)}  # fmt: skip
        data = client.request("POST", "/messages", body, timeout)
        text = "".join(
            str(b.get("text") or "") for b in data.get("content") or () if b.get("type") == "text"
        )
        usage = data.get("usage") or {}
        return text, int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    if cfg.api == "responses":
        body = {"model": cfg.model, "instructions": system, "input": list(messages),
                "max_output_tokens": max_tokens, "store": False}  # fmt: skip
        data = client.request("POST", "/responses", body, timeout)
        # The SDK's `output_text`: every output_text part of the message items, joined.
        text = "".join(
            str(part.get("text") or "")
            for item in data.get("output") or ()
            if item.get("type") == "message"
            for part in item.get("content") or ()
            if part.get("type") == "output_text"
        )
        usage = data.get("usage") or {}
        return text, int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
    body = {"model": cfg.model, "messages": [{"role": "system", "content": system}, *messages],
            "max_tokens": max_tokens}  # fmt: skip
    data = client.request("POST", "/chat/completions", body, timeout)
    choices = data.get("choices") or []
    text = str((choices[0].get("message") or {}).get("content") or "") if choices else ""
    usage = data.get("usage") or {}
    return text, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def _usage(cfg: ProviderConfig, response: Any) -> tuple[int, int]:
    usage = getattr(response, "usage", None)
    if usage is None:
        return 0, 0
    if cfg.provider == "anthropic" or cfg.api == "responses":
        return int(usage.input_tokens or 0), int(usage.output_tokens or 0)
    return int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)


def _text(cfg: ProviderConfig, response: Any) -> str:
    if cfg.provider == "anthropic":
        return "".join(b.text for b in response.content if getattr(b, "type", "") == "text")
    if cfg.api == "responses":
        return str(response.output_text or "")
    choice = response.choices[0] if response.choices else None
    return str(choice.message.content or "") if choice is not None else ""


def complete(
    cfg: ProviderConfig,
    client: Any,
    *,
    system: str,
    messages: Sequence[Mapping[str, Any]],
    max_tokens: int,
    timeout: float | None = None,
) -> Completion:
    """One tool-free, non-streaming turn. `messages` are user/assistant turns of plain text.

    `timeout` bounds this request (the SDK aborts it); any failure raises
    `ProviderError` with its reason.
    """
    limit = cfg.timeout if timeout is None else timeout
    started = time.perf_counter()
    if isinstance(client, TurnClient):
        text, tokens_in, tokens_out = _turn(client, system, messages, max_tokens, limit)
        return Completion(text, tokens_in, tokens_out, time.perf_counter() - started)
    try:
        if cfg.provider == "anthropic":
            response = client.messages.create(
                model=cfg.model,
                max_tokens=max_tokens,
                system=system,
                messages=list(messages),
                timeout=limit,
            )
        elif cfg.api == "responses":
            response = client.responses.create(
                model=cfg.model,
                instructions=system,
                input=list(messages),
                max_output_tokens=max_tokens,
                store=False,
                timeout=limit,
            )
        else:
            response = client.chat.completions.create(
                model=cfg.model,
                messages=[{"role": "system", "content": system}, *messages],
                max_tokens=max_tokens,
                timeout=limit,
            )
    except Exception as exc:
        raise classify(cfg, exc) from exc
    seconds = time.perf_counter() - started
    tokens_in, tokens_out = _usage(cfg, response)
    return Completion(_text(cfg, response), tokens_in, tokens_out, seconds)


def stream_events(
    cfg: ProviderConfig,
    client: Any,
    *,
    system: str | list[Any] | None,
    messages: Sequence[Any],
    max_tokens: int,
) -> Iterator[dict[str, Any]]:
    """A streamed turn's raw events, as JSON dicts, for `stream_adapter`.

    `system`/`messages` are what `to_anthropic` or `to_openai(api="responses")`
    render from a projection. Closing the iterator closes the HTTP stream (stop).
    A failure raises `ProviderError`; events already yielded stay valid.
    """
    if cfg.provider == "openai" and cfg.api != "responses":
        raise InvalidArgument("api", "streaming into the forest needs the OpenAI Responses API")
    try:
        if cfg.provider == "anthropic":
            kwargs: dict[str, Any] = {"model": cfg.model, "max_tokens": max_tokens}
            if system:
                kwargs["system"] = system
            stream = client.messages.create(messages=list(messages), stream=True, **kwargs)
        else:
            extra: dict[str, Any] = {"instructions": system} if isinstance(system, str) else {}
            stream = client.responses.create(
                model=cfg.model,
                input=list(messages),
                max_output_tokens=max_tokens,
                stream=True,
                store=False,
                **extra,
            )
    except Exception as exc:
        raise classify(cfg, exc) from exc
    from .adapters.base import as_event

    try:
        for event in stream:
            raw = as_event(event)
            if raw is not None:
                yield raw
    except GeneratorExit:
        stream.close()
        raise
    except Exception as exc:
        stream.close()
        raise classify(cfg, exc) from exc


def stream_adapter(
    cfg: ProviderConfig, forest: TurnWriter, session_id: str, *, keep_notifications: bool = True
) -> StreamAdapter:
    """The stream adapter that records this provider's events into `session_id`."""
    from .adapters import AnthropicStreamAdapter, OpenAIResponsesStreamAdapter

    cls = AnthropicStreamAdapter if cfg.provider == "anthropic" else OpenAIResponsesStreamAdapter
    return cls(forest, session_id, keep_notifications=keep_notifications)
