"""Two branches of one chat side by side (`forest diff`, `sessions/compare`, the UI's compare).

From the two entries' common ancestor, each side's later entries are cut into turns (a
visible user message and what follows it) and the turns are aligned by their text with
difflib, so a turn both branches share lines up and a re-done one sits beside its other
version. When both ends carry worktree stamps and the session's directory is a repository
on this machine, the comparison adds `git diff` between the two stamped HEADs and whether
their uncommitted states differ (a stamp keeps the dirty state's hash and file count, not
its content, so that part can say only "same" or "differs", and by how many files).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from . import gitsafe
from .entrytext import entry_text
from .model import Entry

# The patch text kept in a comparison; the --stat summary is always whole.
DIFF_BYTES = 256 * 1024
# No external diff driver or textconv filter: nothing the repository configures runs
# (gitsafe pins the rest), and the output is git's own.
GIT_DIFF = ("diff", "--no-ext-diff", "--no-textconv", "--no-color")
# How much of a tool call's input or result a turn is compared by.
CALL_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a side after the fork: its entries and the text it is aligned by."""

    entries: tuple[Entry, ...]
    text: str


def turns(entries: Sequence[Entry]) -> list[Turn]:
    """Cut a branch's entries into turns: each visible user message starts one."""
    out: list[list[Entry]] = []
    for e in entries:
        if not out or (e.kind == "user.message" and e.context_visibility != "hidden"):
            out.append([])
        out[-1].append(e)
    return [Turn(tuple(group), _turn_text(group)) for group in out]


def _turn_text(group: Sequence[Entry]) -> str:
    """What a turn is compared by: its texts, its tool calls (name and input) and results."""
    parts = []
    for e in group:
        if e.context_visibility == "hidden":
            continue
        text = entry_text(e.kind, e.payload)
        if text:
            parts.append(f"{e.kind}: {text}")
        content = e.payload.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_call":
                call = orjson.dumps(block.get("input"), option=orjson.OPT_SORT_KEYS)
                parts.append(
                    f"call {block.get('name')}: {call[:CALL_CHARS].decode(errors='replace')}"
                )
        if e.kind == "tool.completed":
            parts.append(f"result: {str(e.payload.get('output'))[:CALL_CHARS]}")
    return "\n".join(parts)


def align(a: Sequence[Turn], b: Sequence[Turn]) -> list[tuple[int | None, int | None, bool]]:
    """Rows of (turn index on A, turn index on B, same text); None: that side has none."""
    rows: list[tuple[int | None, int | None, bool]] = []
    matcher = difflib.SequenceMatcher(None, [t.text for t in a], [t.text for t in b], False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            rows += [(i1 + k, j1 + k, True) for k in range(i2 - i1)]
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i = i1 + k if i1 + k < i2 else None
            j = j1 + k if j1 + k < j2 else None
            rows.append((i, j, False))
    return rows


def common_prefix(a: Sequence[Entry], b: Sequence[Entry]) -> int:
    """How many entries the two root-first paths share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x.id != y.id:
            break
        n += 1
    return n


def git_part(
    directory: str | None, stamp_a: dict[str, Any] | None, stamp_b: dict[str, Any] | None
) -> dict[str, Any]:
    """The git side of a comparison: diff between the stamped HEADs, dirty states compared."""
    out: dict[str, Any] = {
        "state": "unknown",
        "reason": "",
        "a_head": (stamp_a or {}).get("head"),
        "b_head": (stamp_b or {}).get("head"),
        "a_dirty_files": (stamp_a or {}).get("dirty_files"),
        "b_dirty_files": (stamp_b or {}).get("dirty_files"),
        "dirty_differs": None,
        "stat": "",
        "diff": "",
        "truncated": False,
    }
    if stamp_a is None or stamp_b is None:
        out["reason"] = "an end has no worktree stamp (written outside a bound repository)"
        return out
    out["dirty_differs"] = stamp_a.get("dirty") != stamp_b.get("dirty")
    if directory is None:
        out["reason"] = "the session is not bound to a directory on this machine"
        return out
    head_a, head_b = out["a_head"], out["b_head"]
    if not head_a or not head_b:
        out["reason"] = "an end was stamped on an unborn branch (no commit yet)"
        return out
    try:
        if head_a != head_b:
            out["stat"] = gitsafe.run(directory, (*GIT_DIFF, "--stat", head_a, head_b)).decode(
                errors="replace"
            )
            patch = gitsafe.run(directory, (*GIT_DIFF, head_a, head_b))
            out["truncated"] = len(patch) > DIFF_BYTES
            out["diff"] = patch[:DIFF_BYTES].decode(errors="replace")
    except gitsafe.GitRefused as exc:
        out["reason"] = f"git could not compare the two HEADs in {directory}: {exc}"
        return out
    out["state"] = "compared"
    return out


__all__ = ["DIFF_BYTES", "Turn", "align", "common_prefix", "git_part", "turns"]
