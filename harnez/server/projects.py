"""Sessions of every project: this process's database and every other one in the index, newest first.

The all-projects listing (`harnez sessions --all`, the picker's Ctrl+T scope) merges one listing per
database. This process's own database is read through its `Server`; every other database in the
index is read lazily (only when this listing is asked for), read-only, each read bounded in time
(`harnez.store.readonly`). A database that moved or vanished is dropped from the index quietly; one
that cannot be read now (too slow, damaged, not Harnez's) is skipped for this page and named in
`ProjectsPage.skipped`. Listings of the current workspace never come here, so the index costs them
nothing.

Pages merge the databases' own pages by last activity. Each database is read a small page at a time
(about its share of the page asked for, at least `MIN_READ`; another when its rows run out), so a
page costs about one page of rows and snippets whatever the number of projects. A cursor holds, per
database, where its buffered page started, its size and how many of its rows were already shown:
nothing is shown twice or lost between pages, whatever the interleaving.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harnez import paths
from harnez.errors import SessionNotFoundError, StoreError
from harnez.server.listing import list_page, reload_records
from harnez.store.index import DatabaseIndex, project_of
from harnez.store.readonly import READ_BUDGET, DatabaseGone, ReadOnlyDatabase
from harnez.store.sessions import SessionPage, SessionRecord, decode_cursor, encode_cursor
from harnez.text import valid_text

if TYPE_CHECKING:
    from harnez.server.server import Server

__all__ = ["AllProjects", "ProjectsPage", "project_of", "remember_database"]

MIN_READ = 10
"""The fewest rows read from one database at a time."""
SCAN_PER_ROW = 20
"""Matching documents a full-text read of another database examines per session it asks for."""


def remember_database(database: Path, env: Mapping[str, str] | None = None) -> str | None:
    """Add a database to the index of every database this user opened (front ends call it when they
    open a project's database); a notice for the person when the index cannot be written, else None."""
    try:
        DatabaseIndex(paths.database_index_path(env)).remember(Path(database).resolve())
    except StoreError as exc:
        return f"{exc.message} Listings across projects will miss this one."
    return None


@dataclass(frozen=True, slots=True)
class ProjectsPage:
    """One page across projects; `next_cursor` is None when every database is exhausted."""

    sessions: list[SessionRecord]
    next_cursor: str | None
    snippets: dict[str, str]
    databases: dict[str, Path]
    """Each listed session's database (its project is `project_of(database)`)."""
    skipped: list[str] = field(default_factory=list)
    """Why a database could not be read for this page (one sentence each)."""


class _Source:
    """One database's listing, by its own cursors."""

    def __init__(self, database: Path, server: Server | None = None, budget: float = READ_BUDGET) -> None:
        self.database = database
        self.server = server
        self.reader = None if server is not None else ReadOnlyDatabase(database, budget)

    async def page(self, query: str | None, cursor: str | None, limit: int, full_text: bool) -> SessionPage:
        if self.server is not None:
            return await self.server.list_sessions(query, None, cursor, limit, full_text)
        assert self.reader is not None
        reader = self.reader
        return await list_page(
            reader.sessions,
            reader.search,
            query,
            None,
            cursor,
            limit,
            full_text=full_text,
            scan=limit * SCAN_PER_ROW,
        )

    async def current(self, records: list[SessionRecord]) -> dict[str, SessionRecord]:
        """The current rows of these sessions, by id (deleted ones absent)."""
        if self.server is not None:
            return await self.server.reload_sessions(records)
        assert self.reader is not None
        return await reload_records(self.reader.sessions, records)

    async def find(self, id_or_prefix: str) -> SessionRecord:
        if self.server is not None:
            return await self.server.get_session(id_or_prefix)
        assert self.reader is not None
        return await self.reader.sessions.find(id_or_prefix)

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()


@dataclass(slots=True)
class _Buffer:
    """A database's rows fetched for the page being built."""

    source: _Source
    start: str | None
    """The cursor its buffered page was read from."""
    size: int
    """The page size it is read with (kept in the cursor: `shown` counts rows of such a page)."""
    rows: list[SessionRecord]
    shown: int
    """How many rows of the buffered page are shown (on earlier pages or this one)."""
    next_cursor: str | None
    snippets: dict[str, str]

    def position(self) -> list | None:
        """Where the next page continues in this database (None: it has nothing more)."""
        if self.head is not None:
            return [self.start, self.shown, self.size]
        return None if self.next_cursor is None else [self.next_cursor, 0, self.size]

    @property
    def head(self) -> SessionRecord | None:
        return self.rows[self.shown] if self.shown < len(self.rows) else None


class AllProjects:
    """Listings and look-ups over every indexed database plus the current one (`current`, may be None)."""

    def __init__(
        self, current: Server | None = None, index: DatabaseIndex | None = None, budget: float = READ_BUDGET
    ) -> None:
        self.index = index if index is not None else DatabaseIndex(paths.database_index_path())
        self.current = current
        self.budget = budget
        self._sources: dict[Path, _Source] = {}
        self._databases: dict[str, Path] = {}

    def sources(self) -> list[_Source]:
        """The current database first, then every other indexed one, oldest entry first."""
        wanted: list[Path] = []
        if self.current is not None:
            wanted.append(Path(self.current.database).resolve())
        wanted += [entry.path for entry in self.index.entries() if entry.path not in wanted]
        for database in wanted:
            if database not in self._sources:
                own = self.current is not None and database == wanted[0]
                self._sources[database] = _Source(database, self.current if own else None, self.budget)
        return [self._sources[database] for database in wanted]

    def database_of(self, session_id: str) -> Path | None:
        """The database of a session listed by this object (None for one it never listed)."""
        return self._databases.get(session_id)

    async def page(
        self, query: str | None = None, cursor: str | None = None, limit: int = 50, full_text: bool = True
    ) -> ProjectsPage:
        """Sessions of every project, newest activity first; with a query, full-text matches (each
        database's newest matches first, databases interleaved by the sessions' last activity), or
        with `full_text` False the title, workspace and id filter (`Server.list_sessions`)."""
        query = valid_text(query) if query and query.strip() else None
        sources = self.sources()
        size = max(MIN_READ, -(-limit // max(len(sources), 1)))
        state = self._positions(cursor, sources, size)
        buffers: list[_Buffer] = []
        skipped: list[str] = []
        carried: dict[str, list] = {}
        wanted = [
            (source, state[str(source.database)]) for source in sources if str(source.database) in state
        ]
        # Each database is read in its own thread (SQLite releases the GIL): the slowest bounds the wait.
        results = await asyncio.gather(
            *(self._read(source, query, full_text, *position) for source, position in wanted),
            return_exceptions=True,
        )
        for (source, position), result in zip(wanted, results, strict=True):
            if isinstance(result, DatabaseGone):
                self._forget(source)
            elif isinstance(result, StoreError):
                skipped.append(result.message)
                carried[str(source.database)] = position  # tried again by the next page
            elif isinstance(result, BaseException):
                raise result
            else:
                buffers.append(result)
        listed, snippets = await self._merge(buffers, query, full_text, limit, skipped)
        for buffer in buffers:
            resume_at = buffer.position()
            if resume_at is not None:
                carried[str(buffer.source.database)] = resume_at
        more = bool(carried) and (len(listed) == limit or any(b.position() for b in buffers))
        databases = {record.id: self._databases[record.id] for record in listed}
        return ProjectsPage(listed, encode_cursor(carried) if more else None, snippets, databases, skipped)

    async def _merge(
        self, buffers: list[_Buffer], query: str | None, full_text: bool, limit: int, skipped: list[str]
    ) -> tuple[list[SessionRecord], dict[str, str]]:
        """Take rows newest first from the buffers, reading a database's next page when its buffer ends."""
        listed: list[SessionRecord] = []
        seen: set[str] = set()
        snippets: dict[str, str] = {}
        heap = [(-b.head.updated_at, i) for i, b in enumerate(buffers) if b.head is not None]
        heapq.heapify(heap)
        while heap and len(listed) < limit:
            _, i = heapq.heappop(heap)
            buffer = buffers[i]
            record = buffer.head
            assert record is not None
            buffer.shown += 1
            if record.id not in seen:  # full text may list a session again for an older match
                seen.add(record.id)
                listed.append(record)
                self._databases[record.id] = buffer.source.database
                if record.id in buffer.snippets:
                    snippets[record.id] = buffer.snippets[record.id]
            if buffer.head is None and buffer.next_cursor is not None:
                try:
                    buffers[i] = buffer = await self._read(
                        buffer.source, query, full_text, buffer.next_cursor, 0, buffer.size
                    )
                except StoreError as exc:
                    skipped.append(exc.message)
            if buffer.head is not None:
                heapq.heappush(heap, (-buffer.head.updated_at, i))
        return listed, snippets

    async def _read(
        self, source: _Source, query: str | None, full_text: bool, start: str | None, shown: int, size: int
    ) -> _Buffer:
        page = await source.page(query, start, size, full_text)
        return _Buffer(
            source,
            start,
            size,
            page.sessions,
            min(shown, len(page.sessions)),
            page.next_cursor,
            page.snippets,
        )

    @staticmethod
    def _positions(cursor: str | None, sources: list[_Source], size: int) -> dict[str, list]:
        """Per database: [the cursor its page starts at, rows of that page already shown, its size]."""
        if cursor is None:
            return {str(source.database): [None, 0, size] for source in sources}
        try:
            (state,) = decode_cursor(cursor)
        except ValueError:
            state = None
        if not isinstance(state, dict) or not all(
            isinstance(v, list) and len(v) == 3 for v in state.values()
        ):
            raise ValueError(f"Invalid page cursor {cursor!r}; pass the next_cursor of the previous page.")
        return state

    async def reload(self, records: Iterable[SessionRecord]) -> dict[str, SessionRecord]:
        """The current rows of listed sessions, by id: deleted ones (and those of vanished databases) are
        absent; those of a database that cannot be read now are returned as they were."""
        by_database: dict[Path, list[SessionRecord]] = {}
        for record in records:
            database = self._databases.get(record.id)
            if database is not None:
                by_database.setdefault(database, []).append(record)
        fresh: dict[str, SessionRecord] = {}
        for database, listed in by_database.items():
            source = self._sources.get(database)
            if source is None:
                continue
            try:
                fresh.update(await source.current(listed))
            except DatabaseGone:
                self._forget(source)
            except StoreError:
                fresh.update((record.id, record) for record in listed)
        return fresh

    async def locate(self, id_or_prefix: str) -> tuple[SessionRecord, Path]:
        """A session of any project by id or unique prefix, and its database.

        Raises SessionNotFoundError when no database has it, or several have a session starting so.
        """
        found: list[tuple[SessionRecord, Path]] = []
        ambiguous = False
        for source in self.sources():
            try:
                found.append((await source.find(id_or_prefix), source.database))
            except SessionNotFoundError as exc:
                if "Several sessions" in exc.message:
                    ambiguous = True
            except DatabaseGone:
                self._forget(source)
            except StoreError:
                continue
        if len(found) == 1 and not ambiguous:
            self._databases[found[0][0].id] = found[0][1]
            return found[0]
        if found or ambiguous:
            raise SessionNotFoundError(f"Several sessions start with {id_or_prefix!r}; type more of the id.")
        raise SessionNotFoundError(
            f"No session id starts with {id_or_prefix!r} in any project. "
            "List them with `harnez sessions --all`."
        )

    def _forget(self, source: _Source) -> None:
        """A database that moved or vanished leaves the index, quietly."""
        self._sources.pop(source.database, None)
        source.close()
        try:
            self.index.forget([source.database])
        except StoreError:
            pass  # the index cannot be written now: the next listing drops it again

    def close(self) -> None:
        """Close the read-only connections (the current server stays open: it is not ours)."""
        for source in self._sources.values():
            source.close()
        self._sources.clear()
