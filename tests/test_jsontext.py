"""`jsontext.encode`: refuses exactly the values orjson would write as null, naming the field."""

from __future__ import annotations

import math
import re
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessionforest import jsontext
from sessionforest.jsontext import NonFinite, encode, nonfinite

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet="abc_", min_size=1, max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


def at(value: Any, path: str) -> Any:
    """Follow a path as `nonfinite` writes it (`a.b[0]`, `$` for the value itself)."""
    if path == "$":
        return value
    for key, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        value = value[int(index)] if index else value[key]
    return value


@given(VALUES)
def test_refuses_exactly_the_non_finite_and_names_where(value: Any) -> None:
    try:
        raw = encode(value)
    except NonFinite as exc:
        found = at(value, exc.path)
        assert isinstance(found, float) and not math.isfinite(found)
    else:
        assert orjson.loads(raw) == value  # what is stored reads back as it was given


@pytest.mark.parametrize(
    ("value", "path"),
    [
        (math.nan, "$"),
        ({"a": [1, {"b": math.inf}]}, "a[1].b"),
        ([[0.5], (1.0, -math.inf)], "[1][1]"),
        ({"first": math.nan, "second": math.inf}, "first"),  # document order
    ],
)
def test_paths(value: Any, path: str) -> None:
    assert nonfinite(value) is not None and nonfinite(value)[0] == path  # type: ignore[index]
    with pytest.raises(NonFinite, match=re.escape(f"field '{path}'")):
        encode(value)


def test_text_without_null_is_never_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    # The append hot path: the walk runs only when the JSON text holds `null`.
    def walk(value: Any) -> None:
        raise AssertionError("walked")

    monkeypatch.setattr(jsontext, "nonfinite", walk)
    assert encode({"content": [{"type": "text", "text": "hi"}], "n": 1.5}) is not None
    with pytest.raises(AssertionError, match="walked"):
        encode({"x": None})
