"""Small reads several store modules share: whether a table exists, and an index's terms that begin
with a word."""

from __future__ import annotations

import sqlite3
from typing import Any, Protocol

_LAST_CHARACTER = "\U0010ffff"
"""After every term that begins with a word: the word followed by it bounds their range."""


class Reads(Protocol):
    """A database that answers reads (the project's own, or another project's read-only one)."""

    async def fetchone(self, sql: str, params: Any = ()) -> sqlite3.Row | None: ...

    async def fetchall(self, sql: str, params: Any = ()) -> list[sqlite3.Row]: ...


async def has_table(db: Reads, name: str) -> bool:
    """Whether the database has the table `name` (a database of another project may be older, read
    without migrating)."""
    row = await db.fetchone("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [name])
    return row is not None


async def terms_beginning(db: Reads, vocabulary: str, start: str, most: int) -> list[str] | None:
    """The terms of `vocabulary` (an fts5vocab table, a name of ours) that begin with `start`, in
    order; None when more than `most` do."""
    rows = await db.fetchall(
        f"SELECT term FROM {vocabulary} WHERE term >= ? AND term < ? LIMIT ?",
        [start, start + _LAST_CHARACTER, most + 1],
    )
    return [row[0] for row in rows] if len(rows) <= most else None
