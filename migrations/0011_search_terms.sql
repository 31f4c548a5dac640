-- Version 11: the full-text index's terms, for a last word longer than its prefix indexes
-- (docs/storage.md, "Full-text search").
--
-- The picker matches the last word typed as a prefix. `search_fts` indexes prefixes of one to three
-- characters; for a longer one FTS5 merges the whole doclist of every term that begins with it before
-- it returns a row (about 40 ms for a word in 200,000 documents), however few rows the page wants.
-- `search_terms` lists the index's terms: the search asks it which terms begin with the word and
-- matches those terms by name, which FTS5 reads lazily, newest first. It is a view of the index:
-- nothing is stored and nothing has to be kept in step.

CREATE VIRTUAL TABLE search_terms USING fts5vocab (search_fts, row);
