"""The picker's title filter: sessions whose title or workspace contains the text typed, or whose id starts with it.

The filter is `LIKE` over the session rows, newest first. When many rows match, that walk stops
after the first page's worth; when few do, it would read every session of the scope. So the
`session_titles` trigram index (migration 0009) first names the titles that may hold the text (for
one or two characters, through the trigrams that begin with them), and only those rows are read,
checked with the same `LIKE` and sorted.
A database from before version 9 (another project's, read without migrating it) has no index and
is filtered by the walk alone: the results are the same either way.
"""

from __future__ import annotations

from typing import Any

from harnez.store.lookups import Reads, has_table, terms_beginning

CANDIDATES_MAX = 2000
"""Titles the index may name before the filter walks newest first instead: with that many possible
matches, a page's worth comes soon in the walk, and sorting them all would cost more."""

TRIGRAMS_MAX = 8
"""Three-character pieces of the text asked of the index at most, spread over it: enough to narrow."""

TERMS_MAX = 64
"""Trigrams a one- or two-character text may begin before the filter walks newest first instead."""

_HEX = frozenset("0123456789abcdef")
_EVERY_WORKSPACE = (
    "WITH RECURSIVE spaces(w) AS (SELECT min(workspace) FROM sessions UNION ALL "
    "SELECT (SELECT min(workspace) FROM sessions WHERE workspace > w) FROM spaces WHERE w IS NOT NULL)"
)
"""The distinct workspaces, one index lookup each (not a walk over every session)."""


def escaped(text: str) -> str:
    """`text` for a LIKE pattern with ESCAPE '\\': its `%`, `_` and `\\` match themselves."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def trigram_query(text: str) -> str | None:
    """An FTS5 query for the titles holding every three-character piece of `text` (up to TRIGRAMS_MAX
    of them); None below three characters, which a trigram cannot hold."""
    pieces = list(dict.fromkeys(text[i : i + 3] for i in range(len(text) - 2)))
    if not pieces:
        return None
    if len(pieces) > TRIGRAMS_MAX:
        step = (len(pieces) - 1) / (TRIGRAMS_MAX - 1)
        pieces = [pieces[round(i * step)] for i in range(TRIGRAMS_MAX)]
    return " AND ".join(_quoted(piece) for piece in pieces)


def _quoted(term: str) -> str:
    """A term as an FTS5 string (the trigram tokenizer makes it one token)."""
    return '"' + term.replace('"', '""') + '"'


class TitleFilter:
    """The SQL condition of the title filter over one database, narrowed by its trigram index when
    that pays."""

    def __init__(self, db: Reads) -> None:
        self._db = db
        self._indexed: bool | None = None

    async def condition(self, text: str, workspace: str | None) -> tuple[str, list[Any]]:
        """The WHERE condition (and its parameters) of the sessions of `workspace` (None: every one)
        whose title or workspace contains `text` (ASCII letters in any case) or whose id starts with it."""
        like = "%" + escaped(text) + "%"
        matches = "(title LIKE ? ESCAPE '\\' OR workspace LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\')"
        params: list[Any] = [like, like, escaped(text.lower()) + "%"]
        narrowed = await self._narrowed(text, workspace, like)
        if narrowed is not None:
            # `+workspace`: the planner must start from the few rows named, not walk the workspace's index.
            scope = "+workspace = ? AND " if workspace is not None else ""
            return f"{narrowed[0]} AND {scope}{matches}", [*narrowed[1], *_given(workspace), *params]
        scope = "workspace = ? AND " if workspace is not None else ""
        return f"{scope}{matches}", [*_given(workspace), *params]

    async def _narrowed(self, text: str, workspace: str | None, like: str) -> tuple[str, list[Any]] | None:
        """`num IN (…)` of the only sessions that may match, or None when walking newest first is as
        good: no index, a text the index cannot look up, a workspace in scope that contains the text
        (its every session matches), or more than CANDIDATES_MAX titles that may hold it."""
        if not await self._has_index():
            return None
        query = await self._index_query(text)
        if query is None:
            return None
        spaces = "WITH spaces(w) AS (VALUES (?))" if workspace is not None else _EVERY_WORKSPACE
        titles = "SELECT count(*) FROM (SELECT 1 FROM session_titles WHERE session_titles MATCH ? LIMIT ?)"
        row = await self._db.fetchone(
            f"{spaces} SELECT ({titles if query else 'SELECT 0'}), "
            "EXISTS (SELECT 1 FROM spaces WHERE w LIKE ? ESCAPE '\\')",
            [*_given(workspace), *([query, CANDIDATES_MAX + 1] if query else []), like],
        )
        if row is None or row[0] > CANDIDATES_MAX or row[1]:
            return None
        named, params = ["SELECT rowid FROM session_titles WHERE session_titles MATCH ?"], [query]
        prefix = text.lower()
        if set(prefix) <= _HEX:  # ids are lowercase hex: these are every one starting with the prefix
            named.append("SELECT num FROM sessions WHERE id >= ? AND id < ?")
            params += [prefix, prefix + "g"]
        if not query:  # no title holds it
            named, params = named[1:], params[1:]
        return (f"num IN ({' UNION ALL '.join(named)})", params) if named else ("0", [])

    async def _index_query(self, text: str) -> str | None:
        """The FTS5 query of the titles that may hold `text`; "" when none does; None when the index
        cannot say (one or two letters beyond ASCII, whose case the index folds as SQLite's LIKE does
        not, or so short a text that it begins more than TERMS_MAX trigrams)."""
        if len(text) >= 3:
            return trigram_query(text)
        if not text.isascii():
            return None
        start = text.lower()  # as the index folds ASCII letters
        terms = await terms_beginning(self._db, "session_title_trigrams", start, TERMS_MAX)
        return None if terms is None else " OR ".join(_quoted(term) for term in terms)

    async def _has_index(self) -> bool:
        """Whether the database has the trigram index of titles (version 9 on)."""
        if self._indexed is None:
            self._indexed = await has_table(self._db, "session_titles")
        return self._indexed


def _given(workspace: str | None) -> list[str]:
    """The workspace as a parameter list (empty for every workspace)."""
    return [] if workspace is None else [workspace]
