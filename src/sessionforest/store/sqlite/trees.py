"""The workspace and agent trees, stored and navigated apart from conversations.

Workspaces (repository -> task worktree -> worker worktree) and agents
(orchestrator -> policy-authorized workers) each have their own table; no
trigger, cascade or foreign key ties them to each other or to session entries.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import orjson

from ...errors import (
    ForeignEntry,
    InvalidArgument,
    NotEvidence,
    NotOnActiveBranch,
    UnknownEntry,
    UnknownSession,
    UnknownTreeNode,
    UnsupportedSchemaVersion,
)
from ...ids import new_id
from ...jsontext import NonFinite, encode
from ...kinds import validate_payload
from ...model import (
    PARENT_KIND,
    SUPPORTED_SCHEMA_VERSIONS,
    Agent,
    AgentRole,
    Entry,
    TreeItem,
    Workspace,
    WorkspaceKind,
)
from ...model.trees import R

WORKSPACE_COLUMNS = "id, parent_id, kind, path, branch, created_at, removed_at"
AGENT_COLUMNS = "id, parent_id, role, session_id, workspace_id, policy, created_at, removed_at"

# Children in creation (rowid) order; removed ones only when asked for.
_CHILDREN = (
    "SELECT {columns} FROM {table} WHERE parent_id = ? AND (? OR removed_at IS NULL) ORDER BY rowid"
)
WORKSPACE_CHILDREN = _CHILDREN.format(table="workspaces", columns=WORKSPACE_COLUMNS)
AGENT_CHILDREN = _CHILDREN.format(table="agents", columns=AGENT_COLUMNS)

# Every record below :root (or below every root when :root is NULL) in one
# query, never one per parent. The depth bound turns a damaged cycle into a
# finite result; rowid order is creation order, which children keep.
_SUBTREE = """
WITH RECURSIVE sub(id, depth) AS (
    SELECT id, 0 FROM {table} WHERE id = :root
    UNION ALL
    SELECT id, 0 FROM {table} WHERE :root IS NULL AND parent_id IS NULL
    UNION ALL
    SELECT t.id, sub.depth + 1 FROM {table} t JOIN sub ON t.parent_id = sub.id
    WHERE sub.depth < (SELECT COUNT(*) FROM {table})
)
SELECT {columns} FROM {table} WHERE id IN (SELECT id FROM sub) ORDER BY rowid
"""
WORKSPACE_SUBTREE = _SUBTREE.format(table="workspaces", columns=WORKSPACE_COLUMNS)
AGENT_SUBTREE = _SUBTREE.format(table="agents", columns=AGENT_COLUMNS)

# Removal is refused while these exist, so no live record hangs under a removed one.
LIVE_CHILDREN = {
    t: f"SELECT id FROM {t} WHERE parent_id = ? AND removed_at IS NULL ORDER BY rowid"
    for t in ("workspaces", "agents")
}
MARK_REMOVED = {t: f"UPDATE {t} SET removed_at = ? WHERE id = ?" for t in ("workspaces", "agents")}

# The entry and, in the same statement (one snapshot), whether it lies on the
# session's active branch: walk up from the head, stopping at the entry, never
# leaving the session, bounded like Forest.active_path against cycles.
# Columns are in the order Entry.from_row expects.
EVIDENCE = """
WITH RECURSIVE branch(id, parent_entry_id, depth) AS (
    SELECT id, parent_entry_id, 0 FROM session_entries
    WHERE id = (SELECT active_entry_id FROM session_heads WHERE session_id = :sid)
      AND session_id = :sid
    UNION ALL
    SELECT e.id, e.parent_entry_id, branch.depth + 1
    FROM session_entries e JOIN branch ON e.id = branch.parent_entry_id
    WHERE branch.id != :entry AND e.session_id = :sid
      AND branch.depth < (SELECT MAX(sequence) FROM session_entries WHERE session_id = :sid)
)
SELECT id, session_id, parent_entry_id, sequence, semantic_schema_version, kind, payload,
       context_visibility, created_at, stamp,
       EXISTS (SELECT 1 FROM branch WHERE id = :entry)
FROM session_entries WHERE id = :entry
"""

# The asking worker, its orchestrator's session and both liveness marks at once.
WORKER_AUTHORITY = """
SELECT w.role, w.removed_at, o.id, o.session_id, o.removed_at
FROM agents w LEFT JOIN agents o ON o.id = w.parent_id WHERE w.id = ?
"""


def _agent(row: tuple[Any, ...]) -> Agent:
    policy = orjson.loads(row[5]) if row[5] is not None else None
    return Agent(row[0], row[1], row[2], row[3], row[4], policy, row[6], row[7])


def _preorder(rows: list[R], root_id: str | None, include_removed: bool) -> list[TreeItem[R]]:
    """Depth-first listing with an explicit stack: deep trees cannot hit the recursion limit."""
    children: dict[str | None, list[R]] = {}
    for record in rows:
        children.setdefault(record.parent_id, []).append(record)
    roots = [r for r in rows if r.id == root_id] if root_id is not None else children.get(None, [])
    out: list[TreeItem[R]] = []
    seen: set[str] = set()
    stack = [(0, r) for r in reversed(roots)]
    while stack:
        depth, record = stack.pop()
        if record.id in seen:
            continue  # only a damaged (cyclic) table gets here
        seen.add(record.id)
        # A root asked for by id is listed even when removed: it was asked for.
        if record.removed_at is not None and not include_removed and record.id != root_id:
            continue
        out.append(TreeItem(depth, record))
        stack.extend((depth + 1, c) for c in reversed(children.get(record.id, ())))
    return out


class TreesMixin:
    """Workspace tree, agent tree and evidence resolution for `Forest`."""

    _conn: sqlite3.Connection

    if TYPE_CHECKING:

        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _readable(self, session_id: str) -> str | None: ...
        def _now(self) -> str: ...

    # --- workspace tree ----------------------------------------------------------

    def add_repository(self, path: str | os.PathLike[str]) -> str:
        return self._add_workspace(WorkspaceKind.REPOSITORY, None, "parent_id", path, None)

    def add_task_worktree(
        self, repo_id: str, path: str | os.PathLike[str], branch: str | None = None
    ) -> str:
        return self._add_workspace(WorkspaceKind.TASK_WORKTREE, repo_id, "repo_id", path, branch)

    def add_worker_worktree(
        self, task_id: str, path: str | os.PathLike[str], branch: str | None = None
    ) -> str:
        return self._add_workspace(WorkspaceKind.WORKER_WORKTREE, task_id, "task_id", path, branch)

    def _add_workspace(
        self,
        kind: WorkspaceKind,
        parent_id: str | None,
        argument: str,
        path: str | os.PathLike[str],
        branch: str | None,
    ) -> str:
        text = os.fspath(path)
        if not text:
            raise InvalidArgument("path", "a workspace needs a path")
        workspace_id = new_id()
        with self._write() as conn:
            want = PARENT_KIND[kind]
            if want is not None:
                assert parent_id is not None  # every non-root adder passes its parent
                parent = self._workspace(conn, parent_id)
                if parent.kind != want:
                    raise InvalidArgument(
                        argument,
                        f"a {kind} hangs under a {want}; workspace {parent_id} is a {parent.kind}",
                    )
                _require_live("workspace", parent.id, parent.removed_at, argument)
            clash = conn.execute(
                "SELECT id FROM workspaces WHERE path = ? AND removed_at IS NULL", (text,)
            ).fetchone()
            if clash is not None:
                raise InvalidArgument("path", f"{text} is already live workspace {clash[0]}")
            conn.execute(
                f"INSERT INTO workspaces({WORKSPACE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, NULL)",
                (workspace_id, parent_id, str(kind), text, branch, self._now()),
            )
        return workspace_id

    def workspace(self, workspace_id: str) -> Workspace:
        return self._workspace(self._conn, workspace_id)

    def _workspace(self, conn: sqlite3.Connection, workspace_id: str) -> Workspace:
        row = conn.execute(
            f"SELECT {WORKSPACE_COLUMNS} FROM workspaces WHERE id = ?", (workspace_id,)
        ).fetchone()
        if row is None:
            raise UnknownTreeNode("workspace", workspace_id)
        return Workspace(*row)

    def workspace_children(
        self, workspace_id: str, *, include_removed: bool = False
    ) -> list[Workspace]:
        self._workspace(self._conn, workspace_id)
        rows = self._conn.execute(WORKSPACE_CHILDREN, (workspace_id, include_removed))
        return [Workspace(*row) for row in rows]

    def workspace_tree(
        self, root_id: str | None = None, *, include_removed: bool = False
    ) -> list[TreeItem[Workspace]]:
        """The tree below `root_id` (default: every repository), in pre-order."""
        if root_id is not None:
            self._workspace(self._conn, root_id)
        rows = self._conn.execute(WORKSPACE_SUBTREE, {"root": root_id}).fetchall()
        return _preorder([Workspace(*row) for row in rows], root_id, include_removed)

    def remove_workspace(self, workspace_id: str) -> Workspace:
        """Mark a workspace removed (once); refused while it has live children.

        Only the record changes: no file, agent or session entry is touched.
        """
        with self._write() as conn:
            found = self._workspace(conn, workspace_id)
            return replace(found, removed_at=self._mark_removed(conn, "workspaces", found))

    # --- agent tree --------------------------------------------------------------

    def add_orchestrator(self, session_id: str, workspace_id: str | None = None) -> str:
        return self._add_agent(AgentRole.ORCHESTRATOR, None, session_id, None, workspace_id)

    def add_worker(
        self,
        orchestrator_id: str,
        session_id: str,
        policy: dict[str, Any],
        workspace_id: str | None = None,
    ) -> str:
        """Register a worker under an orchestrator, writing to `session_id`, bound by `policy`."""
        if not isinstance(policy, dict) or not policy:
            raise InvalidArgument(
                "policy", "a worker needs a non-empty dict saying what it is authorized to do"
            )
        try:
            # Sorted keys: the same policy is always the same stored text.
            text = encode(policy, option=orjson.OPT_SORT_KEYS).decode()
        except NonFinite as exc:
            raise InvalidArgument("policy", str(exc)) from exc
        except orjson.JSONEncodeError as exc:
            raise InvalidArgument("policy", f"must be a JSON object: {exc}") from exc
        return self._add_agent(AgentRole.WORKER, orchestrator_id, session_id, text, workspace_id)

    def _add_agent(
        self,
        role: AgentRole,
        parent_id: str | None,
        session_id: str,
        policy: str | None,
        workspace_id: str | None,
    ) -> str:
        agent_id = new_id()
        with self._write() as conn:
            if parent_id is not None:
                parent = self._agent(conn, parent_id)
                if parent.role != AgentRole.ORCHESTRATOR:
                    raise InvalidArgument(
                        "orchestrator_id",
                        f"agent {parent_id} is a worker; workers hang under an orchestrator only",
                    )
                _require_live("agent", parent.id, parent.removed_at, "orchestrator_id")
            if not conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise UnknownSession(session_id)
            owner = self.agent_for_session(session_id)  # same connection: inside this transaction
            if owner is not None:
                raise InvalidArgument(
                    "session_id",
                    f"session {session_id} is already written by live agent {owner.id}",
                )
            if workspace_id is not None:
                place = self._workspace(conn, workspace_id)
                _require_live("workspace", place.id, place.removed_at, "workspace_id")
            conn.execute(
                f"INSERT INTO agents({AGENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                (agent_id, parent_id, str(role), session_id, workspace_id, policy, self._now()),
            )
        return agent_id

    def agent(self, agent_id: str) -> Agent:
        return self._agent(self._conn, agent_id)

    def _agent(self, conn: sqlite3.Connection, agent_id: str) -> Agent:
        row = conn.execute(
            f"SELECT {AGENT_COLUMNS} FROM agents WHERE id = ?", (agent_id,)
        ).fetchone()
        if row is None:
            raise UnknownTreeNode("agent", agent_id)
        return _agent(row)

    def agent_children(self, agent_id: str, *, include_removed: bool = False) -> list[Agent]:
        self._agent(self._conn, agent_id)
        rows = self._conn.execute(AGENT_CHILDREN, (agent_id, include_removed))
        return [_agent(row) for row in rows]

    def agent_tree(
        self, root_id: str | None = None, *, include_removed: bool = False
    ) -> list[TreeItem[Agent]]:
        """The tree below `root_id` (default: every orchestrator), in pre-order."""
        if root_id is not None:
            self._agent(self._conn, root_id)
        rows = self._conn.execute(AGENT_SUBTREE, {"root": root_id}).fetchall()
        return _preorder([_agent(row) for row in rows], root_id, include_removed)

    def agent_for_session(self, session_id: str) -> Agent | None:
        """The live agent writing to `session_id`, if any."""
        row = self._conn.execute(
            f"SELECT {AGENT_COLUMNS} FROM agents WHERE session_id = ? AND removed_at IS NULL",
            (session_id,),
        ).fetchone()
        return _agent(row) if row is not None else None

    def remove_agent(self, agent_id: str) -> Agent:
        """Mark an agent removed (once); an orchestrator is refused while it has live workers.

        Only the record changes: its session, entries and head stay as they are.
        """
        with self._write() as conn:
            found = self._agent(conn, agent_id)
            return replace(found, removed_at=self._mark_removed(conn, "agents", found))

    def _mark_removed(self, conn: sqlite3.Connection, table: str, found: Workspace | Agent) -> str:
        """Stamp `found` removed unless it already is; returns its removal time."""
        if found.removed_at is not None:
            return found.removed_at  # removing twice keeps the first time
        live = [r[0] for r in conn.execute(LIVE_CHILDREN[table], (found.id,))]
        if live:
            raise InvalidArgument(
                table[:-1],
                f"{found.id} still has live children {', '.join(live)}; remove them first",
            )
        now = self._now()
        conn.execute(MARK_REMOVED[table], (now, found.id))
        return now

    # --- evidence ----------------------------------------------------------------

    def resolve_evidence(
        self, session_id: str, entry_id: str, for_agent: str | None = None
    ) -> dict[str, Any]:
        """The exact payload of worker.result `entry_id`, if it is evidence right now.

        Checked afresh on every call, never cached: the entry exists, belongs
        to `session_id`, is a worker.result and lies on the session's current
        active branch. With `for_agent`, that agent must be a live worker whose
        orchestrator writes to `session_id`.
        """
        self._readable(session_id)
        row = self._conn.execute(EVIDENCE, {"sid": session_id, "entry": entry_id}).fetchone()
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
            self._check_authority(for_agent, session_id, entry_id)
        if not row[10]:
            raise NotOnActiveBranch(entry_id, session_id)
        payload = entry.payload
        # Fail closed if a stored result no longer meets the worker.result contract.
        validate_payload(entry.kind, payload)
        return payload

    def _check_authority(self, agent_id: str, session_id: str, entry_id: str) -> None:
        row = self._conn.execute(WORKER_AUTHORITY, (agent_id,)).fetchone()
        if row is None:
            raise UnknownTreeNode("agent", agent_id)
        role, removed_at, orchestrator_id, orchestrator_session, orchestrator_removed = row
        if role != AgentRole.WORKER:
            raise InvalidArgument(
                "for_agent",
                f"agent {agent_id} is an orchestrator; evidence is resolved for workers",
            )
        _require_live("agent", agent_id, removed_at, "for_agent")
        _require_live("agent", orchestrator_id, orchestrator_removed, "for_agent")
        if orchestrator_session != session_id:
            # From this worker's side the entry lives in a session that is not
            # its orchestrator's: exactly a foreign entry.
            raise ForeignEntry(entry_id, orchestrator_session, session_id)


def _require_live(tree: str, node_id: str, removed_at: str | None, argument: str) -> None:
    if removed_at is not None:
        raise InvalidArgument(argument, f"{tree} {node_id} was removed at {removed_at}")
