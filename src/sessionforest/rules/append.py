"""What an append must satisfy before a backend writes it, whatever the backend.

`prepare` validates a payload against its kind and serialises it once (NaN
and Infinity refused with their field path); `created_time` validates a
caller's `created_at` (an ISO 8601 time, stored in the one sortable form);
`checked` turns the state a
backend read inside its write transaction into the parent and sequence to
write, or the error that refuses the append.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import (
    ForeignEntry,
    HeadMoved,
    InvalidArgument,
    SessionDamaged,
    SessionQuarantined,
    UnknownEntry,
    UnknownSession,
    UnsupportedSchemaVersion,
)
from ..ids import normal_time
from ..jsontext import NonFinite, encode, payload_text
from ..model import SUPPORTED_SCHEMA_VERSIONS, Visibility
from ..model.appends import UNSET, AppendState, Unset

if TYPE_CHECKING:
    from ..kinds import KindSpec

# kinds.validate_payload, imported by the first append: kinds defines every payload
# contract (a msgspec Struct each), which a command that appends nothing never needs
# (a CLI call's start, issue 23); every later append reads one global.
_validate: Callable[[str, Any], KindSpec] | None = None


def _validator() -> Callable[[str, Any], KindSpec]:
    global _validate
    from ..kinds import validate_payload

    _validate = validate_payload
    return validate_payload


def prepare(kind: str, payload: Any, visibility: str | None) -> tuple[str, str]:
    """Validate an entry to be appended: (payload JSON, visibility)."""
    spec = (_validate or _validator())(kind, payload)
    if visibility is None:
        visibility = spec.default_visibility
    elif visibility not in Visibility.__members__.values():
        raise InvalidArgument(
            "context_visibility", f"expected context or hidden; got {visibility!r}"
        )
    return payload_text(kind, payload), str(visibility)


def created_time(value: str | None) -> str | None:
    """A caller's `created_at` in the stored form (UTC, milliseconds, `Z`), None for
    "now"; InvalidArgument when it is not an ISO 8601 time (a later export, sort or
    time filter would trip on it)."""
    if value is None:
        return None
    try:
        return normal_time(value)
    except ValueError as exc:
        raise InvalidArgument("created_at", str(exc)) from None


def stamp_text(stamp: dict[str, Any] | None) -> str | None:
    """A worktree stamp as stored JSON (None: unstamped)."""
    if stamp is None:
        return None
    try:
        return encode(stamp).decode()
    except NonFinite as exc:
        raise InvalidArgument("stamp", str(exc)) from exc
    except orjson.JSONEncodeError as exc:
        raise InvalidArgument("stamp", f"cannot be stored as JSON: {exc}") from exc


def checked(
    state: AppendState | None,
    session_id: str,
    parent: str | None,
    expect_head: str | Unset | None,
) -> tuple[str | None, int]:
    """The parent to append below and the next sequence, or the error.

    Only the parent's schema version is checked, never its ancestors': every
    writer refuses to write below an entry it cannot read, and writes at a
    version at least its parent's (appends at CURRENT_SCHEMA_VERSION, imports
    check both), so no entry has an ancestor of a higher version than its own.
    Readable versions are all versions up to this sessionforest's, so a
    readable parent means a readable path to the root. Entries stored before
    this rule (or by raw SQL) can break it; `check` finds those
    (unsupported-version) and quarantines the session, which refuses appends.
    """
    if state is None:
        raise UnknownSession(session_id)
    quarantine, head, last, owner, version, _ = state
    if quarantine is not None:
        raise SessionQuarantined(session_id, quarantine)
    if expect_head is not UNSET and expect_head != head:
        raise HeadMoved(session_id, expect_head, head)  # type: ignore[arg-type]
    below = parent if parent is not None else head
    if below is None:
        return None, (last or 0) + 1
    if owner is None:
        if parent is None:
            raise SessionDamaged(session_id, f"head {head} is not an entry of this store")
        raise UnknownEntry(parent, session_id)
    if owner != session_id:
        if parent is None:
            raise SessionDamaged(session_id, f"head {head} belongs to session {owner}")
        raise ForeignEntry(parent, session_id, owner)
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        # Writing below an entry this version cannot read would build on
        # history no reader of this store can check.
        raise UnsupportedSchemaVersion(
            below, version or 0, session_id, "append below an entry it cannot read"
        )
    return below, (last or 0) + 1
