"""`forest copy`: move every session of one store into another, whatever their backends.

Streamed (each session's rows flow from `stored_entries` into
`restore_session`, one batch at a time), one transaction per session, and
idempotent: a session the destination already holds is not written again,
only verified. Verification counts and hashes every session on both sides
(the session row and every entry row exactly as stored); any difference is
reported by session, never repaired. Quarantined sessions are reported, not
copied (their trees are damaged; `forest check` and `repair` first). The
workspace and agent trees are not part of a copy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import Any

import orjson

from ..errors import SessionQuarantined, UnknownSession
from ..model import StoredEntry, StoredSession
from ..store.base import BulkStore, Store


@dataclass
class CopyReport:
    """What a copy did: sessions written, found already there, skipped, and the
    verification of every session on both sides."""

    copied: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)  # already in the destination, identical
    quarantined: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)  # differ between the two sides
    entries: int = 0  # entries written by this copy
    verified: int = 0  # sessions counted and hashed on both sides

    @property
    def ok(self) -> bool:
        return not self.mismatched

    def to_json(self) -> dict[str, Any]:
        return {
            "copied": len(self.copied),
            "present": len(self.present),
            "quarantined": self.quarantined,
            "mismatched": self.mismatched,
            "entries": self.entries,
            "verified": self.verified,
            "ok": self.ok,
        }


def session_digest(session: StoredSession, entries: Iterable[StoredEntry]) -> tuple[int, str]:
    """(entry count, sha256) of a session as stored: its row and every entry row."""
    digest = hashlib.sha256()
    digest.update(orjson.dumps([getattr(session, f.name) for f in fields(session)]))
    count = 0
    for entry in entries:
        count += 1
        digest.update(orjson.dumps(list(entry)))
    return count, digest.hexdigest()


def copy_store(
    source: Store,
    source_bulk: BulkStore,
    target_bulk: BulkStore,
    *,
    source_name: str,
    progress: Callable[[int, int], None] | None = None,
) -> CopyReport:
    """Copy every session of `source` into `target_bulk`'s store, then verify both sides.

    `progress(done, total)` is called with sessions done after each one.
    """
    report = CopyReport()
    sessions = source.sessions(include_hidden=True)
    total = len(sessions)
    for done, info in enumerate(sessions, 1):
        sid = info.id
        try:
            stored = source_bulk.stored_session(sid)
        except SessionQuarantined:
            report.quarantined.append(sid)
            continue
        try:
            there = target_bulk.stored_session(sid)
        except UnknownSession:
            there = None
        if there is None:
            report.entries += target_bulk.restore_session(
                stored,
                source_bulk.stored_entries(sid),
                source=f"{source_name} session {sid}",
            )
            report.copied.append(sid)
        else:
            report.present.append(sid)
        if progress is not None:
            progress(done, total)
    for sid in [*report.copied, *report.present]:
        mine = session_digest(source_bulk.stored_session(sid), source_bulk.stored_entries(sid))
        try:
            theirs = session_digest(
                target_bulk.stored_session(sid), target_bulk.stored_entries(sid)
            )
        except (UnknownSession, SessionQuarantined):
            theirs = (-1, "")
        report.verified += 1
        if mine != theirs:
            report.mismatched.append(sid)
            if sid in report.present:
                report.present.remove(sid)
    return report
