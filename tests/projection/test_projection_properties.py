"""Property: any well-formed conversation renders to a valid, alternating Anthropic request."""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sessionforest import Entry
from sessionforest.projection import project_entries
from sessionforest.render_providers import to_anthropic, to_openai

Check = Callable[[str, Any], None]

words = st.text(alphabet="abc xyz", min_size=1, max_size=12).filter(str.strip)
# One step of a conversation: ("user", text) | ("assistant", text) |
# ("tools", optional text, n calls, order the results come back in).
step = st.one_of(
    st.tuples(st.just("user"), words),
    st.tuples(st.just("assistant"), words),
    st.tuples(st.just("tools"), st.none() | words, st.integers(1, 3), st.randoms()),
)


def _entries(system: str | None, steps: list[tuple[Any, ...]]) -> list[Entry]:
    rows: list[tuple[str, dict[str, Any]]] = []
    if system is not None:
        rows.append(("system.message", {"content": [{"type": "text", "text": system}]}))
    calls = 0
    for kind, *rest in steps:
        if kind in ("user", "assistant"):
            rows.append((f"{kind}.message", {"content": [{"type": "text", "text": rest[0]}]}))
            continue
        said, n, rng = rest
        ids = [f"call{calls + i}" for i in range(n)]
        calls += n
        content = [{"type": "text", "text": said}] if said else []
        content += [{"type": "tool_call", "id": i, "name": "t", "input": {"i": i}} for i in ids]
        rows.append(("assistant.message", {"content": content}))
        rng.shuffle(ids)  # parallel results may come back in any order
        rows += [("tool.completed", {"call_id": i, "output": f"out {i}"}) for i in ids]
    return [
        Entry(f"e{n}", "s", f"e{n - 1}" if n else None, n + 1, kind, payload, "context", 2, "t")
        for n, (kind, payload) in enumerate(rows)
    ]


@settings(max_examples=150, deadline=None)
@given(system=st.none() | words, steps=st.lists(step, min_size=1, max_size=12))
def test_anthropic_rendering_validates_and_pairs(
    check_sdk: Check, system: str | None, steps: list[tuple[Any, ...]]
) -> None:
    messages = project_entries("s", _entries(system, steps))
    request = to_anthropic(messages)
    rendered = request["messages"]
    check_sdk("anthropic", rendered)
    assert ("system" in request) == (system is not None)
    roles = [m["role"] for m in rendered]
    assert roles[0] == "user"
    assert all(a != b for a, b in pairwise(roles))
    answered: list[str] = []
    for i, message in enumerate(rendered):
        content = message["content"]
        uses = [b["id"] for b in content if b["type"] == "tool_use"]
        results = [b["tool_use_id"] for b in content if b["type"] == "tool_result"]
        answered += results
        if message["role"] == "user":
            # Tool results lead the user message they are in.
            assert all(b["type"] == "tool_result" for b in content[: len(results)])
        if uses:
            following = rendered[i + 1]["content"]
            got = [b["tool_use_id"] for b in following if b["type"] == "tool_result"]
            assert sorted(got) == sorted(uses)
    assert (
        len(answered)
        == len(set(answered))
        == sum(1 for m in messages for b in m["content"] if b["type"] == "tool_call")
    )
    check_sdk("chat", to_openai(messages, "chat"))
    check_sdk("responses", to_openai(messages, "responses"))
