"""The workspace and agent trees on PostgreSQL: one table each, apart from the conversations.

No trigger, cascade or foreign key ties them to each other or to session
entries, so an operation on one tree never implies one on another. The rules
(parent kinds, liveness, pre-order listings) are rules/trees.py's; this module
runs them inside the write each guards.
"""

from __future__ import annotations

from typing import Any

import orjson
import psycopg

from ...errors import (
    ForeignEntry,
    InvalidArgument,
    NotEvidence,
    NotOnActiveBranch,
    SessionQuarantined,
    UnknownEntry,
    UnknownSession,
    UnknownTreeNode,
    UnsupportedSchemaVersion,
)
from ...kinds import validate_payload
from ...model import SUPPORTED_SCHEMA_VERSIONS, Agent, AgentRole, Entry, Workspace
from ...rules import trees as rules
from .database import Database

WORKSPACE_COLUMNS = "id, parent_id, kind, path, branch, created_at, removed_at"
AGENT_COLUMNS = "id, parent_id, role, session_id, workspace_id, policy, created_at, removed_at"

# Children in creation (num) order; removed ones only when asked for.
_CHILDREN = (
    "SELECT {columns} FROM {table} WHERE parent_id = %s AND (%s OR removed_at IS NULL) ORDER BY num"
)
WORKSPACE_CHILDREN = _CHILDREN.format(table="workspaces", columns=WORKSPACE_COLUMNS)
AGENT_CHILDREN = _CHILDREN.format(table="agents", columns=AGENT_COLUMNS)

# Every record below %(root)s (or below every root when %(root)s is NULL) in one
# query, never one per parent. The depth bound turns a damaged cycle into a
# finite result; num order is creation order, which children keep.
_SUBTREE = """
WITH RECURSIVE sub(id, depth) AS (
    SELECT id, 0 FROM {table} WHERE id = %(root)s
    UNION ALL
    SELECT id, 0 FROM {table} WHERE %(root)s::text IS NULL AND parent_id IS NULL
    UNION ALL
    SELECT t.id, sub.depth + 1 FROM {table} t JOIN sub ON t.parent_id = sub.id
    WHERE sub.depth < (SELECT COUNT(*) FROM {table})
)
SELECT {columns} FROM {table} WHERE id IN (SELECT id FROM sub) ORDER BY num
"""
WORKSPACE_SUBTREE = _SUBTREE.format(table="workspaces", columns=WORKSPACE_COLUMNS)
AGENT_SUBTREE = _SUBTREE.format(table="agents", columns=AGENT_COLUMNS)

# Removal is refused while these exist, so no live record hangs under a removed one.
LIVE_CHILDREN = {
    t: f"SELECT id FROM {t} WHERE parent_id = %s AND removed_at IS NULL ORDER BY num"
    for t in ("workspaces", "agents")
}
MARK_REMOVED = {
    t: f"UPDATE {t} SET removed_at = %s WHERE id = %s" for t in ("workspaces", "agents")
}

# The entry and, in the same statement (one snapshot), whether it lies on the
# session's active branch: walk up from the head, stopping at the entry, never
# leaving the session, bounded like Forest.active_path against cycles.
# Columns are in the order Entry.from_row expects.
EVIDENCE = """
WITH RECURSIVE branch(id, parent_entry_id, depth) AS (
    SELECT id, parent_entry_id, 0 FROM session_entries
    WHERE session_id = %(sid)s
      AND id = (SELECT active_entry_id FROM session_heads WHERE session_id = %(sid)s)
    UNION ALL
    SELECT e.id, e.parent_entry_id, branch.depth + 1
    FROM session_entries e JOIN branch ON e.session_id = %(sid)s AND e.id = branch.parent_entry_id
    WHERE branch.id != %(entry)s
      AND branch.depth < (SELECT MAX(sequence) FROM session_entries WHERE session_id = %(sid)s)
)
SELECT id, session_id, parent_entry_id, sequence, semantic_schema_version, kind, payload,
       context_visibility, created_at, stamp,
       EXISTS (SELECT 1 FROM branch WHERE id = %(entry)s)
FROM session_entries WHERE id = %(entry)s
ORDER BY session_id = %(sid)s DESC LIMIT 1
"""

# The asking worker, its orchestrator's session and both liveness marks at once.
WORKER_AUTHORITY = """
SELECT w.role, w.removed_at, o.id, o.session_id, o.removed_at
FROM agents w LEFT JOIN agents o ON o.id = w.parent_id WHERE w.id = %s
"""


def _agent(row: tuple[Any, ...]) -> Agent:
    policy = orjson.loads(row[5]) if row[5] is not None else None
    return Agent(row[0], row[1], row[2], row[3], row[4], policy, row[6], row[7])


class PostgresTrees:
    """`TreeStore` (store/base.py) over one PostgreSQL `Database`."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # --- workspace tree ----------------------------------------------------------

    def add_workspace(
        self,
        workspace_id: str,
        kind: str,
        parent_id: str | None,
        argument: str,
        path: str,
        branch: str | None,
        now: str,
    ) -> None:
        with self._db.write() as conn:
            parent = _workspace(conn, parent_id) if parent_id is not None else None
            rules.check_workspace_parent(kind, parent, argument)
            clash = conn.execute(
                "SELECT id FROM workspaces WHERE path = %s AND removed_at IS NULL", (path,)
            ).fetchone()
            if clash is not None:
                raise InvalidArgument("path", f"{path} is already live workspace {clash[0]}")
            conn.execute(
                f"INSERT INTO workspaces({WORKSPACE_COLUMNS}) "
                "VALUES (%s, %s, %s, %s, %s, %s, NULL)",
                (workspace_id, parent_id, kind, path, branch, now),
            )

    def workspace(self, workspace_id: str) -> Workspace:
        with self._db.read() as conn:
            return _workspace(conn, workspace_id)

    def workspace_children(self, workspace_id: str, include_removed: bool) -> list[Workspace]:
        with self._db.read() as conn:
            _workspace(conn, workspace_id)
            rows = conn.execute(WORKSPACE_CHILDREN, (workspace_id, include_removed))
            return [Workspace(*row) for row in rows]

    def workspace_subtree(self, root_id: str | None) -> list[Workspace]:
        with self._db.read() as conn:
            if root_id is not None:
                _workspace(conn, root_id)
            return [Workspace(*row) for row in conn.execute(WORKSPACE_SUBTREE, {"root": root_id})]

    def remove_workspace(self, workspace_id: str, now: str) -> Workspace:
        with self._db.write() as conn:
            found = _workspace(conn, workspace_id)
            return Workspace(
                found.id, found.parent_id, found.kind, found.path, found.branch,
                found.created_at, _mark_removed(conn, "workspaces", found, now),
            )  # fmt: skip

    # --- agent tree --------------------------------------------------------------

    def add_agent(
        self,
        agent_id: str,
        role: str,
        parent_id: str | None,
        session_id: str,
        policy_text: str | None,
        workspace_id: str | None,
        now: str,
    ) -> None:
        with self._db.write() as conn:
            if parent_id is not None:
                parent = _agent_row(conn, parent_id)
                rules.check_orchestrator(parent.role, parent.removed_at, parent_id)
            if not conn.execute("SELECT 1 FROM sessions WHERE id = %s", (session_id,)).fetchone():
                raise UnknownSession(session_id)
            owner = _agent_for_session(conn, session_id)
            if owner is not None:
                raise InvalidArgument(
                    "session_id",
                    f"session {session_id} is already written by live agent {owner.id}",
                )
            if workspace_id is not None:
                place = _workspace(conn, workspace_id)
                rules.require_live("workspace", place.id, place.removed_at, "workspace_id")
            conn.execute(
                f"INSERT INTO agents({AGENT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, NULL)",
                (agent_id, parent_id, role, session_id, workspace_id, policy_text, now),
            )

    def agent(self, agent_id: str) -> Agent:
        with self._db.read() as conn:
            return _agent_row(conn, agent_id)

    def agent_children(self, agent_id: str, include_removed: bool) -> list[Agent]:
        with self._db.read() as conn:
            _agent_row(conn, agent_id)
            return [
                _agent(row) for row in conn.execute(AGENT_CHILDREN, (agent_id, include_removed))
            ]

    def agent_subtree(self, root_id: str | None) -> list[Agent]:
        with self._db.read() as conn:
            if root_id is not None:
                _agent_row(conn, root_id)
            return [_agent(row) for row in conn.execute(AGENT_SUBTREE, {"root": root_id})]

    def agent_for_session(self, session_id: str) -> Agent | None:
        with self._db.read() as conn:
            return _agent_for_session(conn, session_id)

    def remove_agent(self, agent_id: str, now: str) -> Agent:
        with self._db.write() as conn:
            found = _agent_row(conn, agent_id)
            return Agent(
                found.id, found.parent_id, found.role, found.session_id, found.workspace_id,
                found.policy, found.created_at, _mark_removed(conn, "agents", found, now),
            )  # fmt: skip

    # --- evidence ----------------------------------------------------------------

    def resolve_evidence(
        self, session_id: str, entry_id: str, for_agent: str | None
    ) -> dict[str, Any]:
        with self._db.read() as conn:
            state = conn.execute(
                "SELECT quarantine FROM sessions WHERE id = %s", (session_id,)
            ).fetchone()
            if state is None:
                raise UnknownSession(session_id)
            if state[0] is not None:
                raise SessionQuarantined(session_id, state[0])
            row = conn.execute(EVIDENCE, {"sid": session_id, "entry": entry_id}).fetchone()
            if row is None:
                raise UnknownEntry(entry_id, session_id)
            if row[1] != session_id:
                raise ForeignEntry(entry_id, session_id, row[1])
            if row[4] not in SUPPORTED_SCHEMA_VERSIONS:
                raise UnsupportedSchemaVersion(entry_id, row[4], session_id)
            entry = Entry.from_row(row)
            if entry.kind != "worker.result":
                raise NotEvidence(entry_id, entry.kind)
            # Authority is checked once the entry's owner is known, so a
            # ForeignEntry raised for a worker names the entry's true session.
            if for_agent is not None:
                _check_authority(conn, for_agent, session_id, entry_id)
            if not row[10]:
                raise NotOnActiveBranch(entry_id, session_id)
            payload = entry.payload
        # Fail closed if a stored result no longer meets the worker.result contract.
        validate_payload(entry.kind, payload)
        return payload


def _workspace(conn: psycopg.Connection[Any], workspace_id: str) -> Workspace:
    row = conn.execute(
        f"SELECT {WORKSPACE_COLUMNS} FROM workspaces WHERE id = %s", (workspace_id,)
    ).fetchone()
    if row is None:
        raise UnknownTreeNode("workspace", workspace_id)
    return Workspace(*row)


def _agent_row(conn: psycopg.Connection[Any], agent_id: str) -> Agent:
    row = conn.execute(f"SELECT {AGENT_COLUMNS} FROM agents WHERE id = %s", (agent_id,)).fetchone()
    if row is None:
        raise UnknownTreeNode("agent", agent_id)
    return _agent(row)


def _agent_for_session(conn: psycopg.Connection[Any], session_id: str) -> Agent | None:
    row = conn.execute(
        f"SELECT {AGENT_COLUMNS} FROM agents WHERE session_id = %s AND removed_at IS NULL",
        (session_id,),
    ).fetchone()
    return _agent(row) if row is not None else None


def _mark_removed(
    conn: psycopg.Connection[Any], table: str, found: Workspace | Agent, now: str
) -> str:
    """Stamp `found` removed unless it already is; returns its removal time."""
    if found.removed_at is not None:
        return found.removed_at  # removing twice keeps the first time
    live = [r[0] for r in conn.execute(LIVE_CHILDREN[table], (found.id,))]
    rules.removal_refused(table, found.id, live)
    conn.execute(MARK_REMOVED[table], (now, found.id))
    return now


def _check_authority(
    conn: psycopg.Connection[Any], agent_id: str, session_id: str, entry_id: str
) -> None:
    row = conn.execute(WORKER_AUTHORITY, (agent_id,)).fetchone()
    if row is None:
        raise UnknownTreeNode("agent", agent_id)
    role, removed_at, orchestrator_id, orchestrator_session, orchestrator_removed = row
    if role != AgentRole.WORKER:
        raise InvalidArgument(
            "for_agent",
            f"agent {agent_id} is an orchestrator; evidence is resolved for workers",
        )
    rules.require_live("agent", agent_id, removed_at, "for_agent")
    rules.require_live("agent", orchestrator_id, orchestrator_removed, "for_agent")
    if orchestrator_session != session_id:
        # From this worker's side the entry lives in a session that is not
        # its orchestrator's: exactly a foreign entry.
        raise ForeignEntry(entry_id, orchestrator_session, session_id)
