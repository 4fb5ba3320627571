"""The model replies (`chat/reply`) running on this server, by reply id, so `chat/stop`
can end one."""

from __future__ import annotations

import threading

from ..errors import ProviderError
from ..providers import ProviderConfig


class Replies:
    """Each running reply's stop flag."""

    def __init__(self) -> None:
        self._running: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def begin(self, reply_id: str, cfg: ProviderConfig) -> threading.Event:
        """The new reply's stop flag; ProviderError when that id is already running."""
        with self._lock:
            if reply_id in self._running:
                raise ProviderError(cfg.provider, cfg.model, "bad_request",
                                    f"reply {reply_id!r} is already running")  # fmt: skip
            flag = self._running[reply_id] = threading.Event()
            return flag

    def stop(self, reply_id: str) -> bool:
        """Ask the reply to stop; False when no reply of that id runs."""
        with self._lock:
            flag = self._running.get(reply_id)
        if flag is None:
            return False
        flag.set()
        return True

    def end(self, reply_id: str) -> None:
        with self._lock:
            self._running.pop(reply_id, None)
