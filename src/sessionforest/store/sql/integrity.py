"""`check` and `repair` on either backend: stream what rules/integrity.py judges.

One pass over all entries (grouped by session), one over heads and session
rows; damage in one session never stops the scan of another. The same scan,
narrowed to one session, is the fresh check `repair` ends with. Repair only
re-links (recreates a session row whose entries remain, points a missing or
broken head at the newest entry whose path to the root is intact); no entry
is ever written, changed or deleted. Each backend gives the scanning SQL (how
a parent's owner is found depends on how entries are keyed) and, for SQLite,
the materialised path's own check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic

from ...errors import SessionDamaged, UnknownSession
from ...model import CheckReport, Problem, RepairAction, RepairReport, Unrepaired
from ...rules import integrity as rules
from .dialect import C, Dialect
from .rows import RECOUNT, UPSERT_HEAD

# A row may come back over existing entries only quarantined (the backends'
# no-adoption trigger); the fresh check at the end of repair releases it.
RECREATE_SESSION = (
    "INSERT INTO sessions(id, title, harness, created_at, quarantine) VALUES (?, ?, '', ?, ?)"
)
FIRST_CREATED = (
    "SELECT created_at FROM session_entries WHERE session_id = ? ORDER BY sequence LIMIT 1"
)
SESSION_TIMES = "SELECT id, created_at FROM sessions {where}"
CLEAR_QUARANTINE = "UPDATE sessions SET quarantine = NULL WHERE quarantine IS NOT NULL"
SET_QUARANTINE = "UPDATE sessions SET quarantine = ? WHERE id = ?"

# Problems a backend finds beyond the links (SQLite: its materialised paths).
ExtraCheck = Callable[[C, str | None], list[Problem]]


def adoption_refused(session_id: str) -> SessionDamaged:
    """The error for a new session row refused by the no-adoption trigger."""
    return SessionDamaged(
        session_id,
        "entries (or a head) of an earlier session with this id remain after its row was "
        f"deleted; a new session would adopt them. `forest repair {session_id}` recreates "
        "the row instead",
    )


class Integrity(Generic[C]):
    """Scan, quarantine and repair over one backend's SQL.

    `entries` and `heads` are templates in the shared form: `entries` selects
    (session, id, parent, sequence, version, parent's owner, created_at) ordered by session
    and sequence, with `{where}` for the one-session filter; `heads` selects
    (session, has_row, head, head's owner) with `{where_session}` and
    `{and_head}`. `state` reads (has_row, quarantine, has_head_row, head,
    head's owner) of `:sid`; `lock` (if any) runs first in a repair.
    """

    def __init__(
        self,
        d: Dialect,
        *,
        entries: str,
        heads: str,
        state: str,
        lock: str | None = None,
        extra: ExtraCheck[C] | None = None,
        forget: str | tuple[str, ...] | None = None,
    ) -> None:
        self.scan_entries = d.sql(entries.format(where=""))
        self.scan_session_entries = d.sql(entries.format(where="WHERE e.session_id = :sid"))
        self.scan_heads = d.sql(heads.format(where_session="", and_head=""))
        self.scan_session_heads = d.sql(
            heads.format(where_session="WHERE s.id = :sid", and_head="AND h.session_id = :sid")
        )
        self.scan_times = d.sql(SESSION_TIMES.format(where=""))
        self.scan_session_times = d.sql(SESSION_TIMES.format(where="WHERE id = :sid"))
        self._state = d.sql(state)
        self._lock = d.sql(lock) if lock is not None else None
        self._extra = extra
        forgets = (forget,) if isinstance(forget, str) else forget or ()
        self._forget = tuple(d.sql(f) for f in forgets)
        self._recreate = d.sql(RECREATE_SESSION)
        self._first_created = d.sql(FIRST_CREATED)
        self._set_head = d.sql(UPSERT_HEAD)
        self._recount = d.sql(RECOUNT)
        self._clear = d.sql(CLEAR_QUARANTINE)
        self._set = d.sql(SET_QUARANTINE)

    def scan(self, conn: C, session_id: str | None = None) -> CheckReport:
        """Check every session (or only `session_id`); reads only."""
        params = {"sid": session_id}
        problems: list[Problem] = []
        counts: dict[str, int] = {}  # entries per session
        entries = 0
        group: list[rules.Row] = []
        current: str | None = None
        query = self.scan_entries if session_id is None else self.scan_session_entries
        for sid, entry_id, parent, sequence, version, parent_owner, created in conn.execute(
            query, params
        ):
            entries += 1
            if (bad := rules.time_problem(sid, entry_id, created)) is not None:
                problems.append(bad)
            if sid != current:
                if current is not None:
                    problems.extend(rules.session_problems(current, group))
                    counts[current] = len(group)
                current, group = sid, []
            group.append((entry_id, parent, sequence, version, parent_owner))
        if current is not None:
            problems.extend(rules.session_problems(current, group))
            counts[current] = len(group)
        query = self.scan_heads if session_id is None else self.scan_session_heads
        heads = {
            sid: (bool(has_row), head, owner)
            for sid, has_row, head, owner in conn.execute(query, params)
        }
        problems.extend(rules.head_problems(heads, counts))
        query = self.scan_times if session_id is None else self.scan_session_times
        for sid, created in conn.execute(query, params):
            if (bad := rules.time_problem(sid, None, created)) is not None:
                problems.append(bad)
        if self._extra is not None:
            problems.extend(self._extra(conn, session_id))
        return rules.report(problems, len(counts.keys() | heads.keys()), entries)

    def apply_quarantine(self, conn: C, report: CheckReport) -> None:
        """Fence off every damaged session and release every other one.

        A session whose row is gone has nowhere to hold a quarantine: its missing
        row already fences it (reads and appends raise UnknownSession, search
        joins on session rows), and the no-adoption trigger lets a row come back
        only quarantined, which `repair` then checks afresh.
        """
        reasons: dict[str, str] = {}
        for problem in report.problems:
            if problem.code in rules.NOT_DAMAGE:
                continue
            reasons.setdefault(problem.session_id, rules.reason(problem))
        conn.execute(self._clear)
        for sid, text in reasons.items():
            conn.execute(self._set, (text, sid))

    def repair(self, conn: C, session_id: str, now: str) -> RepairReport:
        """Repair `session_id` inside the caller's write transaction."""
        if self._lock is not None:
            conn.execute(self._lock, (session_id,))
        has_row, quarantine, has_head_row, head, head_owner = conn.execute(
            self._state, {"sid": session_id}
        ).fetchone()
        rows: list[rules.Row] = [
            (r[1], r[2], r[3], r[4], r[5])
            for r in conn.execute(self.scan_session_entries, {"sid": session_id})
        ]
        if not has_row and not rows and not has_head_row:
            raise UnknownSession(session_id)
        fenced = quarantine is not None or not has_row
        actions: list[RepairAction] = []
        if not has_row:
            created = conn.execute(self._first_created, (session_id,)).fetchone()
            created_at = created[0] if created is not None else now
            conn.execute(
                self._recreate,
                (session_id, rules.RECOVERED_TITLE, created_at, "missing-session: being repaired"),
            )
            actions.append(rules.recreated(created_at))
        move = rules.head_move(session_id, head, head_owner, rows)
        if move is not None:
            conn.execute(self._set_head, (session_id, move[0], now))
            actions.append(move[1])
        if actions:
            # A head row repair made or re-pointed counts the session's messages afresh.
            conn.execute(self._recount, (session_id, session_id))
        if self._forget and self._extra is not None and self._extra(conn, session_id):
            for forget in self._forget:
                conn.execute(forget, (session_id,))
            actions.append(rules.FORGOT_PATH)
        report = self.scan(conn, session_id)
        unrepaired = tuple(
            Unrepaired(
                p.session_id,
                p.code,
                p.entry_id,
                p.detail,
                rules.WHY.get(p.code, "repair cannot fix this"),
            )
            for p in report.problems
        )
        damage = [p for p in report.problems if p.code not in rules.NOT_DAMAGE]
        after = rules.reason(damage[0]) if damage else None
        conn.execute(self._set, (after, session_id))
        return RepairReport(
            session_id=session_id,
            actions=tuple(actions),
            unrepaired=unrepaired,
            released=fenced and after is None,
            quarantine=after,
        )
