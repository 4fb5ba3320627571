"""Work the server does behind the appends: today, the semantic leg's entry vectors.

The server knows this through one seam, `Maintenance`: `start()` once the
server runs, `wake()` after every commit it sees (its writer's or another
process's), `stop()` at shutdown. `vector_maintenance` gives the one this
server runs (None without the semantic leg or on a read-only store); a
per-backend maintenance thread can take its place behind the same three calls.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from ..errors import ForestError
from ..forest import Forest

log = logging.getLogger("sessionforest.server")

# The semantic leg's vectors (the [semantic] extra) are computed behind the
# appends by one background thread, this many entries per step, so a stop
# never waits for more than one batch.
VECTOR_STEP = 256


class Maintenance(Protocol):
    def start(self) -> None: ...
    def wake(self) -> None: ...
    def stop(self) -> None: ...


class VectorCatchUp:
    """The `forest-vectors` thread: embeds pending entries whenever a commit wakes it.

    Embedding runs outside any transaction and each step stores its vectors in
    one short write, so appends and searches go on meanwhile; a search still
    embeds a handful of pending entries itself (search/semantic.py), so what
    was appended a moment ago is found either way."""

    def __init__(self, forest: Forest, step: int = VECTOR_STEP) -> None:
        self.forest = forest
        self.step = step
        self._due = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._due.set()  # a backlog from before this server started
            self._thread = threading.Thread(target=self._run, name="forest-vectors", daemon=True)
            self._thread.start()

    def wake(self) -> None:
        self._due.set()

    def _run(self) -> None:
        while True:
            self._due.wait()
            if self._stop.is_set():
                return
            self._due.clear()
            try:
                while not self._stop.is_set():
                    done, _ = self.forest.index_semantic(limit=self.step)
                    if done < self.step:
                        break
            except ForestError:
                continue  # busy or briefly unreadable: the next commit wakes it again
            except Exception:  # the model itself failed: say so once and stop trying
                log.exception("computing entry vectors failed; the server stops doing it")
                return

    def stop(self) -> None:
        self._stop.set()
        self._due.set()
        if self._thread is not None:
            self._thread.join()


def vector_maintenance(forest: Forest) -> VectorCatchUp | None:
    """The vector thread this store needs: only with the semantic leg, only when writable."""
    if forest.semantic and forest.readonly_why is None:
        return VectorCatchUp(forest)
    return None
