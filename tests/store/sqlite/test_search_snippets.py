"""Recall's snippets on SQLite: the FTS5 expression asks only for terms that matched.

What recall returns is pinned for every backend in
tests/conformance/search/test_search_recall.py and test_search_evidence.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from sessionforest import Forest
from sessionforest.search import recall as recall_module


def test_recall_snippets_use_only_terms_that_matched(
    forest: Forest, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = forest.create_session("a")
    forest.append(sid, "user.message", {"content": [{"type": "text", "text": "kanji deck"}]})
    seen: list[str] = []
    real = recall_module._hits

    def spy(conn: Any, session_id: str, rowids: Any, scores: Any, expr: str, **options: Any) -> Any:
        seen.append(expr)
        return real(conn, session_id, rowids, scores, expr, **options)

    monkeypatch.setattr(recall_module, "_hits", spy)
    hits = forest.search_session_entries(sid, "kanji zebrafish")
    assert [h.snippet for h in hits] == ["**kanji** deck"]
    assert seen == ['"kanji"']  # no "zebrafish"* prefix walking the store per hit
