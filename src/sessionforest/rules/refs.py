"""How typed ids resolve: full ids, unique prefixes (as git takes a short hash), typos.

A backend answers range questions (`low <= id < high`); these functions turn a
typed reference into the range and decide what a near miss is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..errors import AmbiguousId, Candidate, ForestError, UnknownEntry, UnknownSession
from ..ids import ALPHABET

if TYPE_CHECKING:
    from ..store.base import Store

ID_LENGTH = 26
_ID_CHARS = frozenset(ALPHABET)
SHOWN = 5  # candidates an ambiguous prefix lists
SUGGESTED = 3  # ids a miss suggests
SUGGEST_FROM = 4  # characters a ref needs before a typo guess means anything
SEQUENCE_DIGITS = 18  # longer digit strings exceed SQLite's integers: not a sequence number


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


def closest(ref: str, ids: Iterable[str]) -> list[str]:
    if len(ref) < SUGGEST_FROM:
        return []
    return sorted(i for i in ids if one_typo_away(ref, i))[:SUGGESTED]


# --- resolving over a Store --------------------------------------------------------


def _bounds(ref: str, miss: Callable[[str], ForestError]) -> tuple[str, str | bytes]:
    try:
        ref.encode()
    except UnicodeEncodeError:  # undecodable bytes from a shell: no id has them
        raise miss(ref) from None
    return prefix_bounds(ref)


def resolve_session(store: Store, ref: str) -> str:
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
    low, high = _bounds(ref, lambda r: unknown_session(store, r))
    rows = store.sessions_in_range(low, high, SHOWN + 1)
    if rows and (rows[0][0] == ref or len(rows) == 1):
        return rows[0][0]
    if not rows:
        raise unknown_session(store, ref)
    count = store.count_sessions_in_range(low, high)
    shown: list[Candidate] = [{"id": sid, "title": title} for sid, title in rows[:SHOWN]]
    raise AmbiguousId("session", ref, count, shown)


def resolve_entry(store: Store, session_id: str, ref: str) -> str:
    """The id of the entry of `session_id` that `ref` names.

    `ref` is a full id (returned without a query), a sequence number as `log`
    and `tree` print it, or a unique prefix of an entry id. A digit-only ref is
    first an entry id, then a sequence number, then a prefix: ids made only of
    digits stay addressable, and a prefix of digits alone ("01") would match
    nearly every id the forest mints anyway.
    """
    if is_full_id(ref):
        return ref
    if not ref:
        raise UnknownEntry(ref, session_id)
    if ref.isascii() and ref.isdigit() and len(ref) <= SEQUENCE_DIGITS:
        found = store.entry_by_id_or_sequence(session_id, ref)
        if found is not None:
            return found
    low, high = _bounds(ref, lambda r: unknown_entry(store, session_id, r))
    rows = store.entries_in_range(session_id, low, high)
    if rows and (rows[0][0] == ref or len(rows) == 1):
        return rows[0][0]
    if not rows:
        raise unknown_entry(store, session_id, ref)
    shown: list[Candidate] = [
        {"id": i, "sequence": seq, "kind": kind} for i, seq, kind in rows[:SHOWN]
    ]
    raise AmbiguousId("entry", ref, len(rows), shown, session_id)


def unknown_session(store: Store, session_id: str) -> UnknownSession:
    """The error for a session id that names nothing, suggesting ids one typo away.

    Only a miss pays for this: it reads every session id once.
    """
    close = closest(session_id, store.near_misses(None))
    labels = store.session_labels(close)
    return UnknownSession(session_id, [labels[i] for i in close if i in labels])


def unknown_entry(store: Store, session_id: str, entry_id: str) -> UnknownEntry | UnknownSession:
    """The error for an entry ref that names nothing in `session_id`, with suggestions;
    when the session itself does not exist, that is the error."""
    if not store.session_exists(session_id):
        return unknown_session(store, session_id)
    close = closest(entry_id, store.near_misses(session_id))
    labels = store.entry_labels(close)
    return UnknownEntry(entry_id, session_id, [labels[i] for i in close if i in labels])


def with_suggestions(store: Store, exc: UnknownSession | UnknownEntry) -> ForestError:
    """`exc` made afresh with its suggestions (looked for after the failing call ended)."""
    if isinstance(exc, UnknownSession):
        return unknown_session(store, exc.session_id)
    if exc.session_id is None:
        return exc
    return unknown_entry(store, exc.session_id, exc.entry_id)
