"""How the SQLite store finds ids by prefix: the index range it scans and the typo rule.

The behaviour (unique prefixes, ambiguity, "did you mean") is in
tests/conformance/test_refs.py; here are the range bounds of a prefix scan on
the id index, the narrow-scan fallback, and the one-typo rule behind the
suggestions.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from sessionforest import AmbiguousId, Forest, UnknownEntry
from sessionforest.rules.refs import one_typo_away, prefix_bounds
from sessionforest.store.sqlite import store as sqlite_store


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def imported(forest: Forest, tmp_path: Path, sid: str, ids: list[str]) -> None:
    """A session `sid` whose chain of entries has exactly `ids` (as an import may carry)."""
    scratch = Forest.open(tmp_path / "scratch.db")
    minted = scratch.create_session("imported")
    made = [scratch.append(minted, "user.message", _text(i)).id for i in ids]
    out = io.StringIO()
    scratch.export_jsonl(minted, out)
    scratch.close()
    text = out.getvalue().replace(minted, sid)
    for old, new in zip(made, ids, strict=True):
        text = text.replace(old, new)
    path = tmp_path / "chain.jsonl"
    path.write_text(text)
    forest.import_jsonl(path)


@pytest.mark.parametrize(
    ("prefix", "hi"),
    [("ab", "ac"), ("a\U0010ffff", "b"), ("a\ud7ff", "a\ue000"), ("\U0010ffff", b"")],
)
def test_prefix_bounds_cover_exactly_the_ids_starting_with_it(prefix: str, hi: str | bytes) -> None:
    assert prefix_bounds(prefix) == (prefix, hi)


@pytest.mark.parametrize(
    ("ref", "candidate", "close"),
    [
        ("abcd", "abcdef", False),  # a plain prefix resolves; it is not a typo
        ("abxd", "abcdef", True),
        ("abd", "abcdef", True),
        ("abccd", "abcdef", True),
        ("acbd", "abcdef", True),
        ("axyd", "abcdef", False),
        ("abcdefg", "abcdef", True),
        ("ABCD", "abcdef", True),
    ],
)
def test_one_typo_away(ref: str, candidate: str, close: bool) -> None:
    assert one_typo_away(ref, candidate) is close


@pytest.mark.parametrize("scan", [1, 2, 1000])
def test_entry_prefixes_resolve_the_same_past_the_scan_limit(
    forest: Forest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scan: int
) -> None:
    # Other sessions' ids crowd the same range: a narrow scan of the id index
    # cannot conclude, and the session's own entries decide.
    imported(forest, tmp_path, "chat", ["3f0a", "3f0b", "3f1c"])
    (tmp_path / "more").mkdir()
    imported(forest, tmp_path / "more", "other", ["3f0", "3f1", "3f1d"])
    monkeypatch.setattr(sqlite_store, "PREFIX_SCAN", scan)
    assert forest.resolve_entry("chat", "3f1") == "3f1c"
    assert forest.resolve_entry("other", "3f1") == "3f1"  # exact wins
    with pytest.raises(AmbiguousId) as caught:
        forest.resolve_entry("chat", "3f")
    assert caught.value.count == 3
    with pytest.raises(UnknownEntry):
        forest.resolve_entry("chat", "3f1d")
