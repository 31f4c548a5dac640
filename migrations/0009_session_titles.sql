-- Version 9: an index the picker's title filter can use (docs/storage.md, "Title filter").
--
-- `session_titles` holds the trigrams of every session's title (rowid = the session's num): the
-- filter asks it which titles may contain the text typed and checks only those rows with LIKE, instead
-- of reading every session of the workspace when few match. It is contentless and keeps no positions
-- (the rows it names are checked against the title anyway); triggers keep it in step with every
-- write of a title, telling it the old text, which a contentless index needs to forget a document.
-- Each title is indexed with two U+001F marks after it, so that every one or two characters of a title
-- begin one of its trigrams: a filter that short asks `session_title_trigrams` (the index's terms)
-- for the trigrams that begin with it.

CREATE VIRTUAL TABLE session_titles USING fts5 (
    title,
    content = '',
    detail = 'none',
    columnsize = 0,
    tokenize = 'trigram'
);

INSERT INTO session_titles (rowid, title)
    SELECT num, title || char(31, 31) FROM sessions WHERE title IS NOT NULL;

CREATE VIRTUAL TABLE session_title_trigrams USING fts5vocab (session_titles, row);

CREATE TRIGGER session_titles_added AFTER INSERT ON sessions WHEN new.title IS NOT NULL BEGIN
    INSERT INTO session_titles (rowid, title) VALUES (new.num, new.title || char(31, 31));
END;

CREATE TRIGGER session_titles_changed AFTER UPDATE OF title ON sessions BEGIN
    INSERT INTO session_titles (session_titles, rowid, title)
        SELECT 'delete', old.num, old.title || char(31, 31) WHERE old.title IS NOT NULL;
    INSERT INTO session_titles (rowid, title) SELECT new.num, new.title || char(31, 31) WHERE new.title IS NOT NULL;
END;

CREATE TRIGGER session_titles_removed AFTER DELETE ON sessions WHEN old.title IS NOT NULL BEGIN
    INSERT INTO session_titles (session_titles, rowid, title) VALUES ('delete', old.num, old.title || char(31, 31));
END;
