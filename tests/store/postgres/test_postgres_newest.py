"""PostgreSQL: the newest matches of common words, read chat by chat from the newest
(PostgresSearch._newest), are exactly the rows the GIN query sorts (ENTRY_NEWEST),
whether the walk fills the list, stops early and leaves the rest to the index,
or reads every chat."""

from __future__ import annotations

from typing import Any

import pytest

from sessionforest import Forest
from sessionforest.store.base import Term
from sessionforest.store.postgres import search as pg_search

CHATS = 40
PER_CHAT = 25


def _line(chat: int, n: int) -> str:
    words = ["common"]  # in every entry
    if n % 5 == 0:
        words.append("often")  # in a fifth of them
    if chat < 3 and n == 7:
        words.append("seldom")  # three entries of the three oldest chats
    if chat % 2 == 0 and n % 2 == 0:
        words.append("even")
    if chat % 2 == 1 and n % 2 == 1:
        words.append("odd")
    if chat == 2 and n == 4:
        words.append("odd")  # the one entry holding both "even" and "odd"
    return " ".join(words) + f" line {chat} {n}"


@pytest.fixture
def store(pg_forest: Forest) -> Forest:
    for chat in range(CHATS):
        sid = pg_forest.create_session(f"chat {chat}")
        lines = [
            ("user.message", {"content": [{"type": "text", "text": _line(chat, n)}]}, None)
            for n in range(PER_CHAT)
        ]
        pg_forest.append_many(sid, lines)
    pg_forest.search_chats("common")  # the index caught up
    return pg_forest


def _expr(index: Any, words: list[str], conjunctive: bool) -> tuple[str, list[Term]]:
    terms = []
    for word in words:
        (stems,) = index.tokens([word])
        entry_df, digest_df = index.frequency(stems[0])
        terms.append(Term(word, stems, entry_df, digest_df))
    expr = pg_search._combine((pg_search._term_query(t) for t in terms), conjunctive)
    assert expr is not None
    return expr, terms


def _sorted_by_the_index(index: Any, expr: str, limit: int) -> list[tuple[int, int]]:
    rows = index._conn.execute(pg_search.ENTRY_NEWEST, {"q": expr, "n": limit}).fetchall()
    return [tuple(r) for r in rows]


@pytest.mark.parametrize(
    ("words", "conjunctive", "limit"),
    [
        (["common"], True, 120),  # the walk fills the list from the newest chats
        (["often"], True, 60),
        (["even", "odd"], True, 50),  # one match: the probe stops, the index finds it
        (["seldom"], True, 50),  # only in the oldest chats
        (["often", "seldom"], False, 300),  # OR
        (["common"], True, CHATS * PER_CHAT + 10),  # more than there are: every chat read
    ],
)
def test_the_walk_returns_what_the_gin_query_sorts(
    store: Forest, monkeypatch: pytest.MonkeyPatch, words: list[str], conjunctive: bool, limit: int
) -> None:
    # Small batches so a store of 1,000 entries takes several of them.
    monkeypatch.setattr(pg_search, "SCAN_PROBE", 40)
    monkeypatch.setattr(pg_search, "SCAN_BATCH", 120)
    monkeypatch.setattr(pg_search, "SCAN_ENTRIES", 600)
    monkeypatch.setattr(pg_search, "SCAN_CHATS", 7)
    with store._backend.search() as index:
        expr, _ = _expr(index, words, conjunctive)
        want = _sorted_by_the_index(index, expr, limit)
        assert want, "each case has matches"
        assert index._newest(expr, limit) == want


def test_entry_matches_walks_for_common_words_and_not_for_rare_ones(
    store: Forest, monkeypatch: pytest.MonkeyPatch
) -> None:
    with store._backend.search() as index:
        index._conn.execute("ANALYZE session_entries")
    walked: list[str] = []
    original = pg_search.PostgresSearch._newest

    def spy(self: Any, expr: str, limit: int) -> list[tuple[int, int]]:
        walked.append(expr)
        return original(self, expr, limit)

    monkeypatch.setattr(pg_search.PostgresSearch, "_newest", spy)
    with store._backend.search() as index:
        expr, terms = _expr(index, ["common"], True)
        # 1,000 matches of 1,000 entries, 100 wanted: 100 tests instead of 1,000 reads.
        got = index.entry_matches(terms, conjunctive=True, ranked=False, limit=100)
        assert walked == [expr]
        want = _sorted_by_the_index(index, expr, 100)
        assert [(num, key & pg_search.SEQUENCE_MASK) for num, key in got] == want
        walked.clear()
        _, rare = _expr(index, ["seldom"], True)  # 3 matches: the index reads them
        index.entry_matches(rare, conjunctive=True, ranked=False, limit=100)
        assert walked == []
