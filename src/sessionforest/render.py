"""Plain text for people: the tree and active-path drawings, `escape` and `plural`.

Pure functions over skeleton nodes and entries (no store, no terminal styles)
so the CLI and the server draw the same picture. Every piece of stored text
that reaches a line of output goes through `escape` first; drawings are
iterative, so a 10,000-entry chain draws without recursion.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from .model import Entry, Node, Visibility
from .text import escape, plural, preview

__all__ = [
    "TreeLine",
    "describe",
    "escape",
    "label_of",
    "plural",
    "preview",
    "render_log",
    "render_tree",
    "tree_lines",
]

BRANCH = "├── "
LAST = "└── "
PIPE = "│   "
SPACE = "    "
ELIDED = "⋯   "  # stands for indentation levels cut off by `max_levels`
HEAD_MARK = "<- head"


@dataclass(frozen=True, slots=True)
class TreeLine:
    """One drawn node; the flags let a caller style the text without parsing it."""

    text: str
    node_id: str
    active: bool
    head: bool
    hidden: bool


@dataclass(frozen=True, slots=True)
class _Indent:
    # A linked list instead of a string: a deep comb of branch points would
    # otherwise copy an ever longer prefix onto every stack frame.
    up: _Indent | None
    segment: str


def describe(kind: str, payload: dict[str, Any]) -> str:
    """An entry on one line, as a log or tree draws it: a message's text blocks with
    its tool calls named in place, a tool call's name and input, else the first of
    a summary, text, message, output, model, status or task."""
    if kind == "tool.started":
        args = payload.get("input")
        return f"{payload.get('name', '')} {orjson.dumps(args).decode() if args else ''}".strip()
    if kind == "checkpoint" and payload.get("summary") == payload.get("label"):
        return ""  # the label is already shown as [label]
    content = payload.get("content")
    if isinstance(content, list):
        parts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_call":
                parts.append(f"[tool {block.get('name', '')}]")
        return " ".join(p for p in parts if p)
    for key in ("summary", "text", "message", "output", "model", "status", "task"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _indent_text(indent: _Indent | None, max_levels: int) -> str:
    parts: list[str] = []
    while indent is not None and len(parts) < max_levels:
        parts.append(indent.segment)
        indent = indent.up
    text = "".join(reversed(parts))
    return ELIDED + text if indent is not None else text


def _push(
    stack: list[tuple[Node, _Indent | None, str]], children: Sequence[Node], indent: _Indent | None
) -> None:
    if len(children) == 1:
        # A chain of single children stays in the parent's column.
        stack.append((children[0], indent, ""))
        return
    last = len(children) - 1
    # Pushed in reverse so the earliest child pops (and is drawn) first.
    for i in range(last, -1, -1):
        stack.append((children[i], indent, LAST if i == last else BRANCH))


def tree_lines(
    nodes: Sequence[Node],
    active: Collection[str],
    head: str | None,
    labels: Mapping[str, str],
    previews: Mapping[str, str],
    *,
    max_levels: int = 24,
) -> list[TreeLine]:
    """Draw the whole tree, one line per node, children in sequence order.

    Only branch points indent (with `├── `/`└── ` and `│   `/`    ` under them);
    active entries start with `* `, the head ends with `<- head`, checkpoints
    show `[label]`; kinds, labels and previews are escaped. Indentation deeper
    than `max_levels` branch points is elided with `⋯` so a comb-shaped tree
    stays readable. Nodes whose parent is missing are drawn as extra roots;
    nodes caught in a cycle cannot be reached.
    """
    ids = {node.id for node in nodes}
    by_parent: dict[str | None, list[Node]] = {}
    for node in sorted(nodes, key=lambda n: n.sequence):
        parent = node.parent_id if node.parent_id in ids else None
        by_parent.setdefault(parent, []).append(node)
    stack: list[tuple[Node, _Indent | None, str]] = []
    _push(stack, by_parent.get(None, []), None)
    lines: list[TreeLine] = []
    while stack:
        node, indent, connector = stack.pop()
        is_active = node.id in active
        is_head = node.id == head
        body = f"{node.sequence} {escape(node.kind)}"
        if node.id in labels:
            body += f" [{escape(labels[node.id])}]"
        if previews.get(node.id):
            body += f"  {escape(previews[node.id])}"
        if is_head:
            body += f"  {HEAD_MARK}"
        marker = "* " if is_active else "  "
        lines.append(
            TreeLine(
                marker + _indent_text(indent, max_levels) + connector + body,
                node.id,
                is_active,
                is_head,
                node.context_visibility == Visibility.HIDDEN,
            )
        )
        children = by_parent.get(node.id)
        if children:
            if connector == BRANCH:
                indent = _Indent(indent, PIPE)
            elif connector == LAST:
                indent = _Indent(indent, SPACE)
            _push(stack, children, indent)
    return lines


def render_tree(
    nodes: Sequence[Node],
    active: Collection[str],
    head: str | None,
    labels: Mapping[str, str],
    previews: Mapping[str, str],
    *,
    max_levels: int = 24,
) -> list[str]:
    """`tree_lines` as plain strings."""
    drawn = tree_lines(nodes, active, head, labels, previews, max_levels=max_levels)
    return [line.text for line in drawn]


def label_of(entry: Entry) -> str | None:
    """The checkpoint label of `entry`, if it is a checkpoint."""
    label = entry.payload.get("label") if entry.kind == "checkpoint" else None
    return label if isinstance(label, str) else None


def render_log(entries: Sequence[Entry], width: int = 72) -> list[str]:
    """One line per entry: sequence number, kind, `[label]` for checkpoints, a preview
    (stored text escaped, so a NUL or an ESC in a payload shows as `\\x00`, `\\x1b`)."""
    if not entries:
        return []
    seq_width = max(len(str(e.sequence)) for e in entries)
    kinds = [escape(e.kind) for e in entries]
    kind_width = max(map(len, kinds))
    lines = []
    for entry, kind in zip(entries, kinds, strict=True):
        label = label_of(entry)
        text = preview(describe(entry.kind, entry.payload), width)
        tail = f"[{escape(label)}] {text}" if label is not None else text
        line = f"{entry.sequence:>{seq_width}}  {kind:<{kind_width}}  {tail}"
        lines.append(line.rstrip())
    return lines
