"""The snippet maker's own promises: bounded work per text, marks only on matches."""

from __future__ import annotations

from collections.abc import Sequence

from sessionforest import snippets
from sessionforest.snippets import Wanted


class Counting:
    """A stemmer that lowercases (good enough here) and counts the words it was given."""

    def __init__(self) -> None:
        self.words = 0

    def __call__(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        self.words += len(words)
        return [(w.lower(),) for w in words]


def test_the_work_on_a_huge_text_is_bounded_by_its_windows() -> None:
    stem = Counting()
    varied = " ".join(f"word{i} error" for i in range(400_000))  # ~5 MB, 400,000 distinct
    out = snippets.snippet(varied, [Wanted(("error",), "error")], stem, 12)
    assert out is not None and "**error** word1 **error**" in out
    # Only words of the windows read, and only those starting like a wanted stem.
    assert stem.words <= snippets.MAX_WINDOWS * snippets.WINDOW_CHARS // 2
    assert stem.words > 0


def test_no_window_holding_a_match_gives_none() -> None:
    assert (
        snippets.snippet("nothing here", [Wanted(("pelican",), "pelican")], Counting(), 12) is None
    )
    assert snippets.snippet("", [Wanted(("a",), "a")], Counting(), 12) is None
    assert snippets.head("one two three", 2) == "one two…"
    assert snippets.head("**bold** move", 5) == "bold move"


def test_the_fragment_holding_most_distinct_terms_wins() -> None:
    text = "alpha " + "filler " * 40 + "alpha beta together " + "filler " * 40
    out = snippets.snippet(
        text, [Wanted(("alpha",), "alpha"), Wanted(("beta",), "beta")], Counting(), 6
    )
    assert out is not None and "**alpha** **beta** together" in out
    assert out.startswith("…") and out.endswith("…")


def test_a_field_list_takes_the_best_field_title_first_on_ties() -> None:
    wanted = [Wanted(("kanji",), "kanji")]
    out = snippets.snippet(["kanji deck", "", "more kanji"], wanted, Counting(), 12)
    assert out == "**kanji** deck"
