-- Version 12: when each imported Codex session entered review mode (docs/importers.md, "Links between
-- sessions"). A review sub-agent's rollout does not name the session that ran it; its parent is the
-- session of the same folder that entered review mode when it started, found after every import
-- whichever of the two came first. `imported_sessions_parent` finds a session's imported children.

CREATE TABLE imported_reviews (
    session INTEGER NOT NULL REFERENCES sessions (num) ON DELETE CASCADE,
    started_at REAL NOT NULL
);

CREATE INDEX imported_reviews_started ON imported_reviews (started_at);

CREATE INDEX imported_sessions_parent ON imported_sessions (harness, parent_original_id);
