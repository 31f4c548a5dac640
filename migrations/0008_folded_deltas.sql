-- Version 8: conversation text on disk once (docs/storage.md, "Footprint").
--
-- * A task's prompt lives in its user-message event: `tasks.input` is emptied and `input_seq` points
--   at that event (a queued task, with no event yet, keeps its input).
-- * The full-text index becomes contentless and keeps no positions nor sizes: `search_fts` holds only which
--   documents hold each word; `search_docs` says what each document indexes and keeps its text only
--   when no event or session row says the same (`text` NULL otherwise). The store adds and removes
--   documents itself (the triggers go: a contentless index forgets a document only by its text).
-- * After these statements, the same transaction folds every run of streamed deltas into one row and
--   points each answer's document at its folded text (harnez/store/upgrades.py).

ALTER TABLE tasks ADD COLUMN input_seq INTEGER;

DROP TRIGGER search_docs_added;
DROP TRIGGER search_docs_removed;
DROP TABLE search_fts;

CREATE TABLE search_docs_v7 (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions (num) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    seq INTEGER,
    text TEXT
);

INSERT INTO search_docs_v7 (id, session, kind, seq, text) SELECT id, session, kind, seq, text FROM search_docs;
DROP TABLE search_docs;
ALTER TABLE search_docs_v7 RENAME TO search_docs;
CREATE INDEX search_docs_session ON search_docs (session, kind);

CREATE VIRTUAL TABLE search_fts USING fts5 (
    text,
    content = '',
    detail = 'none',
    columnsize = 0,
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '1 2 3'
);

INSERT INTO search_fts (rowid, text) SELECT id, text FROM search_docs;
