"""FTS5 quoting: every user string reaches FTS5 only as one phrase literal.

What a user sees (anything typed gets results or none) is pinned for every
backend in tests/conformance/search/test_search_fuzz.py.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sessionforest.store.sqlite.search import fts


@given(typed=st.text(max_size=80))
def test_a_quoted_string_is_one_phrase_literal(typed: str) -> None:
    quoted = fts.quote(typed)
    assert quoted.startswith('"') and quoted.endswith('"')
    inner = quoted[1:-1]
    # Every quote inside is doubled, so the phrase cannot end early; no NUL survives.
    assert '"' not in inner.replace('""', "")
    assert "\x00" not in quoted
