-- Version 13: `harnez serve` serves several principals (bearer tokens, each with a name), and every
-- object one makes belongs to it: harnesses (the built-in one is everyone's), HTTP sessions,
-- responses, uploads and idempotency keys carry the owner's name, never its token. A session's
-- artifacts and shares belong to the session's owner. Rows made before this version belong to
-- `default`, the principal of `--token-env` (and of a server without a token). Two principals may use
-- the same Idempotency-Key, so a key is unique per owner.

ALTER TABLE uhp_harnesses ADD COLUMN owner TEXT NOT NULL DEFAULT 'default';

ALTER TABLE uhp_sessions ADD COLUMN owner TEXT NOT NULL DEFAULT 'default';

ALTER TABLE uhp_responses ADD COLUMN owner TEXT NOT NULL DEFAULT 'default';

ALTER TABLE uhp_uploads ADD COLUMN owner TEXT NOT NULL DEFAULT 'default';

CREATE INDEX uhp_sessions_owner ON uhp_sessions (owner, harness);

CREATE TABLE uhp_idempotency_owned (
    owner TEXT NOT NULL DEFAULT 'default',
    key TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (owner, key)
);

INSERT INTO uhp_idempotency_owned (owner, key, response, created_at)
    SELECT 'default', key, response, created_at FROM uhp_idempotency;

DROP TABLE uhp_idempotency;

ALTER TABLE uhp_idempotency_owned RENAME TO uhp_idempotency;
