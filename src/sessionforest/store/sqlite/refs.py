"""Naming sessions and entries the way people type them: a full id, a unique id
prefix (as git takes a short hash) or, for entries, a sequence number.

A prefix resolves with an indexed range query (`id >= prefix AND id < next`);
a full id costs no query at all. A miss suggests the ids one typo away.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import orjson

from ...errors import AmbiguousId, Candidate, ForestError, UnknownEntry, UnknownSession
from ...ids import ALPHABET

ID_LENGTH = 26
_ID_CHARS = frozenset(ALPHABET)
SHOWN = 5  # candidates an ambiguous prefix lists
SUGGESTED = 3  # ids a miss suggests
SUGGEST_FROM = 4  # characters a ref needs before a typo guess means anything
SEQUENCE_DIGITS = 18  # longer digit strings exceed SQLite's integers: not a sequence number

F = TypeVar("F", bound=Callable[..., Any])

SESSIONS_WITH_PREFIX = "SELECT id, title FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT ?"
COUNT_SESSIONS_WITH_PREFIX = "SELECT COUNT(*) FROM sessions WHERE id >= ? AND id < ?"

# An entry prefix first walks the id index over every session's ids in range,
# at most PREFIX_SCAN of them (a prefix of a few characters is that narrow in
# all but the largest stores) ...
PREFIX_SCAN = 1000
ANY_ENTRIES_WITH_PREFIX = """
SELECT id, session_id, sequence, kind FROM session_entries
WHERE id >= ? AND id < ? ORDER BY id LIMIT ?
"""
# ... and only a prefix wider than that reads the session's entries through the
# (session_id, sequence) index: bounded by the session's size, never more than
# the `log` or `tree` that follows reads.
ENTRIES_WITH_PREFIX = """
SELECT id, sequence, kind FROM session_entries
WHERE session_id = ? AND id >= ? AND id < ? ORDER BY id
"""

# A digit-only ref: the entry whose id it is, else the entry with that sequence
# number (the primary key and the (session_id, sequence) index, one row each).
ENTRY_BY_ID_OR_SEQUENCE = """
SELECT id, id = :ref FROM session_entries
WHERE session_id = :sid AND (id = :ref OR sequence = :seq)
"""

SESSION_TITLES = "SELECT id, title FROM sessions WHERE id IN (SELECT value FROM json_each(?))"
ENTRY_LABELS = (
    "SELECT id, sequence, kind FROM session_entries WHERE id IN (SELECT value FROM json_each(?))"
)


def is_full_id(ref: str) -> bool:
    """Shaped like the ids the forest and its importers mint (26 base32 characters)."""
    return len(ref) == ID_LENGTH and _ID_CHARS.issuperset(ref)


def _next_char(char: str) -> str | None:
    code = ord(char) + 1
    if 0xD800 <= code <= 0xDFFF:
        code = 0xE000  # surrogates cannot be stored; nothing sorts between
    return chr(code) if code <= 0x10FFFF else None


def prefix_bounds(prefix: str) -> tuple[str, str | bytes]:
    """`(lo, hi)` such that `lo <= id < hi` holds exactly for the ids starting with `prefix`.

    SQLite compares text bytewise and UTF-8 keeps code point order, so `hi` is
    the prefix with its last character incremented. A prefix of nothing but
    U+10FFFF has no such string; an empty BLOB then bounds it, as SQLite sorts
    every text below every BLOB.
    """
    stem = prefix
    while stem:
        bumped = _next_char(stem[-1])
        if bumped is not None:
            return prefix, stem[:-1] + bumped
        stem = stem[:-1]
    return prefix, b""


def one_typo_away(ref: str, candidate: str) -> bool:
    """Would `ref` be a prefix of `candidate` after one substitution, insertion,
    deletion or swap of neighbours (or with its letters lowercased)?"""
    if ref != ref.lower() and candidate.startswith(ref.lower()):
        return True
    i = 0
    limit = min(len(ref), len(candidate))
    while i < limit and ref[i] == candidate[i]:
        i += 1
    if i == len(ref):
        return False  # a plain prefix: resolved, not suggested
    rest = ref[i + 1 :]
    return (
        candidate.startswith(rest, i + 1)  # one character mistyped
        or candidate.startswith(rest, i)  # one character too many
        or candidate.startswith(ref[i:], i + 1)  # one character left out
        or (
            i + 1 < len(ref)
            and candidate[i + 1 : i + 2] == ref[i]
            and candidate[i : i + 1] == ref[i + 1]
            and candidate.startswith(ref[i + 2 :], i + 2)
        )
    )


def _closest(ref: str, ids: Iterable[str]) -> list[str]:
    if len(ref) < SUGGEST_FROM:
        return []
    return sorted(i for i in ids if one_typo_away(ref, i))[:SUGGESTED]


def suggesting(method: F) -> F:
    """Re-raise a plain miss from `method` with suggestions, after its transaction
    ended: looking for near ids never holds the write lock."""

    @functools.wraps(method)
    def wrapper(self: RefsMixin, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (UnknownSession, UnknownEntry) as exc:
            raise self._with_suggestions(exc) from None

    return wrapper  # type: ignore[return-value]


class RefsMixin:
    """`resolve_session` and `resolve_entry` for `Forest`, and the errors of a miss."""

    _conn: sqlite3.Connection

    def resolve_session(self, ref: str) -> str:
        """The id of the session `ref` names: its full id or a unique prefix of one.

        A ref shaped like a full id is returned without a query (the read that
        uses it reports a miss). Otherwise an exact id wins over a longer id it
        is a prefix of. Raises AmbiguousId when several sessions start with
        `ref`, UnknownSession (with the ids one typo away) when none does.
        """
        if is_full_id(ref):
            return ref
        if not ref:
            raise UnknownSession(ref)
        lo, hi = self._bounds(ref, self.unknown_session)
        rows = self._conn.execute(SESSIONS_WITH_PREFIX, (lo, hi, SHOWN + 1)).fetchall()
        if rows and (rows[0][0] == ref or len(rows) == 1):
            return rows[0][0]  # type: ignore[no-any-return]
        if not rows:
            raise self.unknown_session(ref)
        count = self._conn.execute(COUNT_SESSIONS_WITH_PREFIX, (lo, hi)).fetchone()[0]
        shown = [{"id": sid, "title": title} for sid, title in rows[:SHOWN]]
        raise AmbiguousId("session", ref, count, shown)

    def resolve_entry(self, session_id: str, ref: str) -> str:
        """The id of the entry of `session_id` that `ref` names.

        `ref` is a full id (returned without a query), a sequence number as
        `log` and `tree` print it, or a unique prefix of an entry id. A digit-only
        ref is first an entry id, then a sequence number, then a prefix: ids made
        only of digits stay addressable, and a prefix of digits alone ("01")
        would match nearly every id the forest mints anyway.
        """
        if is_full_id(ref):
            return ref
        if not ref:
            raise UnknownEntry(ref, session_id)
        conn = self._conn
        if ref.isascii() and ref.isdigit() and len(ref) <= SEQUENCE_DIGITS:
            found = conn.execute(
                ENTRY_BY_ID_OR_SEQUENCE, {"sid": session_id, "ref": ref, "seq": int(ref)}
            ).fetchall()
            if found:
                return max(found, key=lambda row: row[1])[0]  # type: ignore[no-any-return]
        lo, hi = self._bounds(ref, lambda r: self.unknown_entry(session_id, r))
        scanned = conn.execute(ANY_ENTRIES_WITH_PREFIX, (lo, hi, PREFIX_SCAN)).fetchall()
        if len(scanned) < PREFIX_SCAN:
            rows = [(i, seq, kind) for i, sid, seq, kind in scanned if sid == session_id]
        else:
            rows = conn.execute(ENTRIES_WITH_PREFIX, (session_id, lo, hi)).fetchall()
        if rows and (rows[0][0] == ref or len(rows) == 1):
            return rows[0][0]  # type: ignore[no-any-return]
        if not rows:
            raise self.unknown_entry(session_id, ref)
        shown = [{"id": i, "sequence": seq, "kind": kind} for i, seq, kind in rows[:SHOWN]]
        raise AmbiguousId("entry", ref, len(rows), shown, session_id)

    @staticmethod
    def _bounds(ref: str, miss: Callable[[str], ForestError]) -> tuple[str, str | bytes]:
        try:
            ref.encode()
        except UnicodeEncodeError:  # undecodable bytes from a shell: no id has them
            raise miss(ref) from None
        return prefix_bounds(ref)

    # --- misses ------------------------------------------------------------------

    def unknown_session(self, session_id: str) -> UnknownSession:
        """The error for a session id that names nothing, suggesting ids one typo away.

        Only a miss pays for this: it reads every session id once.
        """
        conn = self._conn
        close = _closest(session_id, (row[0] for row in conn.execute("SELECT id FROM sessions")))
        return UnknownSession(session_id, self._candidates(SESSION_TITLES, ("id", "title"), close))

    def unknown_entry(self, session_id: str, entry_id: str) -> UnknownEntry | UnknownSession:
        """The error for an entry ref that names nothing in `session_id`, with suggestions.

        When the session itself does not exist that is the error to report.
        """
        conn = self._conn
        if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
            return self.unknown_session(session_id)
        ids = conn.execute("SELECT id FROM session_entries WHERE session_id = ?", (session_id,))
        close = _closest(entry_id, (row[0] for row in ids))
        labels = self._candidates(ENTRY_LABELS, ("id", "sequence", "kind"), close)
        return UnknownEntry(entry_id, session_id, labels)

    def _with_suggestions(self, exc: UnknownSession | UnknownEntry) -> ForestError:
        """`exc` raised afresh with its suggestions (for errors raised where a query cannot run)."""
        if isinstance(exc, UnknownSession):
            return self.unknown_session(exc.session_id)
        if exc.session_id is None:
            return exc
        return self.unknown_entry(exc.session_id, exc.entry_id)

    def _candidates(self, sql: str, keys: Sequence[str], ids: list[str]) -> list[Candidate]:
        if not ids:
            return []
        rows = self._conn.execute(sql, (orjson.dumps(ids).decode(),)).fetchall()
        found = {row[0]: dict(zip(keys, row, strict=True)) for row in rows}
        return [found[i] for i in ids if i in found]
