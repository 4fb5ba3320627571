"""`forest copy`: move every session of one store into another, whatever their backends.

Streamed (each session's rows flow from `stored_entries` into the
destination, one batch at a time) and idempotent. Sessions are written in
groups (`restore_sessions`: up to CHUNK_SESSIONS sessions or CHUNK_ENTRIES
entries in one transaction, which PostgreSQL writes with one COPY); a group
that fails is written again one session per transaction, so every session
before the failing one lands and the error is the one a lone restore gives.
Idempotent: a session the destination already holds is not written again,
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

from ..errors import ForestError, SessionQuarantined, UnknownSession
from ..model import StoredEntry, StoredSession
from ..store.base import BulkStore, Store

# A group of sessions written in one transaction: at most this many sessions, and
# no more entries than this once the group holds more than one session.
CHUNK_SESSIONS = 500
CHUNK_ENTRIES = 20_000


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
    group: list[tuple[StoredSession, int]] = []
    held = 0

    def restore(chunk: list[tuple[StoredSession, int]]) -> int:
        items = [
            (stored, source_bulk.stored_entries(stored.id), f"{source_name} session {stored.id}")
            for stored, _ in chunk
        ]
        try:
            return target_bulk.restore_sessions(items)
        except ForestError:
            if len(chunk) == 1:
                raise
        return sum(restore([one]) for one in chunk)

    def write(done: int) -> None:
        nonlocal held
        if group:
            report.entries += restore(group)
            report.copied.extend(stored.id for stored, _ in group)
            group.clear()
            held = 0
        if progress is not None:
            progress(done, total)

    for done, info in enumerate(sessions, 1):
        sid = info.id
        try:
            stored = source_bulk.stored_session(sid)
        except SessionQuarantined:
            report.quarantined.append(sid)
            continue
        try:
            target_bulk.stored_session(sid)
        except UnknownSession:
            if group and (len(group) >= CHUNK_SESSIONS or held + info.entry_count > CHUNK_ENTRIES):
                write(done - 1)
            group.append((stored, info.entry_count))
            held += info.entry_count
        else:
            report.present.append(sid)
        if not group and progress is not None:
            progress(done, total)
    write(total)
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
