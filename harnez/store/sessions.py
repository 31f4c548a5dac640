"""Session rows: create, find by id or prefix, list newest first by cursor, rename, delete."""

from __future__ import annotations

import base64
import json
import sqlite3
import time
import uuid
from dataclasses import dataclass
from functools import partial
from typing import Any

from harnez.errors import SessionNotFoundError
from harnez.redaction import redact
from harnez.store import documents
from harnez.store.db import Database, inserted_id
from harnez.store.documents import Document
from harnez.store.lookups import Reads, has_table
from harnez.store.titlefilter import TitleFilter

_COLUMNS = (
    "num, id, workspace, title, title_source, naming_used, model, status, created_at, updated_at, origin"
)


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A stored session's metadata."""

    num: int
    id: str
    workspace: str
    title: str | None
    title_source: str | None
    naming_used: bool
    model: str | None
    status: str
    created_at: float
    updated_at: float
    origin: str | None = None
    """The harness a session was imported from (`claude-code`, `codex`, `opencode`, `pi`); None for Harnez's own."""

    @property
    def display_title(self) -> str:
        """The title, or the workspace when untitled."""
        return self.title or self.workspace

    def to_json(self) -> dict[str, Any]:
        """The JSON form used by listings."""
        return {
            "id": self.id,
            "title": self.title,
            "title_source": self.title_source,
            "workspace": self.workspace,
            "model": self.model,
            "status": self.status,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "origin": self.origin,
        }


def _record(row: sqlite3.Row) -> SessionRecord:
    """A session row (selected as `_COLUMNS`) read by column name."""
    return SessionRecord(
        num=row["num"],
        id=row["id"],
        workspace=row["workspace"],
        title=row["title"],
        title_source=row["title_source"],
        naming_used=bool(row["naming_used"]),
        model=row["model"],
        status=row["status"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        origin=row["origin"],
    )


def new_session_id() -> str:
    """A random 32-hex-digit id; any unique prefix of it finds the session."""
    return uuid.uuid4().hex


def encode_cursor(*values: Any) -> str:
    """An opaque page cursor."""
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> list[Any]:
    """The values inside a cursor made by encode_cursor."""
    try:
        return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, json.JSONDecodeError) as exc:
        raise ValueError(
            f"Invalid page cursor {cursor!r}; pass the next_cursor of the previous page."
        ) from exc


class ChildFilter:
    """The SQL condition that leaves child sessions out of a listing.

    Empty for a database from before sub-agents (another project's, read without migrating it): it
    has no children to hide, and no table to ask.
    """

    def __init__(self, db: Reads) -> None:
        self._db = db
        self._known: bool | None = None

    async def clause(self, column: str) -> str | None:
        """`<column> NOT IN (…children…)`, or None when the database has no delegations table."""
        if self._known is None:
            self._known = await has_table(self._db, "delegations")
        return f"{column} NOT IN (SELECT child FROM delegations)" if self._known else None


@dataclass(frozen=True, slots=True)
class SessionPage:
    """One page of a listing; `next_cursor` is None when there is no next page."""

    sessions: list[SessionRecord]
    next_cursor: str | None
    snippets: dict[str, str]


def insert_session(
    conn: sqlite3.Connection,
    session_id: str,
    workspace: str,
    model: str | None,
    title: str | None = None,
    title_source: str | None = None,
) -> SessionRecord:
    """Insert a session's row and its documents (inside a write transaction, in the write thread)."""
    now = time.time()
    title = redact(title) if title else title
    cur = conn.execute(
        "INSERT INTO sessions (id, workspace, title, title_source, model, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (session_id, workspace, title, title_source, model, now, now),
    )
    num = inserted_id(cur)
    titled = [Document(num, "title", None, title)] if title else []
    documents.add(conn, [Document(num, "workspace", None, workspace), *titled])
    return SessionRecord(
        num=num,
        id=session_id,
        workspace=workspace,
        title=title,
        title_source=title_source,
        naming_used=False,
        model=model,
        status="idle",
        created_at=now,
        updated_at=now,
    )


class SessionTable:
    """Reads and writes of the sessions table."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._children = ChildFilter(db)
        self._titles = TitleFilter(db)

    async def insert(
        self,
        session_id: str,
        workspace: str,
        model: str | None,
        title: str | None = None,
        title_source: str | None = None,
    ) -> SessionRecord:
        """Persist a session (called when its first user message arrives)."""
        return await self._db.write(
            partial(
                insert_session,
                session_id=session_id,
                workspace=workspace,
                model=model,
                title=title,
                title_source=title_source,
            )
        )

    async def get(self, session_id: str) -> SessionRecord:
        """The session with this exact id."""
        row = await self._db.fetchone(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
        if row is None:
            raise SessionNotFoundError(
                f"No session has the id {session_id!r}. List them with `harnez sessions --all`."
            )
        return _record(row)

    async def find(self, prefix: str) -> SessionRecord:
        """The one session whose id starts with `prefix`."""
        clean = prefix.strip().lower()
        if not clean or any(c not in "0123456789abcdef" for c in clean):
            raise SessionNotFoundError(
                f"{prefix!r} is not a session id (ids are hexadecimal). "
                "List them with `harnez sessions --all`."
            )
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM sessions WHERE id >= ? AND id < ? LIMIT 2", (clean, clean + "g")
        )
        if not rows:
            raise SessionNotFoundError(
                f"No session id starts with {prefix!r}. List them with `harnez sessions --all`."
            )
        if len(rows) > 1:
            raise SessionNotFoundError(f"Several sessions start with {prefix!r}; type more of the id.")
        return _record(rows[0])

    async def newest(self, workspace: str) -> SessionRecord | None:
        """The most recently active session of a workspace."""
        hidden = await self._children.clause("num")
        row = await self._db.fetchone(
            f"SELECT {_COLUMNS} FROM sessions WHERE workspace = ? {'AND ' + hidden if hidden else ''} "
            "ORDER BY updated_at DESC, num DESC LIMIT 1",
            (workspace,),
        )
        return _record(row) if row else None

    async def page(
        self,
        workspace: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
        title_filter: str | None = None,
    ) -> SessionPage:
        """Sessions newest first (by last activity), keyset-paginated."""
        hidden = await self._children.clause("num")
        where, params = [hidden] if hidden else [], []
        if title_filter:
            matching, matched = await self._titles.condition(title_filter, workspace)
            where.append(matching)
            params += matched
        elif workspace is not None:
            where.append("workspace = ?")
            params.append(workspace)
        if cursor:
            updated, num = decode_cursor(cursor)
            where.append("(updated_at < ? OR (updated_at = ? AND num < ?))")
            params += [updated, updated, num]
        sql = f"SELECT {_COLUMNS} FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY updated_at DESC, num DESC LIMIT ?"
        rows = await self._db.fetchall(sql, [*params, limit + 1])
        records = [_record(r) for r in rows[:limit]]
        more = len(rows) > limit
        next_cursor = encode_cursor(records[-1].updated_at, records[-1].num) if more and records else None
        return SessionPage(records, next_cursor, {})

    async def naming_unfinished(self, since: float, until: float) -> list[SessionRecord]:
        """Sessions last active between `since` and `until` whose naming began (`naming_used`) and
        stored no title (read by the `sessions_recent` index: the sessions of that window only)."""
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM sessions WHERE updated_at > ? AND updated_at < ? "
            "AND naming_used = 1 AND title IS NULL",
            (since, until),
        )
        return [_record(row) for row in rows]

    async def by_nums(self, nums: list[int]) -> dict[int, SessionRecord]:
        """Sessions by their row numbers."""
        if not nums:
            return {}
        marks = ",".join("?" * len(nums))
        rows = await self._db.fetchall(f"SELECT {_COLUMNS} FROM sessions WHERE num IN ({marks})", nums)
        return {row["num"]: _record(row) for row in rows}

    async def set_title(
        self,
        num: int,
        title: str,
        source: str,
        *,
        only_if_automatic: bool = False,
        only_if_untitled: bool = False,
    ) -> bool:
        """Store a title; with only_if_automatic, a title the user gave is never replaced, and with
        only_if_untitled, no title is (atomic checks)."""
        title = redact(title)
        automatic = " AND (title_source IS NULL OR title_source != 'user')" if only_if_automatic else ""
        if only_if_untitled:
            automatic += " AND title IS NULL"

        def store(conn: sqlite3.Connection) -> bool:
            if conn.execute(f"SELECT 1 FROM sessions WHERE num = ?{automatic}", (num,)).fetchone() is None:
                return False
            # The index forgets the old title by its text, so its document goes before the title changes.
            documents.remove(conn, "session = ? AND kind = 'title'", (num,))
            conn.execute(
                f"UPDATE sessions SET title = ?, title_source = ? WHERE num = ?{automatic}",
                (title, source, num),
            )
            documents.add(conn, [Document(num, "title", None, title)])
            return True

        return await self._db.write(store)

    async def mark_naming_used(self, num: int) -> bool:
        """Mark the first prompt as used for naming; False when it already was (naming runs once)."""
        return await self._db.write(
            lambda conn: (
                conn.execute(
                    "UPDATE sessions SET naming_used = 1 WHERE num = ? AND naming_used = 0", (num,)
                ).rowcount
                == 1
            )
        )

    async def set_fields(self, num: int, **fields: Any) -> None:
        """Update plain columns (model, status)."""
        allowed = {"model", "status"}
        if not fields or set(fields) - allowed:
            raise ValueError(f"set_fields takes {sorted(allowed)}, got {sorted(fields)}")
        assignments = ", ".join(f"{name} = ?" for name in fields)
        await self._db.write(
            lambda conn: conn.execute(
                f"UPDATE sessions SET {assignments} WHERE num = ?", (*fields.values(), num)
            )
        )

    async def delete(self, num: int) -> None:
        """Delete a session and everything that belongs to it."""

        def delete(conn: sqlite3.Connection) -> None:
            documents.remove(conn, "session = ?", (num,))  # while the texts it indexed are there
            conn.execute("DELETE FROM sessions WHERE num = ?", (num,))

        await self._db.write(delete)
