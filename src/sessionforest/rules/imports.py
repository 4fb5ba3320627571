"""What an importer's chat writer checks, whatever the backend writes it to.

`ChatWriterBase` is the backend-neutral half of a `ChatWriter`: payloads are
validated as they come, ids remembered in two bounded generations, a record
met again must say exactly what it said before (else EntryConflict), and a
stored id of another session or a bad parent refuses the chat. A backend
subclasses it with the SQL: `_stored_sequence`, `_confirmed_before`, `flush`
(reading stored rows, then `_sorted`) and `finish`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from ..errors import EntryConflict, ImportRejected, InvalidArgument
from ..jsontext import payload_text
from ..kinds import validate_payload
from ..model import SUPPORTED_SCHEMA_VERSIONS, ChatResult, ChatSpec, Visibility


class Forgotten:
    """The ids an import wrote and no longer remembers, as a fixed-size Bloom filter.

    `seen` asks the store about an id it does not remember; in a chat with no
    entries before the import, only an id this import wrote and forgot can be
    there, so one the filter has never held is new without the query (a
    first import asked SQLite once per entry: a third of Gemini CLI's import
    time). Two bit positions from the id's hash; a false positive only costs
    the query that would have run anyway.
    """

    BITS = 1 << 23  # 1 MiB: 1% false positives at 700k forgotten ids

    __slots__ = ("_bits",)

    def __init__(self) -> None:
        self._bits = bytearray(self.BITS >> 3)

    def add(self, entry_ids: Iterable[str]) -> None:
        bits, mask = self._bits, self.BITS - 1
        for entry_id in entry_ids:
            h = hash(entry_id)
            for at in (h & mask, (h >> 32) & mask):
                bits[at >> 3] |= 1 << (at & 7)

    def may_hold(self, entry_id: str) -> bool:
        h, mask = hash(entry_id), self.BITS - 1
        return all(self._bits[at >> 3] >> (at & 7) & 1 for at in (h & mask, (h >> 32) & mask))


class QueuedRow(NamedTuple):
    """One queued entry: its columns, the source line and record, and (when the backend
    asks for it) its searchable text."""

    id: str
    parent: str | None
    kind: str
    payload: str
    visibility: str
    created_at: str
    line: int | None
    source: str | None
    text: str | None
    stamp: str | None = None  # the git state the source states for it (JSON text)


# A stored row as `_sorted` compares it:
# (id, parent, kind, payload, visibility, created_at, session_id, sequence)
StoredRow = tuple[str, str | None, str, str, str, str, str, int]

# What a conflict is about, in the words a user reads it in; the values of
# the last three are shown too (parents are internal ids, content is long).
_FIELDS = ("parent", "content", "kind", "visibility", "time")
_SHOWN = ("kind", "visibility", "time")


def difference(stored: QueuedRow, row: QueuedRow) -> tuple[str, str] | None:
    """(field, "old / new" or "") where `row` differs from `stored`; None: the same entry."""
    olds = (stored.parent, stored.payload, stored.kind, stored.visibility, stored.created_at)
    news = (row.parent, row.payload, row.kind, row.visibility, row.created_at)
    for name, old, new in zip(_FIELDS, olds, news, strict=True):
        if old != new:
            return name, f"{old} / {new}" if name in _SHOWN else ""
    return None


class ChatWriterBase:
    """The checks of one chat's import; see the module docstring."""

    def __init__(
        self, spec: ChatSpec, path: Path, last: int, created_at: str, batch: int, recent: int
    ) -> None:
        # Rows queued before a write; ids remembered in memory for parent checks
        # (older ones are asked of the store).
        self._batch_size = batch
        self._recent = recent
        self._spec = spec
        self._path = path
        self._base = last  # sequences at or below it were stored before this import
        self._next = last + 1
        self._batch: dict[str, QueuedRow] = {}  # id -> row, insertion order
        self._young: dict[str, int | None] = {}
        self._old: dict[str, int | None] = {}
        self._forgotten: Forgotten | None = None  # made when a generation is first dropped
        self.added = 0
        self.unchanged = 0
        self.head: str | None = None
        self.title = spec.title
        self.summary = spec.summary
        self.git_branch = spec.git_branch
        # The chat's time: stored by its first import, so a source that states
        # no times gives its entries the same one on every re-import.
        self.created_at = created_at
        self.result: ChatResult | None = None  # set once the chat is committed
        # An import that resumes a source where an earlier one stopped (io/position.py):
        # the entries stored before are the earlier lines', so `seen` trusts them.
        self.continuing = False

    @property
    def session_id(self) -> str:
        return self._spec.id

    # --- what a backend provides ---

    def _text(self, kind: str, payload: dict[str, Any], body: str) -> str | None:
        """The searchable text the backend wants queued with a row (None: none)."""
        return None

    def _flush_now(self, row: QueuedRow) -> bool:
        """Whether `row` must be written at once rather than batched."""
        return False

    def _stored_sequence(self, entry_id: str) -> int | None:
        """The sequence of `entry_id` in this chat's session, if stored."""
        raise NotImplementedError

    def _confirmed_before(self, entry_id: str) -> bool:
        """Whether this import met `entry_id` stored by an earlier one."""
        raise NotImplementedError

    def flush(self) -> None:
        raise NotImplementedError

    # --- the checks ---

    def add(
        self,
        entry_id: str,
        parent: str | None,
        kind: str,
        payload: dict[str, Any],
        created_at: str,
        visibility: str | None = None,
        line: int | None = None,
        source: str | None = None,
        stamp: dict[str, Any] | None = None,
    ) -> None:
        """Queue one entry; raises InvalidPayload (nothing queued) if it breaks its contract.
        `stamp`: the git state the source records for it (aider's commits), else none."""
        spec = validate_payload(kind, payload)
        vis = str(spec.default_visibility if visibility is None else visibility)
        if vis not in Visibility.__members__.values():
            raise InvalidArgument("context_visibility", f"expected context or hidden; got {vis!r}")
        body = payload_text(kind, payload)
        text = self._text(kind, payload, body)
        stamped = None if stamp is None else orjson.dumps(stamp).decode()
        row = QueuedRow(entry_id, parent, kind, body, vis, created_at, line, source, text, stamped)
        queued = self._batch.get(entry_id)
        if queued is not None:
            self._same(queued, row, queued.line)  # the file repeats a line: identical is harmless
            return
        self._batch[entry_id] = row
        self._remember(entry_id, line)
        if len(self._batch) >= self._batch_size or self._flush_now(row):
            self.flush()

    def seen(self, entry_id: str) -> bool:
        """Whether this import already added `entry_id` (queued, written, or found stored).

        Not "is it stored": a source line naming a parent that only comes
        later in the file must get the same answer on every re-import.
        """
        if entry_id in self._young or entry_id in self._old:
            return True
        if self._base == 0 and not self.continuing:
            # Nothing was stored before: only what this import wrote and forgot can be.
            forgotten = self._forgotten
            if forgotten is None or not forgotten.may_hold(entry_id):
                return False
        sequence = self._stored_sequence(entry_id)
        if sequence is None:
            return False
        if sequence > self._base or self.continuing:
            return True  # written by this import, or by the one it continues
        return self._confirmed_before(entry_id)

    def _remember(self, entry_id: str, line: int | None) -> None:
        # Two generations: memory stays bounded, and an id that falls out of
        # both was flushed long ago, so `seen` finds it in the store.
        if entry_id in self._old:
            return
        self._young.setdefault(entry_id, line)
        if len(self._young) >= self._recent:
            if self._old and self._base == 0:
                if self._forgotten is None:
                    self._forgotten = Forgotten()
                self._forgotten.add(self._old)
            self._old, self._young = self._young, {}

    def _same(
        self, stored: QueuedRow, row: QueuedRow, earlier: int | None, before: bool = False
    ) -> None:
        """Refuse `row` if it says something else than `stored` for the same record."""
        found = difference(stored, row)
        if found is None:
            return
        name, values = found
        subject = row.source or (f"entry {row.id}" if row.line is None else "the record")
        if before:
            shown = f" ({values.replace(' / ', ' then, ')} now)" if values else ""
            reason = (
                f"{subject} was imported before with a different {name}{shown}: the source "
                "changed what it said, and a re-import never changes stored entries"
            )
        else:
            at = f"line {earlier}" if earlier is not None else "an earlier line"
            shown = f" ({values.replace(' / ', ' there, ')} here)" if values else ""
            reason = f"{subject} is also on {at}, with a different {name}{shown}"
        raise EntryConflict(str(self._path), row.line, reason, row.id, row.source)

    def _sorted(
        self, rows: list[QueuedRow], stored: dict[str, StoredRow]
    ) -> tuple[list[tuple[QueuedRow, int]], list[str]]:
        """Rows to write (with their sequences) and ids met stored before; raises on a
        record that changed or maps to another session's id."""
        sid = self._spec.id
        fresh: list[tuple[QueuedRow, int]] = []
        confirmed: list[str] = []
        for row in rows:
            old = stored.get(row.id)
            if old is None:
                fresh.append((row, self._next))
                self._next += 1
            elif old[6] != sid:
                subject = row.source or "a record"
                raise ImportRejected(
                    str(self._path),
                    row.line,
                    f"{subject} maps to entry id {row.id}, which belongs to session {old[6]}",
                    row.id,
                )
            else:
                written = old[7] > self._base  # by this import, from an earlier line
                earlier = self._young.get(row.id, self._old.get(row.id)) if written else None
                stored_row = QueuedRow(*old[:6], None, None, None)
                self._same(stored_row, row, earlier, before=not written)
                confirmed.append(row.id)
        self.added += len(fresh)
        self.unchanged += len(confirmed)
        return fresh, confirmed

    def _refuse_bad_parent(self, bad: tuple[Any, ...] | None) -> None:
        """Raise for BAD_PARENT's row (id, parent, parent's session, earlier, parent's
        version, ...), if any."""
        if bad is None:
            return
        if bad[2] == self._spec.id and bad[4] not in SUPPORTED_SCHEMA_VERSIONS:
            raise ImportRejected(
                str(self._path),
                None,
                f"entry {bad[0]} would go below stored entry {bad[1]}, whose semantic schema "
                f"version {bad[4]} this sessionforest cannot read",
                bad[0],
            )
        raise ImportRejected(
            str(self._path),
            None,
            f"entry {bad[0]} names parent {bad[1]}, not an earlier "
            "entry of this chat (an importer bug: please report it)",
            bad[0],
        )
