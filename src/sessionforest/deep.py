"""Deep search (T2): a strictly bounded, tool-free model search behind the gate.

Only for a deep request the gate did not settle. The model gets a short
system prompt, the query and one ~60-token card per T1 candidate (`c1`,
`c2`, …: title, time, harness, a redacted snippet) and answers with ONE JSON
object, nothing else acted on:

    {"lookup": "find_chats", "query": "..."}   T1 again with new words: new cards
    {"lookup": "peek_chat", "chat": "c3"}      the best-matching redacted window
    {"lookup": "chat_outline", "chat": "c3"}   title, checkpoints and summaries
    {"answer": "c3"} / {"answer": null}

We run each lookup, truncate it and send it back. Budgets are ours, not asked
of the model: at most `MAX_LOOKUPS` lookups, `LOOKUP_TOKENS` lookup tokens in
total (`estimate_tokens`, a documented conservative estimate), `MODEL_SECONDS`
of model time (each request's timeout is what is left; building the client
and warming its connection happen before and count only in `elapsed_ms`).
Any overrun, a malformed reply, an answer or lookup naming a chat the model
was not shown, a provider error or timeout, or a quota / rate-limit error
ends the loop with the index's answer and `fallback` saying which.

Everything model-bound is cut from text that `redact.redact` cleaned whole
(entry bodies, titles). Each deep search that reaches a model is recorded as
a hidden `chat_search` session holding one `provider.notification` entry
with the usage (`task_family: "chat_search"`); no chat's forest is written.
The protocol and prompt are documented in docs/deep-search.md.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Final, Literal

import msgspec

from . import providers, redact
from .entrytext import entry_text
from .errors import BackendUnavailable, ProviderError
from .model import SessionVisibility
from .providers import ProviderConfig
from .search.results import ChatHit, ChatSearch
from .wire import DeepSearchJson, UsageJson, UsageRecordJson

MAX_LOOKUPS: Final = 3
LOOKUP_TOKENS: Final = 2000
MODEL_SECONDS: Final = 8.0
LOOKUP_CAP: Final = 800  # tokens one lookup's result is truncated to
PEEK_CHARS: Final = 1200  # characters of one matching entry a peek shows
CARD_TOKENS: Final = 60
CARDS: Final = 8  # T1 candidates carded at the start
FOUND_CARDS: Final = 5  # new cards one find_chats may add
REPLY_TOKENS: Final = 120  # a reply is one small JSON object
BYTES_PER_TOKEN: Final = 3  # conservative: English runs ~4 bytes a token
PRESTART_TTL: Final = 180.0
TASK_FAMILY: Final = "chat_search"
HARNESS: Final = "chat_search"

Fallback = Literal[
    "timeout", "lookup_budget", "token_budget", "invalid_answer", "provider_error", "quota"
]
FALLBACKS: Final = (
    "timeout",
    "lookup_budget",
    "token_budget",
    "invalid_answer",
    "provider_error",
    "quota",
)

SYSTEM: Final = """You help a user find one of their past chats. You have no tools.
You see the user's search and cards of candidate chats, labelled c1, c2, ...
Reply with exactly one JSON object and nothing else, one of:
{"lookup": "find_chats", "query": "<other words>"}  search again; new cards come back
{"lookup": "peek_chat", "chat": "c3"}                the best-matching excerpt of c3
{"lookup": "chat_outline", "chat": "c3"}             c3's title, checkpoints and summaries
{"answer": "c3"}                                     c3 is the chat the user means
{"answer": null}                                     none of the cards is it
At most 3 lookups. Answer only with a label you were shown. Be quick."""


def estimate_tokens(text: str) -> int:
    """A conservative token count: one token per 3 bytes of UTF-8 (tokenizers average
    about 4 bytes of English a token, so this over-counts; never under)."""
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


def truncate_tokens(text: str, tokens: int) -> str:
    """`text` cut to at most `tokens` by `estimate_tokens`, with `…` when cut."""
    if estimate_tokens(text) <= tokens:
        return text
    raw = text.encode("utf-8")[: max(0, tokens * BYTES_PER_TOKEN - 3)]
    return raw.decode("utf-8", "ignore").rstrip() + "…"


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"\w+", text.lower()) if len(w) > 2]


def window(text: str, words: Sequence[str], chars: int) -> str:
    """About `chars` characters of (already redacted) `text` around the first of `words`."""
    flat = " ".join(text.split())
    if len(flat) <= chars:
        return flat
    lowered = flat.lower()
    at = min((i for w in words if (i := lowered.find(w)) >= 0), default=0)
    start = max(0, min(at - chars // 3, len(flat) - chars))
    piece = flat[start : start + chars]
    return ("…" if start else "") + piece + ("…" if start + chars < len(flat) else "")


def redacted_window(text: str, words: Sequence[str], chars: int) -> str:
    """`window(redact(text), words, chars)`, scanning only the lines the window can reach.

    A line's secrets are found in that line alone (detect-secrets is a line
    scanner; `redact.redact_lines` reads a private key's block from the lines
    before), so every line the excerpt shows is redacted as in the whole body:
    the lines around the first one holding a word, at least `chars` flattened
    characters before it and twice that after. A long body's card no longer
    scans all of it.
    """
    lines = text.splitlines(keepends=True)
    flat = [len(" ".join(line.split())) + 1 for line in lines]
    if sum(flat) <= 4 * chars:
        return window(redact.redact(text).text, words, chars)
    hit = next((i for i, line in enumerate(lines) if any(w in line.lower() for w in words)), 0)
    first, reach = hit, 0
    while first > 0 and reach < chars:
        first -= 1
        reach += flat[first]
    last, reach = hit + 1, 0
    while last < len(lines) and reach < 2 * chars:
        reach += flat[last]
        last += 1
    excerpt = window(redact.redact_lines(lines, first, last).text, words, chars)
    if first > 0 and not excerpt.startswith("…"):
        excerpt = "…" + excerpt
    if last < len(lines) and not excerpt.endswith("…"):
        excerpt += "…"
    return excerpt


@dataclass(slots=True)
class Card:
    label: str
    hit: ChatHit
    snippet: str

    def render(self) -> str:
        when = self.hit.updated_at[:16].replace("T", " ")
        title = truncate_tokens(redact.redact(self.hit.title).text, 15)
        return f"{self.label} | {title} | {when} | {self.hit.harness or '-'} | {self.snippet}"


@dataclass(frozen=True, slots=True)
class DeepSearch:
    search: ChatSearch  # hits: the model's answer first when it named one
    tier: str
    fallback: str | None = None
    fallback_detail: str | None = None
    answer: str | None = None
    lookups: int = 0
    lookup_tokens: int = 0
    usage: UsageJson | None = None
    elapsed_ms: int = 0
    model_ms: int = 0
    prestarted: bool = False
    usage_session: str | None = None

    def line(self) -> str:
        """One line saying which tier answered (under `forest find --deep`'s card)."""
        if self.fallback is not None:
            return f"  deep: the index answered ({self.fallback}: {self.fallback_detail})"
        if self.tier == "index":
            return "  deep: the index was sure; no model asked"
        named = self.answer or "none of the chats"
        return (
            f"  deep: the model chose {named} after {self.lookups} lookups, "
            f"{self.elapsed_ms} ms ({self.model_ms} ms model)"
        )

    def to_json(self) -> DeepSearchJson:
        doc = self.search.to_json()
        return {
            **doc,
            "tier": self.tier,
            "fallback": self.fallback,
            "fallback_detail": self.fallback_detail,
            "answer": self.answer,
            "lookups": self.lookups,
            "lookup_tokens": self.lookup_tokens,
            "usage": self.usage,
            "elapsed_ms": self.elapsed_ms,
            "model_ms": self.model_ms,
            "prestarted": self.prestarted,
        }


@dataclass(slots=True)
class Prepared:
    """A deep search made ready without a model turn: client built, connection
    warmed, T1 run, cards cut from redacted bodies. Used once."""

    cfg: ProviderConfig
    client: Any
    query: str
    now: datetime | None
    limit: int
    harness: str | None
    search: ChatSearch
    cards: list[Card]
    started: float  # perf_counter when preparing began
    prepared_s: float  # how long preparing took
    made: float = field(default_factory=time.monotonic)
    used: bool = False
    owned: bool = True  # the client was made for this search alone (else: a shared cache's)

    def matches(self, query: str, limit: int, harness: str | None) -> bool:
        return (self.query, self.limit, self.harness) == (query, limit, harness)


def release(prepared: Prepared | None) -> None:
    """Close a prepared search's own SDK client (its pooled connection); best effort.
    A client from a shared `providers.Clients` stays open for the next search."""
    if prepared is None or not prepared.owned:
        return
    close = getattr(prepared.client, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # closing a broken connection must not fail the caller
            return


def _card(forest: Any, label: str, hit: ChatHit, words: Sequence[str]) -> Card:
    body = _best_text(forest, hit.session_id, words)
    title_tokens = estimate_tokens(hit.title[:60]) + 12
    excerpt = redacted_window(body, words, 200)
    return Card(label, hit, truncate_tokens(excerpt, max(10, CARD_TOKENS - title_tokens)))


def _best_body(forest: Any, session_id: str, words: Sequence[str]) -> str:
    """The whole redacted body of the chat's best-matching entry (its opening if none)."""
    return redact.redact(_best_text(forest, session_id, words)).text


def _best_text(forest: Any, session_id: str, words: Sequence[str]) -> str:
    """The text of the chat's best-matching entry (its opening if none), not redacted."""
    entry = None
    if words:
        found = forest.search_session_entries(session_id, " OR ".join(words[:6]), 1)
        if found:
            entry = forest.entry(session_id, found[0].entry_id)
    if entry is None:
        page = forest.entries_after(session_id, 0, 4)
        entry = next((e for e in page if (entry_text(e.kind, e.payload) or "").strip()), None)
    return entry_text(entry.kind, entry.payload) or "" if entry is not None else ""


def _query_words(search: ChatSearch) -> list[str]:
    terms = [t.strip('"') for t in search.terms]
    return [w for t in terms for w in _words(t)] or _words(search.query)


def prepare(
    forest: Any,
    query: str,
    cfg: ProviderConfig,
    *,
    now: datetime | None = None,
    limit: int = 8,
    harness: str | None = None,
    search: ChatSearch | None = None,
    clients: providers.Clients | None = None,
) -> Prepared:
    """Everything before the first model turn. Raises ProviderError / BackendUnavailable.

    The SDK client comes from `clients` when given (a long-lived process's shared
    cache), else it is made for this search and closed by `release`."""
    started = time.perf_counter()
    if not redact.available():
        raise BackendUnavailable("pip install 'sessionforest[deep]' (detect-secrets)")
    client = clients.get(cfg) if clients is not None else providers.turn_client(cfg)
    providers.warm(client)
    found = search if search is not None else forest.search_chats(query, now, limit, harness)
    words = _query_words(found)
    cards = [_card(forest, f"c{i}", hit, words) for i, hit in enumerate(found.hits[:CARDS], 1)]
    return Prepared(
        cfg, client, query, now, limit, harness, found, cards, started,
        time.perf_counter() - started, owned=clients is None,
    )  # fmt: skip


class _Stop(Exception):
    def __init__(self, fallback: str, detail: str) -> None:
        super().__init__(detail)
        self.fallback = fallback
        self.detail = detail


def parse_reply(text: str) -> dict[str, Any]:
    """The one JSON object a reply must be; `_Stop("invalid_answer")` otherwise."""
    try:
        value = json.loads(text.strip())
    except ValueError:
        raise _Stop("invalid_answer", f"the reply is not one JSON object: {text[:80]!r}") from None
    if not isinstance(value, dict):
        raise _Stop("invalid_answer", f"the reply is not a JSON object: {text[:80]!r}")
    answer = value.get("answer", 0)
    if len(value) == 1 and (answer is None or isinstance(answer, str)):
        return value
    lookup = value.get("lookup")
    if lookup == "find_chats" and isinstance(value.get("query"), str) and value["query"].strip():
        return value
    if lookup in ("peek_chat", "chat_outline") and isinstance(value.get("chat"), str):
        return value
    raise _Stop("invalid_answer", f"not a lookup or an answer: {text[:80]!r}")


@dataclass(slots=True)
class _Loop:
    prepared: Prepared
    forest: Any
    model_s: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    lookups: int = 0
    lookup_tokens: int = 0
    calls: int = 0
    cards: dict[str, Card] = field(default_factory=dict)
    extra_words: list[str] = field(default_factory=list)

    def shown(self, label: str) -> Card:
        card = self.cards.get(label)
        if card is None:
            raise _Stop("invalid_answer", f"{label!r} names a chat the model was not shown")
        return card

    def turn(self, messages: list[dict[str, Any]]) -> str:
        cfg = self.prepared.cfg
        left = MODEL_SECONDS - self.model_s
        if left <= 0:
            raise _Stop("timeout", f"model time used up ({MODEL_SECONDS:.0f} s)")
        t = time.perf_counter()
        try:
            done = providers.complete(
                cfg,
                self.prepared.client,
                system=SYSTEM,
                messages=messages,
                max_tokens=REPLY_TOKENS,
                timeout=left,
            )
        except ProviderError as exc:
            self.model_s += time.perf_counter() - t
            if exc.reason == "timeout":
                raise _Stop("timeout", f"no reply within the {MODEL_SECONDS:.0f} s budget") from exc
            if exc.reason in ("quota", "rate_limit"):
                what = "quota used up" if exc.reason == "quota" else "rate limited"
                raise _Stop("quota", f"{cfg.provider}: {what}: {exc.detail}") from exc
            raise _Stop("provider_error", str(exc)) from exc
        self.calls += 1
        self.model_s += done.seconds
        self.input_tokens += done.input_tokens
        self.output_tokens += done.output_tokens
        if self.model_s > MODEL_SECONDS:
            raise _Stop("timeout", f"model time {self.model_s:.1f} s is over {MODEL_SECONDS:.0f} s")
        return done.text

    def lookup(self, request: dict[str, Any]) -> str:
        self.lookups += 1
        if self.lookups > MAX_LOOKUPS:
            raise _Stop("lookup_budget", f"a lookup beyond the {MAX_LOOKUPS} allowed")
        kind = request["lookup"]
        if kind == "find_chats":
            text = self.find_chats(request["query"])
        elif kind == "peek_chat":
            text = self.peek(self.shown(request["chat"]))
        else:
            text = self.outline(self.shown(request["chat"]))
        text = truncate_tokens(text, LOOKUP_CAP)
        cost = estimate_tokens(text)
        if self.lookup_tokens + cost > LOOKUP_TOKENS:
            raise _Stop(
                "token_budget",
                f"lookups would take {self.lookup_tokens + cost} tokens (budget {LOOKUP_TOKENS})",
            )
        self.lookup_tokens += cost
        return text

    def find_chats(self, query: str) -> str:
        p = self.prepared
        found = self.forest.search_chats(query, p.now, p.limit, p.harness)
        words = _query_words(found)
        self.extra_words += words
        known = {c.hit.session_id: c.label for c in self.cards.values()}
        lines = []
        for hit in found.hits[:FOUND_CARDS]:
            if hit.session_id in known:
                lines.append(f"{known[hit.session_id]} (shown already)")
                continue
            label = f"c{len(self.cards) + 1}"
            card = _card(self.forest, label, hit, words)
            self.cards[label] = card
            lines.append(card.render())
        return "\n".join(lines) or "no chat matched"

    def peek(self, card: Card) -> str:
        words = _query_words(self.prepared.search) + self.extra_words
        sid = card.hit.session_id
        hits = self.forest.search_session_entries(sid, " OR ".join(words[:6]), 3) if words else []
        parts = []
        for hit in hits:
            found = self.forest.entry(sid, hit.entry_id)
            body = redact.redact(entry_text(found.kind, found.payload) or "").text
            parts.append(f"[{hit.kind} #{hit.sequence}] {window(body, words, PEEK_CHARS)}")
        if not parts:
            parts.append(_best_body(self.forest, sid, ()))
        return f"{card.label} excerpt:\n" + "\n".join(parts)

    def outline(self, card: Card) -> str:
        sid = card.hit.session_id
        lines = [f"{card.label} title: {redact.redact(card.hit.title).text}"]
        for entry in self.forest.entries(sid):
            if entry.kind in ("checkpoint", "compaction", "branch.summary"):
                text = redact.redact(entry_text(entry.kind, entry.payload) or "").text
                lines.append(f"[{entry.kind}] {window(text, (), 400)}")
        if len(lines) == 1:
            lines.append(f"opening: {window(_best_body(self.forest, sid, ()), (), 300)}")
        return "\n".join(lines)


def _first_prompt(prepared: Prepared) -> str:
    cards = "\n".join(c.render() for c in prepared.cards) or "(no candidates)"
    query = redact.redact(prepared.query).text
    return (
        f"Search: {query}\n\nCandidates (label | title | last active | harness | excerpt):\n{cards}"
    )


def run(forest: Any, prepared: Prepared, *, began: float | None = None) -> DeepSearch:
    """The loop over a prepared search; never raises for model trouble (falls back).

    `began`: perf_counter when the user's deep request started (elapsed time
    counts from it; default: when preparing began).
    """
    if prepared.used:
        raise ValueError("a prepared deep search is used once")
    prepared.used = True
    began = prepared.started if began is None else began
    loop = _Loop(prepared, forest)
    loop.cards = {c.label: c for c in prepared.cards}
    messages: list[dict[str, Any]] = [{"role": "user", "content": _first_prompt(prepared)}]
    answer: str | None = None
    fallback = detail = None
    try:
        while True:
            text = loop.turn(messages)
            reply = parse_reply(text)
            if "answer" in reply:
                if reply["answer"] is not None:
                    answer = loop.shown(reply["answer"]).hit.session_id
                break
            result = loop.lookup(reply)
            messages += [
                {"role": "assistant", "content": text.strip()},
                {"role": "user", "content": f"Lookup result:\n{result}"},
            ]
    except _Stop as stop:
        fallback, detail, answer = stop.fallback, stop.detail, None
    search = prepared.search
    if answer is not None:
        chosen = next(c.hit for c in loop.cards.values() if c.hit.session_id == answer)
        rest = tuple(h for h in search.hits if h.session_id != answer)
        search = msgspec.structs.replace(search, hits=(chosen, *rest)[: prepared.limit])
    usage: UsageJson = {
        "provider": prepared.cfg.provider,
        "model": prepared.cfg.model,
        "input_tokens": loop.input_tokens,
        "output_tokens": loop.output_tokens,
    }
    return DeepSearch(
        search,
        "index" if fallback else "model",
        fallback,
        detail,
        answer,
        min(loop.lookups, MAX_LOOKUPS),
        loop.lookup_tokens,
        usage,
        round((time.perf_counter() - began) * 1000),
        round(loop.model_s * 1000),
    )


def record_usage(forest: Any, result: DeepSearch) -> str | None:
    """The hidden `chat_search` session holding this search's usage (None: read-only store)."""
    if result.usage is None or getattr(forest, "readonly", False):
        return None
    sid: str = forest.create_session("chat search", HARNESS, visibility=SessionVisibility.HIDDEN)
    event = {
        "type": "usage",
        "task_family": TASK_FAMILY,
        **result.usage,
        "tier": result.tier,
        "fallback": result.fallback,
        "lookups": result.lookups,
        "lookup_tokens": result.lookup_tokens,
        "elapsed_ms": result.elapsed_ms,
        "model_ms": result.model_ms,
        "prestarted": result.prestarted,
    }
    forest.append(
        sid, "provider.notification", {"provider": result.usage["provider"], "event": event}
    )
    return sid


def usage(forest: Any) -> list[UsageRecordJson]:
    """Every recorded deep search, oldest first."""
    out: list[UsageRecordJson] = []
    for info in forest.sessions(include_hidden=True):
        if info.harness != HARNESS or info.visibility != SessionVisibility.HIDDEN:
            continue
        for entry in forest.entries(info.id):
            event = entry.payload.get("event") if entry.kind == "provider.notification" else None
            if not isinstance(event, dict) or event.get("task_family") != TASK_FAMILY:
                continue
            out.append(
                {
                    "session_id": info.id,
                    "created_at": entry.created_at,
                    "provider": str(event.get("provider", "")),
                    "model": str(event.get("model", "")),
                    "input_tokens": int(event.get("input_tokens", 0)),
                    "output_tokens": int(event.get("output_tokens", 0)),
                    "lookups": int(event.get("lookups", 0)),
                    "lookup_tokens": int(event.get("lookup_tokens", 0)),
                    "elapsed_ms": int(event.get("elapsed_ms", 0)),
                    "model_ms": int(event.get("model_ms", 0)),
                    "tier": str(event.get("tier", "")),
                    "fallback": event.get("fallback"),
                    "task_family": TASK_FAMILY,
                }
            )
    return out


def deep_search(
    forest: Any,
    query: str,
    cfg: ProviderConfig | None,
    *,
    now: datetime | None = None,
    limit: int = 8,
    harness: str | None = None,
    prepared: Prepared | None = None,
    record: bool = True,
    clients: providers.Clients | None = None,
) -> DeepSearch:
    """find-a-chat with the model tier: T1 and the gate first; a model only when the
    gate is unsure and a provider is configured. Never worse than the index.

    `clients`: where the SDK client comes from (the server's shared cache);
    without it one is made for this search."""
    began = time.perf_counter()
    if prepared is not None and not prepared.used and prepared.matches(query, limit, harness):
        search = prepared.search
    else:
        prepared = None
        search = forest.search_chats(query, now, limit, harness)
    if search.confident:
        return DeepSearch(search, "index", elapsed_ms=round((time.perf_counter() - began) * 1000))
    if cfg is None:
        return DeepSearch(
            search,
            "index",
            "provider_error",
            "no model configured (--provider/--model or FOREST_PROVIDER/FOREST_MODEL)",
            elapsed_ms=round((time.perf_counter() - began) * 1000),
        )
    warm = prepared is not None
    if prepared is None:
        try:
            prepared = prepare(
                forest, query, cfg, now=now, limit=limit, harness=harness, search=search,
                clients=clients,
            )  # fmt: skip
        except (ProviderError, BackendUnavailable) as exc:
            reason = getattr(exc, "reason", "error")
            fallback = "quota" if reason in ("quota", "rate_limit") else "provider_error"
            return DeepSearch(
                search,
                "index",
                fallback,
                str(exc),
                elapsed_ms=round((time.perf_counter() - began) * 1000),
            )
    try:
        result = replace(run(forest, prepared, began=began), prestarted=warm)
    finally:
        release(prepared)
    if record:
        result = replace(result, usage_session=record_usage(forest, result))
    return result


@dataclass(eq=False)
class _Slot:
    """One client's pre-start: when it was begun, the thread preparing it, the result."""

    made: float
    thread: threading.Thread | None
    ready: Prepared | None = None


class Prestarts:
    """At most one prepared deep search per client, used once, expiring after
    `PRESTART_TTL` seconds; prepared on a background thread. Slots are told apart by
    identity, never by their clock reading (two starts may read the same time)."""

    def __init__(
        self,
        ttl: float = PRESTART_TTL,
        clock: Callable[[], float] = time.monotonic,
        clients: providers.Clients | None = None,
    ):
        self.ttl = ttl
        self.clock = clock
        self.clients = clients  # where prepared searches get their SDK client
        self._lock = threading.Lock()
        self._by_client: dict[str, _Slot] = {}
        self.started = 0  # how many were begun (for tests and the benchmark)

    def start(
        self,
        client_id: str,
        forest: Any,
        query: str,
        cfg: ProviderConfig,
        *,
        now: datetime | None,
        limit: int,
        harness: str | None,
        search: ChatSearch,
    ) -> None:
        """Prepare `query` for this client in the background, replacing its earlier one."""
        made = self.clock()

        def work() -> None:
            try:
                ready = prepare(
                    forest, query, cfg, now=now, limit=limit, harness=harness, search=search,
                    clients=self.clients,
                )  # fmt: skip
            except Exception:  # a failed pre-start leaves Enter to start cold
                ready = None
            with self._lock:
                kept = self._by_client.get(client_id) is slot
                if kept:
                    slot.thread, slot.ready = None, ready
            if not kept:  # replaced or dropped while it was being prepared
                release(ready)

        thread = threading.Thread(target=work, name="deep-prestart", daemon=True)
        slot = _Slot(made, thread)
        with self._lock:
            gone = [
                self._by_client.pop(key)
                for key, other in list(self._by_client.items())
                if made - other.made > self.ttl or key == client_id
            ]  # expired unused, and this client's earlier one: dropped
            self._by_client[client_id] = slot
            self.started += 1
        for other in gone:
            release(other.ready)
        thread.start()

    def take(self, client_id: str, query: str, limit: int, harness: str | None) -> Prepared | None:
        """The client's prepared search for this query (waiting for it to finish), once."""
        with self._lock:
            slot = self._by_client.get(client_id)
            thread = slot.thread if slot is not None else None
        if slot is None:
            return None
        if thread is not None:
            thread.join()
        with self._lock:
            if self._by_client.get(client_id) is not slot:
                return None  # replaced or dropped meanwhile: that one is not ours to take
            del self._by_client[client_id]
            ready = slot.ready
        if (
            ready is None
            or ready.used
            or self.clock() - slot.made > self.ttl
            or not ready.matches(query, limit, harness)
        ):
            release(ready)
            return None
        return ready

    def pending(self, client_id: str) -> bool:
        with self._lock:
            slot = self._by_client.get(client_id)
        return slot is not None and self.clock() - slot.made <= self.ttl

    def drop(self, client_id: str) -> None:
        """Forget the client's pre-start (its connection closed) and close its SDK client."""
        with self._lock:
            slot = self._by_client.pop(client_id, None)
        if slot is not None:
            release(slot.ready)
