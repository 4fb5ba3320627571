"""The workspace and agent trees, one table each, apart from the conversations.

No trigger, cascade or foreign key ties them to each other or to session
entries, so an operation on one tree never implies one on another. The rules
(parent kinds, liveness, pre-order listings) are rules/trees.py's; this module
runs them inside the write each guards, on either backend.
"""

from __future__ import annotations

from typing import Any

import orjson
from msgspec.structs import replace

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
from ...model import SUPPORTED_SCHEMA_VERSIONS, Agent, AgentRole, Entry, Workspace
from ...rules import trees as rules
from .dialect import Conn, Cursor, Database, Dialect
from .rows import column_names

WORKSPACE_COLUMNS = "id, parent_id, kind, path, branch, created_at, removed_at"
AGENT_COLUMNS = "id, parent_id, role, session_id, workspace_id, policy, created_at, removed_at"
TABLES = ("workspaces", "agents")

# Children in creation order; removed ones only when asked for.
_CHILDREN = (
    "SELECT {columns} FROM {table} WHERE parent_id = ? AND (? OR removed_at IS NULL) "
    "ORDER BY {{order}}"
)

# Every record below :root (or below every root when :root is NULL) in one
# query, never one per parent. The depth bound turns a damaged cycle into a
# finite result; creation order is the order children keep.
_SUBTREE = """
WITH RECURSIVE sub(id, depth) AS (
    SELECT id, 0 FROM {table} WHERE id = :root
    UNION ALL
    SELECT id, 0 FROM {table} WHERE CAST(:root AS TEXT) IS NULL AND parent_id IS NULL
    UNION ALL
    SELECT t.id, sub.depth + 1 FROM {table} t JOIN sub ON t.parent_id = sub.id
    WHERE sub.depth < (SELECT COUNT(*) FROM {table})
)
SELECT {columns} FROM {table} WHERE id IN (SELECT id FROM sub) ORDER BY {{order}}
"""

# Removal is refused while these exist, so no live record hangs under a removed one.
_LIVE_CHILDREN = (
    "SELECT id FROM {table} WHERE parent_id = ? AND removed_at IS NULL ORDER BY {{order}}"
)
_MARK_REMOVED = "UPDATE {table} SET removed_at = ? WHERE id = ?"

# The entry and, in the same statement (one snapshot), whether it lies on the
# session's active branch: walk up from the head, stopping at the entry, never
# leaving the session, bounded like Forest.active_path against cycles. The
# session's own entry comes first where an id is stored twice (PostgreSQL keys
# entries by session). Columns are in the order Entry.from_row expects.
EVIDENCE = """
WITH RECURSIVE branch(id, parent_entry_id, depth) AS (
    SELECT id, parent_entry_id, 0 FROM session_entries
    WHERE session_id = :sid
      AND id = (SELECT active_entry_id FROM session_heads WHERE session_id = :sid)
    UNION ALL
    SELECT e.id, e.parent_entry_id, branch.depth + 1
    FROM session_entries e JOIN branch ON e.id = branch.parent_entry_id AND e.session_id = :sid
    WHERE branch.id != :entry
      AND branch.depth < (SELECT MAX(sequence) FROM session_entries WHERE session_id = :sid)
)
SELECT id, session_id, parent_entry_id, sequence, semantic_schema_version, kind, payload,
       context_visibility, created_at, stamp,
       EXISTS (SELECT 1 FROM branch WHERE id = :entry)
FROM session_entries WHERE id = :entry
ORDER BY session_id = :sid DESC LIMIT 1
"""

# The asking worker, its orchestrator's session and both liveness marks at once.
WORKER_AUTHORITY = """
SELECT w.role, w.removed_at, o.id, o.session_id, o.removed_at
FROM agents w LEFT JOIN agents o ON o.id = w.parent_id WHERE w.id = ?
"""


class Statements:
    """The statements above in one dialect (built once per dialect)."""

    def __init__(self, d: Dialect) -> None:
        w, a = WORKSPACE_COLUMNS, AGENT_COLUMNS
        self.workspace_children = d.sql(_CHILDREN.format(table="workspaces", columns=w))
        self.agent_children = d.sql(_CHILDREN.format(table="agents", columns=a))
        self.workspace_subtree = d.sql(_SUBTREE.format(table="workspaces", columns=w))
        self.agent_subtree = d.sql(_SUBTREE.format(table="agents", columns=a))
        self.live_children = {t: d.sql(_LIVE_CHILDREN.format(table=t)) for t in TABLES}
        self.mark_removed = {t: d.sql(_MARK_REMOVED.format(table=t)) for t in TABLES}
        self.evidence = d.sql(EVIDENCE)
        self.worker_authority = d.sql(WORKER_AUTHORITY)
        self.workspace = d.sql(f"SELECT {w} FROM workspaces WHERE id = ?")
        self.agent = d.sql(f"SELECT {a} FROM agents WHERE id = ?")
        self.live_agent_of = d.sql(
            f"SELECT {a} FROM agents WHERE session_id = ? AND removed_at IS NULL"
        )
        self.path_clash = d.sql("SELECT id FROM workspaces WHERE path = ? AND removed_at IS NULL")
        self.insert_workspace = d.sql(
            f"INSERT INTO workspaces({w}) VALUES (?, ?, ?, ?, ?, ?, NULL)"
        )
        self.insert_agent = d.sql(f"INSERT INTO agents({a}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)")
        self.session_known = d.sql("SELECT 1 FROM sessions WHERE id = ?")
        self.quarantine = d.sql("SELECT quarantine FROM sessions WHERE id = ?")


def _workspaces(cursor: Cursor) -> list[Workspace]:
    """A cursor's rows of WORKSPACE_COLUMNS, by column name."""
    return Workspace.from_rows(column_names(cursor.description), cursor.fetchall())


def _agents(cursor: Cursor) -> list[Agent]:
    """A cursor's rows of AGENT_COLUMNS, by column name; the policy is stored as JSON text."""
    names = column_names(cursor.description)
    agents = []
    for row in cursor.fetchall():
        columns = dict(zip(names, row, strict=True))
        if columns["policy"] is not None:
            columns["policy"] = orjson.loads(columns["policy"])
        agents.append(Agent.from_columns(columns))
    return agents


class SQLTrees:
    """`TreeStore` (store/base/store.py) over a backend's `Database` and `Dialect`."""

    def __init__(self, db: Database[Conn], dialect: Dialect) -> None:
        self._db = db
        self._q = Statements(dialect)

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
            parent = self._workspace(conn, parent_id) if parent_id is not None else None
            rules.check_workspace_parent(kind, parent, argument)
            clash = conn.execute(self._q.path_clash, (path,)).fetchone()
            if clash is not None:
                raise InvalidArgument("path", f"{path} is already live workspace {clash[0]}")
            conn.execute(
                self._q.insert_workspace, (workspace_id, parent_id, kind, path, branch, now)
            )

    def workspace(self, workspace_id: str) -> Workspace:
        with self._db.read() as conn:
            return self._workspace(conn, workspace_id)

    def workspace_children(self, workspace_id: str, include_removed: bool) -> list[Workspace]:
        with self._db.read() as conn:
            self._workspace(conn, workspace_id)
            return _workspaces(
                conn.execute(self._q.workspace_children, (workspace_id, include_removed))
            )

    def workspace_subtree(self, root_id: str | None) -> list[Workspace]:
        with self._db.read() as conn:
            if root_id is not None:
                self._workspace(conn, root_id)
            return _workspaces(conn.execute(self._q.workspace_subtree, {"root": root_id}))

    def remove_workspace(self, workspace_id: str, now: str) -> Workspace:
        with self._db.write() as conn:
            found = self._workspace(conn, workspace_id)
            return replace(found, removed_at=self._mark_removed(conn, "workspaces", found, now))

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
                parent = self._agent(conn, parent_id)
                rules.check_orchestrator(parent.role, parent.removed_at, parent_id)
            if not conn.execute(self._q.session_known, (session_id,)).fetchone():
                raise UnknownSession(session_id)
            owner = self._agent_for_session(conn, session_id)
            if owner is not None:
                raise InvalidArgument(
                    "session_id",
                    f"session {session_id} is already written by live agent {owner.id}",
                )
            if workspace_id is not None:
                place = self._workspace(conn, workspace_id)
                rules.require_live("workspace", place.id, place.removed_at, "workspace_id")
            conn.execute(
                self._q.insert_agent,
                (agent_id, parent_id, role, session_id, workspace_id, policy_text, now),
            )

    def agent(self, agent_id: str) -> Agent:
        with self._db.read() as conn:
            return self._agent(conn, agent_id)

    def agent_children(self, agent_id: str, include_removed: bool) -> list[Agent]:
        with self._db.read() as conn:
            self._agent(conn, agent_id)
            return _agents(conn.execute(self._q.agent_children, (agent_id, include_removed)))

    def agent_subtree(self, root_id: str | None) -> list[Agent]:
        with self._db.read() as conn:
            if root_id is not None:
                self._agent(conn, root_id)
            return _agents(conn.execute(self._q.agent_subtree, {"root": root_id}))

    def agent_for_session(self, session_id: str) -> Agent | None:
        with self._db.read() as conn:
            return self._agent_for_session(conn, session_id)

    def remove_agent(self, agent_id: str, now: str) -> Agent:
        with self._db.write() as conn:
            found = self._agent(conn, agent_id)
            return replace(found, removed_at=self._mark_removed(conn, "agents", found, now))

    # --- evidence ----------------------------------------------------------------

    def resolve_evidence(
        self, session_id: str, entry_id: str, for_agent: str | None
    ) -> dict[str, Any]:
        with self._db.read() as conn:
            state = conn.execute(self._q.quarantine, (session_id,)).fetchone()
            if state is None:
                raise UnknownSession(session_id)
            if state[0] is not None:
                raise SessionQuarantined(session_id, state[0])
            row = conn.execute(self._q.evidence, {"sid": session_id, "entry": entry_id}).fetchone()
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
                self._check_authority(conn, for_agent, session_id, entry_id)
            if not row[10]:
                raise NotOnActiveBranch(entry_id, session_id)
            payload = entry.payload
        # Fail closed if a stored result no longer meets the worker.result contract.
        from ...kinds import validate_payload  # the contracts, only where they are used

        validate_payload(entry.kind, payload)
        return payload

    # --- in the caller's transaction ----------------------------------------------

    def _workspace(self, conn: Conn, workspace_id: str) -> Workspace:
        found = _workspaces(conn.execute(self._q.workspace, (workspace_id,)))
        if not found:
            raise UnknownTreeNode("workspace", workspace_id)
        return found[0]

    def _agent(self, conn: Conn, agent_id: str) -> Agent:
        found = _agents(conn.execute(self._q.agent, (agent_id,)))
        if not found:
            raise UnknownTreeNode("agent", agent_id)
        return found[0]

    def _agent_for_session(self, conn: Conn, session_id: str) -> Agent | None:
        found = _agents(conn.execute(self._q.live_agent_of, (session_id,)))
        return found[0] if found else None

    def _mark_removed(self, conn: Conn, table: str, found: Workspace | Agent, now: str) -> str:
        """Stamp `found` removed unless it already is; returns its removal time."""
        if found.removed_at is not None:
            return found.removed_at  # removing twice keeps the first time
        live = [r[0] for r in conn.execute(self._q.live_children[table], (found.id,))]
        rules.removal_refused(table, found.id, live)
        conn.execute(self._q.mark_removed[table], (now, found.id))
        return now

    def _check_authority(self, conn: Conn, agent_id: str, session_id: str, entry_id: str) -> None:
        row = conn.execute(self._q.worker_authority, (agent_id,)).fetchone()
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
