"""Sentinels and the values the facade and a backend pass each other."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

import msgspec

# Defined in the model: the rules judge them too, and the rules import nothing of the
# store package (whose backends import the rules). The contracts name them as ever.
from ...errors import InvalidArgument
from ...model.appends import UNSET as UNSET
from ...model.appends import AppendState as AppendState
from ...model.appends import Unset as Unset

# --- sentinels and value types -------------------------------------------------


class Auto:
    """`append(stamp=AUTO)`: the controller stamps entries of sessions bound to a directory."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Final = Auto()


class NewEntry(NamedTuple):
    """One validated entry for a backend to append (the facade minted id and time).

    NamedTuples, not frozen dataclasses, for the values of the append hot path:
    a frozen dataclass sets each field through object.__setattr__ (~1 us here)."""

    id: str
    kind: str
    payload: dict[str, Any]  # the validated object, handed back in the Entry
    body: str  # its JSON text, as stored
    visibility: str
    created_at: str


class NewSession(msgspec.Struct, frozen=True):
    """A session row for a backend to insert."""

    id: str
    title: str
    harness: str
    cwd: str | None
    created_at: str
    visibility: str


class Stamping(NamedTuple):
    """How a backend stamps an append: the stamp the facade took for the directory it
    believed bound, and how to take another if the committed binding differs (another
    process bound the session since), called inside the write transaction."""

    cwd: str | None
    text: str | None
    restamp: Callable[[str | None], str | None] | None = None


UNSTAMPED: Final = Stamping(None, None)


class Appended(NamedTuple):
    """Where a backend put an append: the first entry's parent and sequence, the stamp."""

    parent: str | None
    sequence: int
    stamp_text: str | None


# How durable a committed write is, whatever the backend: "normal" survives any
# process crash, "full" also power loss (each backend says how it gets there).
DURABILITIES: Final = ("normal", "full")


class AppendRequest(msgspec.Struct, frozen=True):
    """One append of `Forest.append_group`: what `Forest.append` takes (stamped AUTO)."""

    session_id: str
    kind: str
    payload: dict[str, Any]
    parent: str | None = None
    visibility: str | None = None
    expect_head: str | Unset | None = UNSET
    created_at: str | None = None


class GroupedAppend(NamedTuple):
    """One append of `Store.append_group`: the arguments `Store.append` takes."""

    session_id: str
    items: Sequence[NewEntry]
    parent: str | None
    expect_head: str | Unset | None
    now: str
    stamping: Stamping


# --- where a page of sessions continues -------------------------------------------


def session_cursor(updated_at: str, session_id: str) -> str:
    """The keyset cursor after a listed session: its activity time and id, as the
    listing by activity compares them (a listing by creation reads only the id).

    Opaque to callers; it names a place in the order, not a count of rows before
    it, so a page after it costs the same however deep it is, and sessions created
    meanwhile do not shift it."""
    return f"{updated_at}~{session_id}"


def parse_session_cursor(cursor: str) -> tuple[str, str]:
    """(updated_at, session_id) of a `session_cursor`; InvalidArgument if it is not one."""
    updated_at, mark, session_id = cursor.partition("~")
    if not mark or not updated_at or not session_id:
        raise InvalidArgument(
            "cursor", f"expected the next_cursor of a page of sessions; got {cursor[:80]!r}"
        )
    return updated_at, session_id
