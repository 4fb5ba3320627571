"""No user string reaches the full-text engine as syntax: anything typed gets
results or none, never an exception, from both searches."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.backends import Backend
from sessionforest import Forest

NOW = datetime(2026, 9, 30, 15, 0, tzinfo=UTC)

NASTY = [
    '"',
    '""',
    '"unbalanced',
    "NEAR(a b, 3)",
    "a NEAR b",
    "foo*",
    "*",
    "-foo",
    "a - b",
    "title:foo",
    ":",
    "col : x",
    "(",
    "((a)",
    "a)",
    "AND",
    "OR NOT",
    "a AND OR b",
    "^foo",
    "{title}: x",
    "+",
    "🙂 🚀 ✨",
    "café naïve",
    "\x00",
    "a\x00b",
    "\x00\x01\x02 ctrl",
    "x" * 10_000,
    " ".join(["word"] * 2_500),
    "yesterday 3 days ago in march",
    "set_focus utf-16 c++ e.g.",
]

TYPED = st.one_of(
    st.sampled_from(NASTY),
    st.text(max_size=60),
    st.text(alphabet=st.sampled_from(list('"*():-^+{}. aNEARORT\x00🙂')), max_size=40),
    st.lists(st.sampled_from([*NASTY, "plugins", "catalog", "the"]), max_size=6).map(" ".join),
)


@pytest.fixture(scope="module")
def store(
    backend: Backend, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Forest, str]]:
    harness = backend.open_harness(tmp_path_factory.mktemp("fuzz"))
    forest = harness.fresh()
    sid = forest.create_session("Plugins catalog", "codex")
    for body in ["the plugins catalog stalls", "near the title: colon", "naïve café 🙂"]:
        forest.append(sid, "user.message", {"content": [{"type": "text", "text": body}]})
    yield forest, sid
    harness.close()


@pytest.mark.parametrize("typed", NASTY)
def test_nasty_strings_never_raise(store: tuple[Forest, str], typed: str) -> None:
    forest, sid = store
    assert isinstance(forest.search_session_entries(sid, typed), list)
    result = forest.search_chats(typed, now=NOW)
    assert isinstance(result.hits, tuple)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(typed=TYPED)
def test_any_string_gets_results_or_none(store: tuple[Forest, str], typed: str) -> None:
    forest, sid = store
    for hit in forest.search_session_entries(sid, typed):
        assert hit.session_id == sid
    result = forest.search_chats(typed, now=NOW)
    assert all(h.session_id == sid for h in result.hits)
    assert not (result.confident and not result.hits)


def test_words_that_are_fts_syntax_are_searched_as_words(store: tuple[Forest, str]) -> None:
    forest, sid = store
    [hit] = forest.search_session_entries(sid, "near title:")
    assert hit.snippet == "**near** the **title**: colon"
    assert forest.search_chats("NEAR", now=NOW).hits[0].session_id == sid
