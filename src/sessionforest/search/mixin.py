"""The two search entry points `Forest` offers: recall in one chat, find a chat.

Each search reads in one transaction (one consistent snapshot) and writes
nothing; results are plain values (see results.py). No model is involved.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ..errors import InvalidArgument
from ..ids import Clock
from .gate import judge
from .query import parse_query
from .recall import recall
from .results import ChatSearch, EntryHit
from .retrieve import Candidate, Filters, contains, hits, recent, retrieve
from .terms import Vocabulary, choose_terms, exclusions

HARNESSES = "SELECT DISTINCT harness FROM sessions WHERE harness <> ''"


class SearchMixin:
    """`search_session_entries` and `search_chats` for `Forest`."""

    _conn: sqlite3.Connection
    _clock: Clock

    if TYPE_CHECKING:

        def _readable(self, session_id: str) -> str | None: ...

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn
        if conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def search_session_entries(
        self, session_id: str, query: str, limit: int = 10
    ) -> list[EntryHit]:
        """Entries of this one session matching `query`, best first.

        Raises UnknownSession or SessionQuarantined like every read; an ended
        or archived session is searched like any other. `limit` must be at
        least 1 (InvalidArgument otherwise).
        """
        _check_limit(limit)
        with self._reading() as conn:
            self._readable(session_id)
            return recall(conn, session_id, query, limit)

    def search_chats(
        self,
        query: str,
        now: datetime | None = None,
        limit: int = 8,
        harness: str | None = None,
    ) -> ChatSearch:
        """Top-level chats matching `query`, best first, and whether the index is sure.

        Time phrases resolve against `now` (default: the store's clock);
        `harness` restricts the chats to one harness, as a harness word does;
        `limit` must be at least 1 (InvalidArgument otherwise).
        """
        _check_limit(limit)
        moment = now or self._clock()
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        with self._reading() as conn:
            known = [row[0] for row in conn.execute(HARNESSES)]
            found = _find(conn, query, moment, known, harness, limit)
            if not found.hits and found.harness and harness is None:
                # A harness name can also be a topic ("the claude sidecar"):
                # with nothing found under the filter, search it as a word.
                found = _find(conn, query, moment, [], None, limit)
        return found


def _check_limit(limit: int) -> None:
    # bool is an int: `limit=True` is a caller's mistake, not "one hit".
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidArgument("limit", f"must be a whole number of at least 1, got {limit!r}")


def _find(
    conn: sqlite3.Connection,
    query: str,
    now: datetime,
    known: list[str],
    harness: str | None,
    limit: int,
) -> ChatSearch:
    parsed = parse_query(query, now, known)
    wanted = set(parsed.harnesses) | ({harness.lower()} if harness else set())
    vocab = Vocabulary(conn)
    excluded = exclusions(vocab, parsed.excluded)
    filters = Filters(parsed.window, frozenset(wanted), excluded)
    choice = choose_terms(vocab, parsed.phrases, parsed.words)
    mode = "none"
    outside: list[Candidate] = []
    if choice.kept:
        chats, mode = retrieve(conn, choice.kept, filters, now, shown=limit)
        if not chats and filters.window is not None:
            # The words may date the events talked about, not the chat
            # ("what did she attend recently?"): retry once without the window.
            outside, _ = retrieve(
                conn, choice.kept, Filters(None, filters.harnesses, excluded), now, shown=limit
            )
    elif not choice.unknown and (filters.window or filters.harnesses or parsed.excluded):
        chats = recent(conn, filters)
    else:
        chats = []
    shown = hits(conn, chats[: max(limit, 2)], choice.kept)
    top = chats[0] if chats else None
    confident, reason, detail = judge(
        choice,
        shown[0] if shown else None,
        shown[1] if len(shown) > 1 else None,
        top_misses_dropped=[t.label for t in choice.extra if top and not contains(conn, top, t)],
        only_hit_holds=top is not None and (mode != "or" or top.and_match),
        outside_window=parsed.window.phrase if outside and parsed.window else None,
    )
    return ChatSearch(
        query=query,
        confident=confident,
        reason=reason,
        detail=detail,
        hits=tuple(shown[:limit]),
        terms=tuple(t.label for t in choice.kept),
        unknown_terms=choice.unknown,
        prefix_terms=choice.prefixed,
        dropped_terms=choice.dropped,
        window=parsed.window,
        harness=tuple(sorted(wanted)),
        mode=mode,
        outside_window=tuple(hits(conn, outside[:limit], choice.kept)),
        excluded_terms=parsed.excluded,
    )
