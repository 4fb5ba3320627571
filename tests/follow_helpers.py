"""What the formats' incremental tests share: a store's contents as comparable values, and
a source written in pieces with `import_source` called after each piece."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessionforest import Forest
from sessionforest.io.position import SourcePosition


def contents(forest: Forest) -> dict[str, Any]:
    """Every session's title, visibility, source and head, and its entries (id, parent,
    kind, payload, visibility, time) as a set: what an import decides, not its order."""
    out: dict[str, Any] = {}
    for info in forest.sessions(include_hidden=True):
        entries = {
            (e.id, e.parent_id, e.kind, repr(e.payload), str(e.context_visibility), e.created_at)
            for e in forest.entries(info.id)
        }
        out[info.id] = {
            "title": info.title,
            "visibility": str(info.visibility),
            "source": (info.source_format, info.source_id),
            "head": forest.head(info.id),
            "entries": entries,
        }
    return out


def grow(
    forest: Forest, fmt: str, source: Path, target: Path, cuts: list[int]
) -> tuple[list[SourcePosition], list[int]]:
    """Write `source` to `target` up to each byte offset in `cuts` (then whole), importing
    from the position the previous call returned each time (through its JSON, as a
    watcher keeps it). Returns the positions and each call's added entries."""
    data = source.read_bytes()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"")
    position: SourcePosition | None = None
    positions, added = [], []
    for cut in [*cuts, len(data)]:
        with target.open("ab") as out:
            out.write(data[target.stat().st_size : cut])
        saved = position.to_json() if position is not None else None
        report, position = forest.import_source(fmt, target, saved)
        assert report.ok, [str(f) for f in report.failed]
        positions.append(position)
        added.append(report.entries)
    return positions, added
