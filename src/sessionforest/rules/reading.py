"""What every read checks on the way out: schema versions fail closed, paths fail on damage.

Rows are in `Entry.from_row` order: (id, session_id, parent_id, sequence,
semantic_schema_version, kind, payload, context_visibility, created_at, stamp).
Nothing partial is ever returned: every version is checked before anything
is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from ..errors import SessionDamaged, UnsupportedSchemaVersion
from ..model import SUPPORTED_SCHEMA_VERSIONS, Entry, Node


def entry_of(row: Sequence[Any]) -> Entry:
    version = row[4]
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        raise UnsupportedSchemaVersion(row[0], version, row[1])
    return Entry.from_row(tuple(row))


def entries_of(rows: list[tuple[Any, ...]]) -> list[Entry]:
    # The versions are tested in one C loop; the first unreadable row is found only then.
    if not SUPPORTED_SCHEMA_VERSIONS.issuperset(map(_VERSION, rows)):
        for row in rows:
            if row[4] not in SUPPORTED_SCHEMA_VERSIONS:
                raise UnsupportedSchemaVersion(row[0], row[4], row[1])
    return Entry.from_rows(rows)


_VERSION = itemgetter(4)


def nodes_of(session_id: str, rows: list[tuple[Any, ...]]) -> list[Node]:
    """Skeleton rows (id, parent, sequence, kind, visibility, version) as nodes."""
    unknown = {r[5] for r in rows} - SUPPORTED_SCHEMA_VERSIONS
    if unknown:
        bad = next(r for r in rows if r[5] in unknown)
        raise UnsupportedSchemaVersion(bad[0], bad[5], session_id)
    return list(map(Node._make, rows))


def path_of(
    session_id: str, head: str | None, rows: list[tuple[Any, ...]], *, whole: bool = True
) -> list[Entry]:
    """The active path from rows walked up from the head, root first.

    Each row carries its depth below the head as an 11th column (the walk may
    return them in any order); the walk is bounded, so a cycle ends. Raises
    SessionDamaged if the head is not stored, the root names a parent that is
    missing or on the path (a cycle), or a row belongs to another session.
    `whole=False`: the rows are a tail (the last N entries), whose first names
    a parent by design.
    """
    if rows and rows[0][10] == 0 and rows[-1][10] == len(rows) - 1:
        rows.reverse()  # head first, as a FIFO recursion yields them
    else:
        rows.sort(key=lambda r: r[10], reverse=True)
    if head is not None and not rows:
        raise SessionDamaged(session_id, f"head {head} is not an entry of this store")
    if rows:
        root = rows[0]
        if whole and root[2] is not None:
            if any(r[0] == root[2] for r in rows):
                raise SessionDamaged(session_id, f"cycle through entry {root[2]}")
            raise SessionDamaged(session_id, f"entry {root[0]} names missing parent {root[2]}")
        if not whole and len({r[0] for r in rows}) < len(rows):
            raise SessionDamaged(session_id, "cycle on the active path")
        for row in rows:
            if row[1] != session_id:
                raise SessionDamaged(
                    session_id, f"entry {row[0]} on the active path belongs to {row[1]}"
                )
    return entries_of(rows)
