-- Version 6: the state of `harnez serve` (the Unified Harness Protocol): configured harnesses and
-- their skill files, which sessions and responses were made over HTTP, uploaded files, artifact ids,
-- idempotency keys and shares. A response is one Harnez task; its row outlives a deleted session
-- (session NULL) so that continuing from it can say the session is gone.

CREATE TABLE uhp_harnesses (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    base TEXT NOT NULL,
    config TEXT NOT NULL,
    builtin INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);

CREATE TABLE uhp_skill_files (
    harness TEXT NOT NULL REFERENCES uhp_harnesses (id) ON DELETE CASCADE,
    skill TEXT NOT NULL,
    path TEXT NOT NULL,
    content BLOB NOT NULL,
    binary INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (harness, skill, path)
);

CREATE TABLE uhp_sessions (
    session INTEGER PRIMARY KEY REFERENCES sessions (num) ON DELETE CASCADE,
    harness TEXT NOT NULL,
    fixed_workspace INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);

CREATE INDEX uhp_sessions_harness ON uhp_sessions (harness);

CREATE TABLE uhp_responses (
    id TEXT PRIMARY KEY,
    task INTEGER REFERENCES tasks (id) ON DELETE SET NULL,
    session INTEGER REFERENCES sessions (num) ON DELETE SET NULL,
    session_id TEXT NOT NULL,
    harness TEXT NOT NULL,
    previous TEXT,
    model TEXT,
    requested_model TEXT,
    fallback_reason TEXT,
    input TEXT NOT NULL,
    options TEXT NOT NULL,
    metadata TEXT NOT NULL,
    stored INTEGER NOT NULL DEFAULT 1,
    deleted INTEGER NOT NULL DEFAULT 0,
    start_seq INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);

CREATE INDEX uhp_responses_session ON uhp_responses (session, created_at);
CREATE INDEX uhp_responses_task ON uhp_responses (task);

CREATE TABLE uhp_uploads (
    id TEXT PRIMARY KEY,
    filename TEXT NOT NULL,
    media_type TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    content BLOB NOT NULL,
    created_at REAL NOT NULL
);

CREATE TABLE uhp_artifacts (
    id TEXT PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions (num) ON DELETE CASCADE,
    path TEXT NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (session, path)
);

CREATE TABLE uhp_idempotency (
    key TEXT PRIMARY KEY,
    response TEXT NOT NULL,
    created_at REAL NOT NULL
);

CREATE TABLE uhp_shares (
    id TEXT PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions (num) ON DELETE CASCADE,
    created_at REAL NOT NULL,
    revoked_at REAL
);

CREATE INDEX uhp_shares_session ON uhp_shares (session);
