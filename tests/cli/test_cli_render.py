"""The pure tree and log drawings in `sessionforest.render`.

Kept beside the CLI tests, its main user; the server reuses the same functions.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from sessionforest.model import Entry, Node
from sessionforest.render import (
    ELIDED,
    describe,
    plural,
    preview,
    render_log,
    render_tree,
    tree_lines,
)


def node(id: str, parent: str | None, seq: int, kind: str = "user.message") -> Node:
    return Node(id, parent, seq, kind, "context", 2)


def chain(n: int) -> list[Node]:
    return [node(f"e{i}", f"e{i - 1}" if i > 1 else None, i) for i in range(1, n + 1)]


def test_a_branch_point_indents_only_its_children() -> None:
    nodes = [
        node("a", None, 1),
        node("b", "a", 2, "checkpoint"),
        node("c", "b", 3),
        node("d", "c", 4),
        node("e", "b", 5),
        node("f", "e", 6),
        node("g", "e", 7),
    ]
    lines = render_tree(
        nodes,
        {"a", "b", "e", "g"},
        "g",
        {"b": "ok"},
        {"a": "hello", "c": "left", "g": "right"},
    )
    assert lines == [
        "* 1 user.message  hello",
        "* 2 checkpoint [ok]",
        "  ├── 3 user.message  left",
        "  │   4 user.message",
        "* └── 5 user.message",
        "      ├── 6 user.message",
        "*     └── 7 user.message  right  <- head",
    ]


def test_lines_carry_flags_for_styling() -> None:
    nodes = [node("a", None, 1), Node("b", "a", 2, "tool.started", "hidden", 2), node("c", "a", 3)]
    drawn = tree_lines(nodes, {"a", "c"}, "c", {}, {})
    assert [(ln.node_id, ln.active, ln.head, ln.hidden) for ln in drawn] == [
        ("a", True, False, False),
        ("b", False, False, True),
        ("c", True, True, False),
    ]


def test_a_10000_deep_chain_renders_iteratively_at_one_indentation() -> None:
    depth = 10_000
    assert depth > sys.getrecursionlimit()  # recursion would have to fail here
    nodes = chain(depth)
    lines = render_tree(nodes, {n.id for n in nodes}, f"e{depth}", {}, {})
    assert len(lines) == depth
    assert all(line.startswith(f"* {i} user.message") for i, line in enumerate(lines, 1))
    assert lines[-1].endswith("<- head")


def test_input_order_does_not_matter_children_follow_sequence() -> None:
    nodes = [node("a", None, 1), node("c", "a", 3), node("b", "a", 2)]
    assert render_tree(list(reversed(nodes)), set(), None, {}, {}) == [
        "  1 user.message",
        "  ├── 2 user.message",
        "  └── 3 user.message",
    ]


def test_several_roots_and_orphans_are_drawn_as_roots() -> None:
    nodes = [node("a", None, 1), node("b", "a", 2), node("x", None, 3), node("o", "gone", 4)]
    assert render_tree(nodes, set(), None, {}, {}) == [
        "  ├── 1 user.message",
        "  │   2 user.message",
        "  ├── 3 user.message",
        "  └── 4 user.message",
    ]


def test_a_deep_comb_is_elided_beyond_max_levels() -> None:
    # Every node has a leaf child and a continuing child: one branch point per level.
    nodes = [node("s0", None, 0)]
    for i in range(1, 200):
        nodes.append(node(f"leaf{i}", f"s{i - 1}", 2 * i))
        nodes.append(node(f"s{i}", f"s{i - 1}", 2 * i + 1))
    lines = render_tree(nodes, set(), None, {}, {}, max_levels=5)
    assert len(lines) == len(nodes)
    widest = max(line.index(next(c for c in line[2:] if c.isdigit()), 2) for line in lines)
    assert widest <= 2 + len(ELIDED) + 5 * 4 + 4
    assert any(ELIDED in line for line in lines)
    unlimited = render_tree(nodes, set(), None, {}, {}, max_levels=1_000)
    assert not any(ELIDED in line for line in unlimited)


def test_preview_collapses_spaces_escapes_controls_and_truncates() -> None:
    assert preview("  a\n\tb  c ") == "a\\n\\tb c"
    assert preview("x" * 10, 5) == "xxxx…"
    assert preview("x" * 5, 5) == "xxxxx"


def test_describe_gives_tool_calls_a_text() -> None:
    assert describe("tool.started", {"call_id": "1", "name": "grep", "input": {"q": 1}}) == (
        'grep {"q":1}'
    )
    assert describe("user.message", {"content": [{"type": "text", "text": "hi"}]}) == "hi"


def test_render_log_aligns_and_labels() -> None:
    def entry(seq: int, kind: str, payload: dict[str, object]) -> Entry:
        return Entry(f"e{seq}", "s", None, seq, kind, dict(payload), "context", 2, "t")

    lines = render_log(
        [
            entry(9, "user.message", {"content": [{"type": "text", "text": "hi"}]}),
            entry(10, "checkpoint", {"label": "done", "summary": "all good"}),
        ]
    )
    assert lines == [" 9  user.message  hi", "10  checkpoint    [done] all good"]
    assert render_log([]) == []


def test_plural_counts_one_thing_in_the_singular() -> None:
    assert [plural(n, "chat") for n in (0, 1, 2)] == ["0 chats", "1 chat", "2 chats"]
    assert plural(1, "entry", "entries") == "1 entry"
    assert plural(3, "entry", "entries") == "3 entries"


# A count followed by a hard-coded plural ("{n} entries") or "(s)": use `plural`.
HARD_PLURAL = re.compile(
    r"\{[^{}]*\} (chats|entries|sessions|problems|branches|lines|messages|hits|notes|records)\b"
    r"|\w\(s\)"
)


def test_no_message_hard_codes_a_plural() -> None:
    src = Path(__file__).resolve().parents[2] / "src" / "sessionforest"
    found = [
        f"{path.relative_to(src)}:{number}: {line.strip()}"
        for path in sorted(src.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if HARD_PLURAL.search(line)
    ]
    assert found == []
