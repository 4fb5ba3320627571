-- 0008 workspace_and_agent_trees (released; never edited).
--
-- Two trees kept apart from the conversation tree and from each other: no
-- foreign key, trigger or cascade links them, so an operation on one never
-- implies one on another. Records are marked removed, never deleted; the
-- parent-kind rules need the parent's row and are checked in trees.py.
-- One directory is one live workspace (removing it frees the path); a
-- conversation is written by at most one live agent (agent_for_session).

CREATE TABLE workspaces (
            id TEXT PRIMARY KEY,
            parent_id TEXT,
            kind TEXT NOT NULL
                CHECK (kind IN ('repository', 'task_worktree', 'worker_worktree')),
            path TEXT NOT NULL,
            branch TEXT,
            created_at TEXT NOT NULL,
            removed_at TEXT,
            CHECK ((kind = 'repository') = (parent_id IS NULL))
        );

CREATE INDEX workspaces_parent ON workspaces(parent_id);

CREATE UNIQUE INDEX workspaces_live_path ON workspaces(path) WHERE removed_at IS NULL;

CREATE TABLE agents (
            id TEXT PRIMARY KEY,
            parent_id TEXT,
            role TEXT NOT NULL CHECK (role IN ('orchestrator', 'worker')),
            session_id TEXT NOT NULL,
            workspace_id TEXT,
            policy TEXT,
            created_at TEXT NOT NULL,
            removed_at TEXT,
            CHECK ((role = 'orchestrator') = (parent_id IS NULL)),
            CHECK ((role = 'worker') = (policy IS NOT NULL))
        );

CREATE INDEX agents_parent ON agents(parent_id);

CREATE UNIQUE INDEX agents_live_session ON agents(session_id) WHERE removed_at IS NULL;
