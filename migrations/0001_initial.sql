-- Harnez schema, version 1: sessions, events, tasks, model selections, context records,
-- ledgers of model calls and tool executions, and a full-text index over titles and messages.

CREATE TABLE sessions (
    num INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    workspace TEXT NOT NULL,
    title TEXT,
    title_source TEXT,
    naming_used INTEGER NOT NULL DEFAULT 0,
    model TEXT,
    status TEXT NOT NULL DEFAULT 'idle',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);

CREATE INDEX sessions_recent ON sessions (updated_at DESC, num DESC);
CREATE INDEX sessions_workspace_recent ON sessions (workspace, updated_at DESC, num DESC);

CREATE TABLE tasks (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions (num) ON DELETE CASCADE,
    state TEXT NOT NULL CHECK (state IN
        ('queued', 'running', 'completed', 'failed', 'cancelled', 'interrupted', 'incomplete')),
    input TEXT NOT NULL,
    model TEXT,
    stop_reason TEXT,
    error TEXT,
    runner_pid INTEGER,
    created_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL
);

CREATE INDEX tasks_session ON tasks (session, id);
CREATE INDEX tasks_running ON tasks (state) WHERE state IN ('queued', 'running');

-- A rowid table (not WITHOUT ROWID): large payloads such as tool output stay mostly on their own
-- page instead of spilling to overflow chains early; (session, seq) is unique and indexed.
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions (num) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    task INTEGER,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    time REAL NOT NULL,
    UNIQUE (session, seq)
);

CREATE TABLE model_selections (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions (num) ON DELETE CASCADE,
    model TEXT NOT NULL,
    thinking TEXT,
    selected_at REAL NOT NULL
);

CREATE INDEX model_selections_session ON model_selections (session, id);

CREATE TABLE context_records (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions (num) ON DELETE CASCADE,
    task INTEGER,
    role TEXT NOT NULL,
    wire TEXT,
    body BLOB NOT NULL,
    created_at REAL NOT NULL
);

CREATE INDEX context_records_session ON context_records (session, id);

CREATE TABLE model_calls (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions (num) ON DELETE CASCADE,
    task INTEGER,
    provider TEXT,
    wire TEXT,
    model_requested TEXT NOT NULL,
    model_served TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cache_read_tokens INTEGER,
    cache_write_tokens INTEGER,
    reasoning_tokens INTEGER,
    cost_usd REAL,
    latency_ms REAL,
    first_token_ms REAL,
    attempts INTEGER NOT NULL DEFAULT 1,
    outcome TEXT NOT NULL,
    error TEXT,
    created_at REAL NOT NULL
);

CREATE INDEX model_calls_session ON model_calls (session, id);

CREATE TABLE tool_executions (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions (num) ON DELETE CASCADE,
    task INTEGER,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    result TEXT,
    is_error INTEGER NOT NULL DEFAULT 0,
    approval TEXT,
    duration_ms REAL,
    outcome TEXT NOT NULL,
    created_at REAL NOT NULL
);

CREATE INDEX tool_executions_session ON tool_executions (session, id);

CREATE TABLE search_docs (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions (num) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    seq INTEGER,
    text TEXT NOT NULL
);

CREATE INDEX search_docs_session ON search_docs (session, kind);

CREATE VIRTUAL TABLE search_fts USING fts5 (
    text,
    content = 'search_docs',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '1 2 3'
);

CREATE TRIGGER search_docs_added AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_fts (rowid, text) VALUES (new.id, new.text);
END;

CREATE TRIGGER search_docs_removed AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_fts (search_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
