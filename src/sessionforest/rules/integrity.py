"""What `check` reports and what `repair` may do: decided here, read by a backend.

A backend streams each session's entries as `Row`s (in sequence order) and
its heads; these functions say what is wrong and where a head may move. Entries
are immutable, so repair only ever re-links (a session row, a head).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..ids import normal_time
from ..model import SUPPORTED_SCHEMA_VERSIONS, CheckReport, Problem, RepairAction
from ..text import plural

READABLE = ", ".join(map(str, sorted(SUPPORTED_SCHEMA_VERSIONS)))
RECOVERED_TITLE = "(recovered session)"

# (entry id, parent id, sequence, schema version, parent's session)
Row = tuple[str, str | None, int, int, str | None]

# Reported, but they do not fence the session off: its links are whole and it reads.
NOT_DAMAGE = frozenset({"bad-time"})


def time_problem(sid: str, entry_id: str | None, value: object) -> Problem | None:
    """A stored `created_at` that is not a time (written by raw SQL or by a version
    that did not check it): exports, time filters and sorting cannot use it."""
    try:
        normal_time(value)
    except ValueError:
        whose = "the entry's" if entry_id is not None else "the session's"
        return Problem(
            sid, "bad-time", entry_id, f"{whose} created_at {value!r} is not an ISO 8601 time"
        )
    return None


def session_problems(sid: str, rows: list[Row]) -> Iterable[Problem]:
    """What is wrong with one session's entries (in sequence order)."""
    parents: dict[str, str | None] = {}
    for expected, (entry_id, parent, sequence, _version, _owner) in enumerate(rows, 1):
        parents[entry_id] = parent
        if sequence != expected:
            yield Problem(
                sid, "sequence-gap", entry_id, f"sequence {sequence} where {expected} was expected"
            )
            break
    for entry_id, parent, _sequence, version, parent_owner in rows:
        if version not in SUPPORTED_SCHEMA_VERSIONS:
            yield Problem(
                sid,
                "unsupported-version",
                entry_id,
                f"semantic_schema_version {version} cannot be read by this sessionforest "
                f"(readable: {READABLE})",
            )
        if parent is None:
            continue
        if parent_owner is None:
            yield Problem(sid, "orphan-parent", entry_id, f"parent {parent} does not exist")
        elif parent_owner != sid:
            yield Problem(
                sid, "cross-session-parent", entry_id, f"parent {parent} belongs to {parent_owner}"
            )
    # Iterative cycle detection over parent pointers: 0 new, 1 on stack, 2 done.
    state: dict[str, int] = {}
    for start in parents:
        if state.get(start):
            continue
        trail = []
        node: str | None = start
        while node is not None and node in parents and not state.get(node):
            state[node] = 1
            trail.append(node)
            node = parents[node]
        if node is not None and state.get(node) == 1:
            yield Problem(sid, "cycle", node, f"following parents from {start} returns to {node}")
        for visited in trail:
            state[visited] = 2


def head_problems(
    heads: Mapping[str, tuple[bool, str | None, str | None]], counts: Mapping[str, int]
) -> Iterable[Problem]:
    """Problems of heads and session rows.

    `heads`: session id -> (has a session row, head, the head's owner) for
    every session row and every head row; `counts`: entries per session.
    """
    for sid, (_row, head, owner) in heads.items():
        if head is None:
            continue
        if owner is None:
            yield Problem(sid, "invalid-head", head, f"head {head} does not exist")
        elif owner != sid:
            yield Problem(sid, "invalid-head", head, f"head {head} belongs to {owner}")
    for sid, count in counts.items():
        if heads.get(sid, (False, None, None))[1] is None:
            # Reads would show an empty session: every entry hidden.
            yield Problem(
                sid, "missing-head", None, f"{plural(count, 'entry', 'entries')} but no head"
            )
    rows = {sid for sid, (has_row, _h, _o) in heads.items() if has_row}
    for sid in sorted((counts.keys() | heads.keys()) - rows):
        count = counts.get(sid, 0)
        if count == 0:
            left = "its head row remains"
        else:
            left = plural(count, "entry", "entries") + (" remains" if count == 1 else " remain")
        yield Problem(sid, "missing-session", None, f"the session row is gone but {left}")


def path_problem(sid: str, claimed: list[str], walked: list[str]) -> Problem | None:
    """A stored copy of the active path (root first) that is not the parent-link walk
    from the head (`walked`, root first), or None when they agree."""
    if claimed == walked:
        return None
    at = next(
        (i for i, (a, b) in enumerate(zip(claimed, walked, strict=False)) if a != b),
        min(len(claimed), len(walked)),
    )
    found = claimed[at] if at < len(claimed) else None
    return Problem(
        sid,
        "path-mismatch",
        found,
        f"the stored active path ({plural(len(claimed), 'entry', 'entries')}) differs from "
        f"the parent links ({plural(len(walked), 'entry', 'entries')}) at depth {at}",
    )


FORGOT_PATH = RepairAction(
    "dropped-path",
    "the stored active path disagreed with the parent links; it was dropped (reads follow "
    "the parent links, and the next append or move stores it again from them)",
)


def report(problems: list[Problem], sessions: int, entries: int) -> CheckReport:
    damaged = tuple(sorted({p.session_id for p in problems if p.code not in NOT_DAMAGE}))
    return CheckReport(
        sessions_checked=sessions,
        entries_checked=entries,
        problems=tuple(problems),
        quarantined=damaged,
    )


def reason(problem: Problem) -> str:
    """The quarantine text `check` and `repair` store for a session's first problem."""
    at = f" at {problem.entry_id}" if problem.entry_id else ""
    return f"{problem.code}{at}: {problem.detail}"


IMMUTABLE = "entries are immutable: repair never re-links, rewrites or deletes one"

# Why each kind of problem outlives a repair.
WHY = {
    "orphan-parent": f"the entry's parent is gone; {IMMUTABLE}",
    "cross-session-parent": f"the entry's parent belongs to another session; {IMMUTABLE}",
    "cycle": f"the cycle is made of the entries' own parent links; {IMMUTABLE}",
    "sequence-gap": f"an entry was removed or renumbered behind the store's back; {IMMUTABLE}",
    "unsupported-version": (
        "written by a newer sessionforest (or damaged): only a sessionforest that reads "
        f"this version can check it; {IMMUTABLE}"
    ),
    "parent-sequence-mismatch": f"the entry's row misstates its parent's sequence; {IMMUTABLE}",
    "bad-time": f"a stored time is part of its row; {IMMUTABLE} (the session stays readable)",
    "invalid-head": "no entry of this session has an intact path to the root to move the head to",
    "missing-head": "no entry of this session has an intact path to the root to move the head to",
}


def intact(rows: list[Row]) -> set[str]:
    """The entries whose path to the root is whole: every ancestor stored in this
    session, readable, and no cycle on the way."""
    links = {r[0]: (r[1], r[3]) for r in rows}  # id -> (parent, version)
    known: dict[str, bool] = {}
    for start in links:
        trail: list[str] = []
        on_trail: set[str] = set()
        node = start
        while True:
            if node in known:
                whole = known[node]
                break
            if node in on_trail:
                whole = False  # a cycle
                break
            parent, version = links[node]
            trail.append(node)
            on_trail.add(node)
            if version not in SUPPORTED_SCHEMA_VERSIONS:
                whole = False
                break
            if parent is None:
                whole = True
                break
            if parent not in links:  # missing, or another session's
                whole = False
                break
            node = parent
        for visited in trail:  # one chain: all share the verdict of its top
            known[visited] = whole
    return {entry_id for entry_id, whole in known.items() if whole}


def head_move(
    session_id: str, head: str | None, owner: str | None, rows: list[Row]
) -> tuple[str | None, RepairAction] | None:
    """Where repair points a missing or broken head, and the action saying so; None when
    the head is fine or no entry has an intact path to move it to."""
    if not ((head is None and rows) or (head is not None and owner != session_id)):
        return None
    if head is None:
        was = "the session had entries but no head"
    elif owner is None:
        was = f"the head pointed at {head}, which does not exist"
    else:
        was = f"the head pointed at {head}, an entry of session {owner}"
    if not rows:
        return None, RepairAction(
            "cleared-head", f"{was}; the session has no entries, so the head now points at none"
        )
    whole = intact(rows)
    target = max((r for r in rows if r[0] in whole), key=lambda r: r[2], default=None)
    if target is None:
        return None  # the fresh check reports the head; WHY says why it stayed
    code = "set-head" if head is None else "moved-head"
    return target[0], RepairAction(
        code,
        f"{was}; set it to {target[0]} (sequence {target[2]}), the newest entry "
        "whose path to the root is intact",
    )


def recreated(created_at: str) -> RepairAction:
    return RepairAction(
        "recreated-session-row",
        f"recreated the missing session row (title {RECOVERED_TITLE!r}, created "
        f"{created_at}); the old row's title, harness, directory, status and import "
        "source were lost with it and are left empty",
    )
