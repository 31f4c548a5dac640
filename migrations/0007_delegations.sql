-- Version 7: sub-agents. A delegation runs as a child session; `delegations` links it to the session,
-- task and tool call that delegated it, the agent and the tools it may use, and, once it ended, how
-- (`stop`), the parent's `delegate-finished` event (`seq`) and the child's usage and cost, which the
-- parent's totals include. Listings leave child sessions out; deleting a session deletes its children.

CREATE TABLE delegations (
    child INTEGER PRIMARY KEY REFERENCES sessions (num) ON DELETE CASCADE,
    parent INTEGER NOT NULL,
    task INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    tools TEXT NOT NULL,
    created_at REAL NOT NULL,
    stop TEXT,
    seq INTEGER,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL,
    calls INTEGER NOT NULL DEFAULT 0,
    reported INTEGER NOT NULL DEFAULT 0,
    unpriced INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX delegations_parent ON delegations (parent, child);

CREATE TRIGGER delegations_parent_deleted AFTER DELETE ON sessions BEGIN
    DELETE FROM sessions WHERE num IN (SELECT child FROM delegations WHERE parent = old.num);
END;
