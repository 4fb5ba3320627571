"""The model replies (`chat/reply`) running on this server, so `chat/stop` can end one.

A reply is known by its client and the id that client chose: `chat/stop` from
one connection can stop only that connection's replies (the ids are the
callers', so two clients may well pick the same one).
"""

from __future__ import annotations

import threading

from ..errors import ProviderError
from ..providers import ProviderConfig


class Replies:
    """Each running reply's stop flag."""

    def __init__(self) -> None:
        self._running: dict[tuple[str, str], threading.Event] = {}
        self._lock = threading.Lock()

    def begin(self, client_id: str, reply_id: str, cfg: ProviderConfig) -> threading.Event:
        """The new reply's stop flag; ProviderError when this client already runs that id."""
        with self._lock:
            if (client_id, reply_id) in self._running:
                raise ProviderError(cfg.provider, cfg.model, "bad_request",
                                    f"reply {reply_id!r} is already running")  # fmt: skip
            flag = self._running[client_id, reply_id] = threading.Event()
            return flag

    def stop(self, client_id: str, reply_id: str) -> bool:
        """Ask this client's reply to stop; False when it runs no reply of that id."""
        with self._lock:
            flag = self._running.get((client_id, reply_id))
        if flag is None:
            return False
        flag.set()
        return True

    def end(self, client_id: str, reply_id: str) -> None:
        with self._lock:
            self._running.pop((client_id, reply_id), None)
