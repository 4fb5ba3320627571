"""Work the server does behind the appends: the store's own maintenance thread.

The server knows this through one seam, `Maintenance`: `start()` once the
server runs, `wake()` after every commit it sees (its writer's or another
process's), `stop()` at shutdown. The work itself (the full-text index
behind the appends on SQLite, the semantic leg's entry vectors) is the
backend's maintenance thread (store/base/maintenance.py), which every
writing Forest has, a library user's too: the server only tells it that
other processes wrote (`Forest.maintain`), and that a backlog from before it
started is its to work off.
"""

from __future__ import annotations

from typing import Protocol

from ..forest import Forest


class Maintenance(Protocol):
    def start(self) -> None: ...
    def wake(self) -> None: ...
    def stop(self) -> None: ...


class StoreMaintenance:
    """The store's maintenance thread, as the server wakes it."""

    def __init__(self, forest: Forest) -> None:
        self.forest = forest

    def start(self) -> None:
        self.forest.maintain()  # a backlog from before this server started

    def wake(self) -> None:
        self.forest.maintain()

    def stop(self) -> None:
        """Nothing here: the Forest stops its thread as the server closes it."""


def store_maintenance(forest: Forest) -> StoreMaintenance | None:
    """The maintenance a writable store gets (None: a read-only one does none)."""
    return StoreMaintenance(forest) if forest.readonly_why is None else None
