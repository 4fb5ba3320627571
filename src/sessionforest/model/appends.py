"""What an append is judged on: the "no expectation" sentinel and the state a backend
reads for an append (rules/append.py decides from it; store.base's contracts name both)."""

from __future__ import annotations

from typing import Final, NamedTuple


class Unset:
    """`expect_head=UNSET`: no expectation (None means "the session is empty")."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset()


class AppendState(NamedTuple):
    """What a backend reads inside an append's write transaction, in one round trip;
    `rules.append.checked` decides from it."""

    quarantine: str | None  # the session's quarantine reason
    head: str | None
    last_sequence: int | None  # the session's highest sequence (None: no entries)
    below_owner: str | None  # session of the entry appended below (the parent, else the head)
    below_version: int | None  # its semantic schema version
    cwd: str | None  # the session's bound directory, as committed
