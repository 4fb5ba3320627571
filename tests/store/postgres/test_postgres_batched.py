"""PostgreSQL: what a search asks together is what one statement per item answers.

`contains_each` (every probe in one statement), `shown` (every hit's snippet and
landing in one, its words stemmed in one more), `tokens` (the stems with their
frequencies), `chat_evidence` (every term's chat-level lists, the chat count and
sizes) and `entry_sequences_each` (every term's passage reads) against
`contains`, `snippet`, `landing`, the frequency tables read stem by stem and the
single-term lists; then whole searches, through the batched primitives
and through a one-at-a-time stand-in, return the same hits, snippets, landings
and gate decisions, and a search no longer sends a statement per item.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sessionforest import Forest
from sessionforest.search.terms import Vocabulary, choose_terms
from sessionforest.store import postgres as pg_store
from sessionforest.store.base import ChatEvidence, ChatKey, EntryKey, Landing, Term
from sessionforest.store.base.search import (
    chat_evidence_alone,
    contains_each_alone,
    entry_sequences_alone,
    shown_alone,
)
from sessionforest.store.postgres import search as pg_search
from sessionforest.store.postgres import shown as pg_shown

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "claude-code" / "real_projects"
# A real Claude Code chat whose build failure stands only in tool output.
BUILD_FAILED = (
    DATA
    / "-Users-dain-workspace-coderabbit-review-helper"
    / "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"
)
WORDS = [
    "deploy",
    "staging",
    "liveness",
    "数据库",
    "SQLite",
    "branch",
    "needle",
    "build_wheel",
    "hatchling",
    "kuberne",  # a prefix only
    "nowhereatall",
]
QUERIES = [
    "deploy",
    "deploy failed on staging",
    "liveness probe",
    "kubernetes liveness probe restarts",
    "数据库很慢",
    "SQLite 缓存",
    "branch word",
    "needle",
    "build_wheel",
    "Failed to build hatchling wheel",
    "rollback worked",
    '"rollback worked" deploy',
    "deploy -rollback",
    "kuberne",
    "staging rollback needle branch liveness sqlite build",
    "nowhereatall",
]


def _text(body: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": body}]}


@pytest.fixture
def store(pg_forest: Forest) -> Forest:
    forest = pg_forest
    forest.import_chats("claude-code", BUILD_FAILED)
    sid = forest.create_session("Deploy notes")
    forest.append(sid, "user.message", _text("the deploy failed on staging"))
    forest.append(sid, "assistant.message", _text("rollback worked, deploy again later"))
    sid = forest.create_session("Kubernetes liveness probe")
    forest.append(sid, "user.message", _text("the pod restarts every few minutes"))
    forest.append(sid, "assistant.message", _text("raise the probe timeout"))
    sid = forest.create_session("缓存")
    forest.append(sid, "user.message", _text("我们的数据库很慢"))
    forest.append(sid, "assistant.message", _text("用SQLite做缓存"))
    # A branch: the head's path is root -> b -> c; d hangs off the root.
    sid = forest.create_session("Branches")
    root = forest.append(sid, "user.message", _text("start here"))
    forest.append(sid, "assistant.message", _text("a branch word on the path"))
    forest.append(sid, "user.message", _text("the path goes on"))
    forest.append(sid, "assistant.message", _text("a branch word off the path"), parent=root.id)
    head = forest.append(sid, "user.message", _text("back on the deploy path"))
    forest.move_head(sid, head.id)
    sid = forest.create_session("Long")
    forest.append(sid, "user.message", _text("filler words " * 4000 + "the needle is here"))
    forest.create_session("Empty chat about nothing")
    forest.search_chats("deploy")  # the index caught up
    return forest


def _terms(index: Any) -> list[Term]:
    vocab = Vocabulary(index)
    choice = choose_terms(vocab, ["rollback worked"], WORDS, limit=len(WORDS) + 1)
    return [*choice.kept, *choice.extra]


def _entries(index: Any) -> list[tuple[ChatKey, EntryKey]]:
    rows = index._conn.execute(
        "SELECT s.num, e.sequence FROM session_entries e JOIN sessions s ON s.id = e.session_id"
    ).fetchall()
    return [(num, (num << pg_search.SESSION_SHIFT) + seq) for num, seq in rows]


def test_contains_each_answers_what_contains_answers(store: Forest) -> None:
    with store._backend.search() as index:
        chats = sorted({num for num, _ in _entries(index)} | {r.key for r in index.all_chats()})
        terms = _terms(index)
        assert any(t.spaceless is not None for t in terms) and any(t.prefix for t in terms)
        pairs = [(chat, term) for chat in chats for term in terms]
        pairs.append((10**9, terms[0]))  # no such chat
        each = index.contains_each(pairs)
        assert each == [index.contains(chat, term) for chat, term in pairs]
        assert any(each) and not all(each)
        assert index.contains_each([]) == []


def test_shown_answers_what_snippet_and_landing_answer(store: Forest) -> None:
    with store._backend.search() as index:
        entries = _entries(index)
        chats = sorted({num for num, _ in entries})
        hits: list[tuple[ChatKey, EntryKey | None]] = [(c, None) for c in chats]
        hits += entries
        hits.append((chats[0], (chats[0] << pg_search.SESSION_SHIFT) + 9_999))  # not stored
        hits.append((10**9, None))  # no such chat
        terms = _terms(index)
        for asked in (terms, terms[:1], []):
            got = index.shown(hits, asked)
            want = [
                (
                    index.snippet(chat, entry, asked) if asked else "",
                    index.landing(entry) if entry is not None else None,
                )
                for chat, entry in hits
            ]
            assert got == want
        landings = [landing for _, landing in index.shown(hits, terms) if landing is not None]
        assert any(ld.active for ld in landings) and not all(ld.active for ld in landings)
        assert any("**" in snippet for snippet, _ in index.shown(hits, terms))


def test_tokens_read_the_frequencies_that_frequency_reads(store: Forest) -> None:
    texts = [*WORDS, "rollback worked", "", "!!"]
    with store._backend.search() as index:
        stems = index.tokens(texts)
        asked = {s: index.frequency(s) for toks in stems for s in toks}
    assert stems[-2:] == [(), ()]
    with store._backend.search() as index:
        assert index.stems(texts) == stems
        conn = index._conn
        for stem, found in asked.items():
            entry = conn.execute("SELECT docs FROM search_terms WHERE term = %s", (stem,))
            digest = conn.execute("SELECT docs FROM digest_terms WHERE term = %s", (stem,))
            e, d = entry.fetchone(), digest.fetchone()
            assert found == (e[0] if e else 0, d[0] if d else 0), stem
            assert index.frequency(stem) == found  # read on its own, not from `tokens`
        assert any(sum(f) for f in asked.values())
        assert index.frequency("nowhereatall") == (0, 0)
        high = "kuberne" + pg_search._TOP
        e = conn.execute(
            "SELECT coalesce(sum(docs), 0) FROM search_terms WHERE term >= %s AND term < %s",
            ("kuberne", high),
        ).fetchone()
        d = conn.execute(
            "SELECT coalesce(sum(docs), 0) FROM digest_terms WHERE term >= %s AND term < %s",
            ("kuberne", high),
        ).fetchone()
        assert index.prefix_frequency("kuberne") == (e[0], d[0]) != (0, 0)


def test_chat_evidence_answers_what_the_lists_answer_alone(store: Forest) -> None:
    with store._backend.search() as index:
        terms = _terms(index)
        assert any(t.spaceless is not None for t in terms) and any(t.digest_df for t in terms)
        limit = 10_000
        for asked in (terms, terms[:1], terms[::-1], []):
            got = index.chat_evidence(asked, limit)
            want = chat_evidence_alone(index, asked, limit)
            assert got.chats == want.chats
            assert got.entries == want.entries  # in any order: the funnel orders them
            assert [sorted(d) for d in got.digests] == [sorted(d) for d in want.digests]
            assert got.sizes == want.sizes
        full = index.chat_evidence(terms, limit)
        assert any(full.entries) and any(full.digests) and full.sizes and full.chats
        assert index.chat_evidence(terms, 1).entries == [index.entry_counts(t, 1) for t in terms]


def test_entry_sequences_each_answers_what_entry_sequences_answers(store: Forest) -> None:
    with store._backend.search() as index:
        terms = _terms(index)
        chats = sorted({num for num, _ in _entries(index)})
        for wanted in (chats, chats[:2], [10**9], []):
            got = index.entry_sequences_each(terms, wanted, 10_000)
            assert got == [index.entry_sequences(t, wanted, 10_000) for t in terms]
        assert any(index.entry_sequences_each(terms, chats, 10_000))
        assert index.entry_sequences_each([], chats, 10_000) == []


def test_chats_reads_each_chat_once_a_search(store: Forest) -> None:
    sent: list[Any] = []
    with store._backend.search() as index:
        keys = sorted({num for num, _ in _entries(index)} | {r.key for r in index.all_chats()})
        keys.append(10**9)  # no such chat
        fresh = pg_search.PostgresSearch(index._conn)
        want = {tuple(k): fresh.chats(k) for k in (keys, keys[1:])}
        assert index.chats(keys[:2]) == fresh.chats(keys[:2])
        assert [r.key for r in want[tuple(keys)]] == sorted(r.key for r in want[tuple(keys)])
        execute = index._conn.execute

        def traced(sql: Any, params: Any = None, **kwargs: Any) -> Any:
            sent.append((sql, params))
            return execute(sql, params, **kwargs)

        index._conn.execute = traced  # type: ignore[method-assign]
        try:
            assert index.chats([*keys[::-1], keys[0]]) == want[tuple(keys)]
            assert [p for sql, p in sent if sql == pg_search.CHATS_BY_NUM] == [(keys[2:],)]
            sent.clear()
            assert index.chats(keys[1:]) == want[tuple(keys[1:])]
            assert index.chats([10**9]) == []
            assert sent == []
        finally:
            del index._conn.execute
    assert len(keys) > 3


class OneAtATime(pg_search.PostgresSearch):
    """The batched primitives answered one item at a time."""

    def contains_each(self, pairs: Sequence[tuple[ChatKey, Term]]) -> list[bool]:
        return contains_each_alone(self, pairs)

    def shown(
        self, hits: Sequence[tuple[ChatKey, EntryKey | None]], terms: Sequence[Term]
    ) -> list[tuple[str, Landing | None]]:
        return shown_alone(self, hits, terms)

    def tokens(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        return self.stems(texts)  # no frequencies kept: `frequency` reads each

    def chat_evidence(self, terms: Sequence[Term], limit: int) -> ChatEvidence:
        return chat_evidence_alone(self, terms, limit)

    def entry_sequences_each(
        self, terms: Sequence[Term], chats: Iterable[ChatKey], limit: int
    ) -> list[dict[ChatKey, list[int]]]:
        return entry_sequences_alone(self, terms, chats, limit)


def test_a_search_returns_what_it_returns_asking_one_item_at_a_time(
    store: Forest, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime.now(UTC)  # one clock for both: recency is part of the score
    batched = [store.search_chats(q, now=now, limit=3) for q in QUERIES]
    monkeypatch.setattr(pg_store, "PostgresSearch", OneAtATime)
    single = [store.search_chats(q, now=now, limit=3) for q in QUERIES]
    assert batched == single
    assert sum(len(r.hits) for r in batched) > len(QUERIES)
    assert {r.mode for r in batched} >= {"and", "or"}


def test_a_search_sends_no_statement_per_probe_snippet_landing_or_stem(store: Forest) -> None:
    sent: list[str] = []
    db = store._backend.db  # type: ignore[attr-defined]
    db.trace(sent.append)
    try:
        for q in QUERIES:
            store.search_chats(q)
    finally:
        db.trace(None)
    one_each = [
        pg_search.ENTRY_PROBE,
        pg_search.DIGEST_PROBE,
        pg_search.GRAM_ENTRY_PROBE,
        pg_search.GRAM_DIGEST_PROBE,
        pg_search.FREQUENCY,
        pg_shown.ENTRY_SNIPPET,
        pg_shown.DIGEST_SNIPPET,
        pg_shown.LANDING,
        pg_shown.HEAD_ROW,
        pg_shown.PATH_RANGE,
        pg_search.CHAT_COUNT,
        pg_search.CHAT_SIZES,
        pg_search.ENTRY_SEQUENCES,
        pg_search.GRAM_ENTRY_SEQUENCES,
    ]
    assert sent
    assert not [s for s in sent if s in one_each]
    assert any(s == pg_search.CONTAINS_EACH for s in sent)
    assert any(s == pg_shown.SHOWN for s in sent)
    assert any(s.startswith(pg_search.EVIDENCE_MARK) for s in sent)
    assert any(s.startswith(pg_search.SEQUENCES_MARK) for s in sent)
