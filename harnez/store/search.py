"""Full-text search over titles, workspaces and message text, newest match first, by cursor."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from harnez.store.db import Database
from harnez.store.documents import texts_where
from harnez.store.lookups import has_table, terms_beginning
from harnez.store.sessions import ChildFilter, decode_cursor, encode_cursor

SNIPPET_WORDS = 16
"""Words shown around a match in a listing."""

SCAN_LIMIT = 2000
"""Matching documents examined per page at most; the cursor continues from there."""

PREFIXES_INDEXED = 3
"""The longest prefix `search_fts` indexes (`prefix = '1 2 3'`): FTS5 answers a longer one by merging
the doclists of every term that begins with it, whole, before the first row."""

COMPLETIONS_MAX = 64
"""Terms a longer last word may begin before the search leaves the prefix to FTS5 after all."""

_WORD = re.compile(r"[^\W_]+")
"""A word as the index's tokenizer (unicode61) sees one: letters and digits; `_` separates, as
punctuation does. Each quoted word must be one token: the index keeps no positions to match phrases."""


def fts_query(text: str, completions: list[str] | None = None) -> str | None:
    """Turn what a person typed into an FTS5 query: every word must match, the last as a prefix (or, given
    `completions`, the index's terms that begin with it, as any one of them)."""
    words = _WORD.findall(text)
    if not words:
        return None
    quoted = [_quoted(w) for w in words]
    if completions is None:
        quoted[-1] += "*"
    else:
        quoted[-1] = "(" + " OR ".join(_quoted(term) for term in completions) + ")"
    return " AND ".join(quoted)


def _quoted(term: str) -> str:
    """A term as an FTS5 string."""
    return '"' + term.replace('"', '""') + '"'


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One session that matches, with the snippet of its newest matching text."""

    session_num: int
    snippet: str
    kind: str


@dataclass(frozen=True, slots=True)
class SearchPage:
    """Hits of one page; `next_cursor` None means there is no next page."""

    hits: list[SearchHit]
    next_cursor: str | None


Scope = tuple[str, list[Any]]
"""A condition on the matches (and its parameters) that keeps those of one workspace."""

SMALL_WORKSPACE = 2000
"""Sessions a workspace holds at most for a search in it to gather its documents' ids first."""


def workspace_scope(workspace: str, sessions: int) -> Scope:
    """The condition keeping the matches of a workspace of `sessions` sessions.

    Either way the matches are walked newest first and the workspace's sessions gathered once. In a
    workspace of many sessions, a page's matches come soon: each is joined to its document and its
    session checked against that list. In one of few, the walk reads most matches of a common word
    before it has a page's worth, so its documents' ids are gathered once too, and each match is checked
    against them by id, before any join (`+`: not offered to FTS5 as a rowid constraint, which it
    would answer one id at a time): half the time for `that` in a workspace of 770 sessions out of
    50,000, a few milliseconds more for a rare word.
    """
    if sessions > SMALL_WORKSPACE:
        return "d.session IN (SELECT num FROM sessions WHERE workspace = ?)", [workspace]
    gathered = "SELECT id FROM search_docs WHERE session IN (SELECT num FROM sessions WHERE workspace = ?)"
    return f"+search_fts.rowid IN ({gathered})", [workspace]


def _matches(
    query: str, scope: Scope | None, before: int | None, scan: int, hidden: str | None = None
) -> tuple[str, list[Any]]:
    """The SQL (and its parameters) of up to `scan` matching documents, newest first, before a cursor,
    within a workspace's `scope` (`hidden`: the condition that leaves child sessions out)."""
    sql = "SELECT d.id, d.session, d.kind FROM search_fts JOIN search_docs d ON d.id = search_fts.rowid"
    where: list[str] = ["search_fts MATCH ?", *([hidden] if hidden else [])]
    params: list[Any] = [query]
    if before is not None:
        where.append("search_fts.rowid < ?")
        params.append(before)
    if scope is not None:
        where.append(scope[0])
        params += scope[1]
    sql += " WHERE " + " AND ".join(where) + " ORDER BY search_fts.rowid DESC LIMIT ?"
    return sql, [*params, scan]


class FullTextSearch:
    """Unranked (newest first) FTS5 matching: cheap for common and rare terms alike."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._children = ChildFilter(db)
        self._terms_listed: bool | None = None

    async def search(
        self,
        text: str,
        workspace: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
        scan: int = SCAN_LIMIT,
    ) -> SearchPage:
        """Distinct sessions with matching text, newest matching document first.

        A session can appear again on a later page when it has older matching documents; clients
        merge pages by session id. At most `scan` matching documents are read (the cursor goes on
        from there): a listing that wants a few sessions from each of many databases asks less.
        """
        words = _WORD.findall(text)
        completions = await self._completions(words[-1]) if words else None
        query = fts_query(text, completions)
        if query is None or completions == []:
            return SearchPage([], None)
        before = decode_cursor(cursor)[0] if cursor else None
        hidden = await self._children.clause("d.session")
        scope = await self._scope(workspace) if workspace is not None else None
        rows = await self._db.fetchall(*_matches(query, scope, before, scan, hidden))
        chosen: dict[int, tuple[int, str]] = {}
        last_doc = None
        for doc_id, session, kind in rows:
            last_doc = doc_id
            if session not in chosen:
                chosen[session] = (doc_id, kind)
                if len(chosen) == limit:
                    break
        snippets = await self._snippets(words, [doc for doc, _ in chosen.values()])
        hits = {s: SearchHit(s, snippets.get(doc, ""), kind) for s, (doc, kind) in chosen.items()}
        exhausted = len(rows) < scan and (last_doc is None or last_doc == rows[-1][0])
        next_cursor = None if exhausted else encode_cursor(last_doc)
        return SearchPage(list(hits.values()), next_cursor)

    async def _scope(self, workspace: str) -> Scope:
        """The condition keeping the matches of `workspace`, for its number of sessions (counted up to
        SMALL_WORKSPACE + 1)."""
        row = await self._db.fetchone(
            "SELECT count(*) FROM (SELECT 1 FROM sessions WHERE workspace = ? LIMIT ?)",
            [workspace, SMALL_WORKSPACE + 1],
        )
        return workspace_scope(workspace, row[0] if row else 0)

    async def _completions(self, word: str) -> list[str] | None:
        """The index's terms that begin with `word`, when naming them is how to match it as a prefix: a
        word longer than the prefixes indexed, in ASCII (folded as the index folds it), on a database
        listing its terms (version 11 on), begun by at most COMPLETIONS_MAX terms; else None, and FTS5
        merges the prefix itself."""
        if len(word) <= PREFIXES_INDEXED or not word.isascii() or not await self._lists_terms():
            return None
        return await terms_beginning(self._db, "search_terms", word.lower(), COMPLETIONS_MAX)

    async def _lists_terms(self) -> bool:
        """Whether the database has `search_terms` (another project's may be older, read unmigrated)."""
        if self._terms_listed is None:
            self._terms_listed = await has_table(self._db, "search_terms")
        return self._terms_listed

    async def _snippets(self, words: list[str], doc_ids: list[int]) -> dict[int, str]:
        """Snippets of the chosen documents, cut in Python from their text (read, in one statement, from
        where it is kept: the session row, the event, or the document when no row holds it).

        FTS5's snippet() re-runs the match per document (about 2 ms each for a common term on a
        million documents), and the index keeps no text to cut from: reading ≤ 50 texts by key and
        marking words here costs about a millisecond.
        """
        if not doc_ids:
            return {}
        marks = ",".join("?" * len(doc_ids))
        texts = await texts_where(self._db.fetchall, f"d.id IN ({marks})", doc_ids)
        return {doc: make_snippet(text, words) for doc, text in texts.items()}


def make_snippet(text: str, words: list[str], width: int = SNIPPET_WORDS) -> str:
    """About `width` words around the first match, matches in [brackets], … where text was cut."""
    tokens = text.split()
    wanted = [w.casefold() for w in words]

    def matches(token: str) -> bool:
        bare = "".join(_WORD.findall(token)).casefold()
        return any(bare.startswith(w) if i == len(wanted) - 1 else w in bare for i, w in enumerate(wanted))

    first = next((i for i, token in enumerate(tokens) if matches(token)), 0)
    start = max(0, min(first - width // 3, len(tokens) - width))
    shown = [f"[{t}]" if matches(t) else t for t in tokens[start : start + width]]
    return ("…" if start > 0 else "") + " ".join(shown) + ("…" if start + width < len(tokens) else "")
