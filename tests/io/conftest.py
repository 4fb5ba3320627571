"""Importer fixtures: a fresh store of each backend, and trees read straight from the raw samples.

The expected trees (fixture `raw`) are computed with plain `json` from the
source files, never by calling an importer: parents are the source's own
links (a parent counts when its line came earlier), the head is what the
format says it is. `Ids` is only the documented rule naming a source key.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.backends import Harness
from sessionforest import Forest, SessionInfo
from sessionforest.io.common import Ids


@pytest.fixture
def dump(forest: Forest, harness: Harness) -> Callable[[], dict[str, list[dict[str, Any]]]]:
    """Every row of every table the backend owns, read through the harness's own connection."""

    def take() -> dict[str, list[dict[str, Any]]]:
        return harness.dump(forest)

    return take


# --- expected trees -----------------------------------------------------------------


@dataclass
class Tree:
    parents: dict[str, str | None]  # source key -> parent key (None: a root)
    head: str | None

    def branch_points(self) -> int:
        """Entries with two or more children."""
        children = Counter(p for p in self.parents.values() if p is not None)
        return sum(1 for n in children.values() if n > 1)

    def tips(self) -> int:
        return len(set(self.parents) - set(self.parents.values()))


def raw_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return [
        (n, json.loads(line))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.strip()
    ]


def claude_code_tree(path: Path, keep: Callable[[dict[str, Any]], bool]) -> Tree:
    """Claude Code: uuid/parentUuid (a compact boundary hangs on logicalParentUuid); a
    user line makes one entry per tool_result (chained) plus one for any other content;
    lines without a uuid chain among themselves; head = the last line with a uuid."""
    parents: dict[str, str | None] = {}
    tail: dict[str, str] = {}
    head = meta = None
    for n, rec in raw_lines(path):
        if not keep(rec):
            continue
        uuid = rec.get("uuid")
        if not uuid:
            parents[f"#{n}"], meta = meta, f"#{n}"
            continue
        if rec.get("subtype") == "compact_boundary":
            parent = rec["logicalParentUuid"]
        else:
            parent = rec.get("parentUuid")
        parent = tail.get(parent, parent) if parent in parents else None
        content = (rec.get("message") or {}).get("content")
        results = sum(1 for b in content if b.get("type") == "tool_result") if (
            rec["type"] == "user" and isinstance(content, list)) else 0  # fmt: skip
        count = results + (1 if results == 0 or len(content) > results else 0)
        for k in range(count):
            key = uuid if k == 0 else f"{uuid}#{k}"
            parents[key], parent = parent, key
        tail[uuid] = parent  # type: ignore[assignment]
        head = parent
    return Tree(parents, head or meta)


def chatgpt_tree(conv: dict[str, Any]) -> Tree:
    mapping = conv["mapping"]
    parents = {nid: (n["parent"] if n.get("parent") in mapping else None)
               for nid, n in mapping.items()}  # fmt: skip
    return Tree(parents, conv["current_node"])


def pi_tree(path: Path) -> Tree:
    """pi v1: entries chain in file order, keyed by their index (header = 0)."""
    entries = raw_lines(path)
    assert entries[0][1]["type"] == "session" and "version" not in entries[0][1]
    keys = [f"#{i}" for i in range(1, len(entries))]
    return Tree(dict(zip(keys, [None, *keys[:-1]], strict=True)), keys[-1])


# --- comparing ----------------------------------------------------------------------


def chats_from(forest: Forest, path: Path) -> list[SessionInfo]:
    return [s for s in forest.sessions() if s.source_path == str(path)]


def assert_tree(forest: Forest, info: SessionInfo, tree: Tree) -> None:
    """The stored chat is exactly `tree`: every entry, parent, branch point, tip and the head."""
    assert info.source_format is not None and info.source_id is not None
    ids = Ids(info.source_format, info.source_id)
    expected = {ids.entry(k): ids.entry(p) if p else None for k, p in tree.parents.items()}
    nodes = forest.skeleton(info.id)
    stored = {n.id: n.parent_id for n in nodes}
    assert len(nodes) == len(tree.parents)
    assert stored == expected
    children = Counter(p for p in stored.values() if p is not None)
    assert sum(1 for n in children.values() if n > 1) == tree.branch_points()
    assert [t.id for t in forest.tips(info.id)] == [n.id for n in nodes if n.id not in children]
    assert len(forest.tips(info.id)) == tree.tips()
    assert forest.head(info.id) == (ids.entry(tree.head) if tree.head else None)


class Raw:
    """The independent readings and checks, handed to tests as one fixture."""

    Tree = Tree
    lines = staticmethod(raw_lines)
    claude_code_tree = staticmethod(claude_code_tree)
    chatgpt_tree = staticmethod(chatgpt_tree)
    pi_tree = staticmethod(pi_tree)
    chats_from = staticmethod(chats_from)
    assert_tree = staticmethod(assert_tree)


@pytest.fixture
def raw() -> Raw:
    return Raw()
