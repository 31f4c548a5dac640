"""Session listings: one page of a database's sessions, newest first or matching a search.

`list_page` is the listing every reader shares: the server over its own store (`Server.list_sessions`),
listings across projects over other databases, and `EarlyListing` — a project's database read
read-only before its server has opened, so the resume picker shows its first page without waiting
for the server's imports and start-up (nothing is created, migrated or written through it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from harnez.errors import HarnezError
from harnez.store.migrate import load_migrations, schema_version
from harnez.store.readonly import ReadOnlyDatabase
from harnez.store.search import SCAN_LIMIT, FullTextSearch
from harnez.store.sessions import SessionPage, SessionRecord, SessionTable
from harnez.text import valid_text

ID_MATCHES = 5
"""Sessions whose id starts with a full-text query, listed first on its first page (ids are not in the
full-text index)."""
_ID_PREFIX = re.compile(r"[0-9a-f]{4,32}")
RELOAD_CHUNK = 500
"""Sessions re-read per query (SQLite bounds the parameters of one statement)."""
EARLY_BUDGET = 5.0
"""Seconds one read of an early listing may take (this project's database, read while the server opens)."""


async def list_page(
    sessions: SessionTable,
    search: FullTextSearch,
    query: str | None = None,
    workspace: Path | None = None,
    cursor: str | None = None,
    limit: int = 50,
    *,
    full_text: bool = True,
    scan: int = SCAN_LIMIT,
) -> SessionPage:
    """Newest first. With a query: matches in conversation text, titles and workspaces (at most `scan`
    matching documents read for the page), each session with the snippet of its newest match, and on
    the first page the sessions whose id starts with it; with `full_text` False, sessions whose
    title or workspace contains the query or whose id starts with it (no snippets)."""
    ws = str(Path(workspace).resolve()) if workspace is not None else None
    query = valid_text(query).strip() if query else ""
    if not query:
        return await sessions.page(ws, cursor, limit)
    if not full_text:
        return await sessions.page(ws, cursor, limit, title_filter=query)
    found = await search.search(query, ws, cursor, limit, scan=scan)
    records = await sessions.by_nums([hit.session_num for hit in found.hits])
    hits = [hit for hit in found.hits if hit.session_num in records]
    listed = [records[hit.session_num] for hit in hits]
    if cursor is None and _ID_PREFIX.fullmatch(query.lower()):
        by_id = await sessions.page(ws, None, ID_MATCHES, title_filter=query)
        pinned = [record for record in by_id.sessions if record.id.startswith(query.lower())]
        listed = pinned + [record for record in listed if record not in pinned]
    snippets = {records[hit.session_num].id: hit.snippet for hit in hits}
    return SessionPage(listed, found.next_cursor, snippets)


async def reload_records(
    sessions: SessionTable, records: Iterable[SessionRecord]
) -> dict[str, SessionRecord]:
    """The current rows of sessions already listed, by id; deleted ones are absent."""
    nums = [record.num for record in records]
    fresh: dict[str, SessionRecord] = {}
    for start in range(0, len(nums), RELOAD_CHUNK):
        found = await sessions.by_nums(nums[start : start + RELOAD_CHUNK])
        fresh.update((record.id, record) for record in found.values())
    return fresh


class SessionListing:
    """The listing calls a front end makes (`list_sessions`, `reload_sessions`), over the session and
    search tables a subclass names: the server's own store, or an `EarlyListing`'s read-only copy."""

    def _listed_tables(self) -> tuple[SessionTable, FullTextSearch]:
        raise NotImplementedError

    async def list_sessions(
        self,
        query: str | None = None,
        workspace: Path | None = None,
        cursor: str | None = None,
        limit: int = 50,
        full_text: bool = True,
    ) -> SessionPage:
        """Newest first. With a query: matches in titles, workspaces, ids and conversation text (or,
        with `full_text` False, in titles, workspaces and ids only: `list_page`)."""
        sessions, search = self._listed_tables()
        return await list_page(sessions, search, query, workspace, cursor, limit, full_text=full_text)

    async def reload_sessions(self, records: Iterable[SessionRecord]) -> dict[str, SessionRecord]:
        """The current metadata of sessions already listed, by id; deleted ones are absent.

        Lets a picker refresh its rows (titles, status, activity changed by any process).
        """
        return await reload_records(self._listed_tables()[0], records)


class EarlyListing(SessionListing):
    """The listing calls of `Server` over a read-only connection to a project's database, for the
    moments before its server is open."""

    def __init__(self, database: Path, budget: float = EARLY_BUDGET) -> None:
        self._reader = ReadOnlyDatabase(database, budget)

    @classmethod
    def of(cls, database: Path) -> EarlyListing | None:
        """An early listing of `database` when it can be read as it is: it exists and has this version's
        schema (an older one is migrated, a newer one refused, by the server alone); else None."""
        try:
            if not database.is_file() or schema_version(database) != len(load_migrations()):
                return None
        except HarnezError:
            return None  # not a database this version can read: the server says why
        return cls(database)

    @property
    def database(self) -> Path:
        """The database file read."""
        return self._reader.path

    def _listed_tables(self) -> tuple[SessionTable, FullTextSearch]:
        return self._reader.sessions, self._reader.search

    def close(self) -> None:
        """Close the read-only connection."""
        self._reader.close()
