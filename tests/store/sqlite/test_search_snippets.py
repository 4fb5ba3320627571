"""Recall's snippets on SQLite: the FTS5 expression asks only for terms that matched.

What recall returns is pinned for every backend in
tests/conformance/search/test_search_recall.py and test_search_evidence.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from sessionforest import Forest
from sessionforest.store.sqlite.search import fts
from sessionforest.store.sqlite.search.recall import SQLiteSessionIndex


def test_recall_snippets_use_only_terms_that_matched(
    forest: Forest, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = forest.create_session("a")
    forest.append(sid, "user.message", {"content": [{"type": "text", "text": "kanji deck"}]})
    seen: list[str] = []
    real = SQLiteSessionIndex.hits

    def spy(scope: SQLiteSessionIndex, sequences: Any, matched: Any, needles: Any) -> Any:
        seen.append(fts.any_of(fts.match(t) for t in matched))  # the snippets' expression
        return real(scope, sequences, matched, needles)

    monkeypatch.setattr(SQLiteSessionIndex, "hits", spy)
    hits = forest.search_session_entries(sid, "kanji zebrafish")
    assert [h.snippet for h in hits] == ["**kanji** deck"]
    assert seen == ['"kanji"']  # no "zebrafish"* prefix walking the store per hit
