-- Version 5: sessions imported from another harness (Claude Code, Codex, OpenCode, pi) keep their
-- origin: `sessions.origin` names the harness (NULL for Harnez's own sessions), `imported_sessions`
-- holds where each came from and what was imported, so importing again updates instead of duplicating.

ALTER TABLE sessions ADD COLUMN origin TEXT;

CREATE TABLE imported_sessions (
    session INTEGER PRIMARY KEY REFERENCES sessions (num) ON DELETE CASCADE,
    harness TEXT NOT NULL,
    original_id TEXT NOT NULL,
    agent_id TEXT NOT NULL DEFAULT '',
    parent_original_id TEXT,
    source TEXT NOT NULL,
    source_key TEXT NOT NULL DEFAULT '',
    fingerprint TEXT NOT NULL,
    imported_events INTEGER NOT NULL,
    imported_at REAL NOT NULL,
    UNIQUE (harness, original_id, agent_id)
);

CREATE INDEX imported_sessions_source ON imported_sessions (harness, source, source_key);
