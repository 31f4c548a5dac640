"""The database: one long-lived aiosqlite write connection, a read connection, and transactions."""

from __future__ import annotations

import asyncio
import sqlite3
from contextvars import ContextVar
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from harnez.errors import StoreBusyError, StoreError
from harnez.store.migrate import migrate

BUSY_TIMEOUT_MS = 5000

class Database:
    """A Harnez database file, migrated to the newest schema when opened."""

    def __init__(self, path: Path, writer: aiosqlite.Connection, reader: aiosqlite.Connection) -> None:
        self.path = path
        self._writer = writer
        self._reader = reader
        self._lock = asyncio.Lock()
        self._depth: ContextVar[int] = ContextVar(f"harnez-tx-{id(self)}", default=0)

    @classmethod
    async def open(cls, path: Path, migrations: Path | None = None) -> Database:
        """Migrate (refusing a newer schema) and connect."""
        path = Path(path)
        await asyncio.to_thread(migrate, path, migrations)
        writer = await cls._connect(path)
        reader = await cls._connect(path)
        return cls(path, writer, reader)

    @staticmethod
    async def _connect(path: Path) -> aiosqlite.Connection:
        try:
            conn = await aiosqlite.connect(path, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"Cannot open the database {path}: {exc}.") from exc
        conn.row_factory = sqlite3.Row
        await conn.execute("PRAGMA journal_mode = WAL")
        for pragma in ("synchronous = NORMAL", "foreign_keys = ON", f"busy_timeout = {BUSY_TIMEOUT_MS}",
                       "journal_size_limit = 67108864"):
            await conn.execute(f"PRAGMA {pragma}")
        return conn

    async def close(self) -> None:
        """Checkpoint the WAL and close both connections."""
        try:
            await self._writer.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass  # another process may hold the database; the WAL is checkpointed by a later open
        await self._writer.close()
        await self._reader.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """BEGIN IMMEDIATE … COMMIT on the write connection; a nested call in the same task is a savepoint.

        Other tasks wait for the transaction to end (the lock), so they never write inside it.
        """
        depth = self._depth.get()
        if depth:
            name = f"sp{depth}"
            await self._writer.execute(f"SAVEPOINT {name}")
            token = self._depth.set(depth + 1)
            try:
                yield self._writer
            except BaseException:
                await self._writer.execute(f"ROLLBACK TO {name}")
                await self._writer.execute(f"RELEASE {name}")
                raise
            finally:
                self._depth.reset(token)
            await self._writer.execute(f"RELEASE {name}")
            return
        async with self._lock:
            await self._begin()
            token = self._depth.set(1)
            try:
                yield self._writer
            except BaseException:
                await self._writer.execute("ROLLBACK")
                raise
            finally:
                self._depth.reset(token)
            await self._writer.execute("COMMIT")

    async def _begin(self) -> None:
        try:
            await self._writer.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusyError(
                    f"The database {self.path} stayed locked by another process for "
                    f"{BUSY_TIMEOUT_MS // 1000} s; close the other Harnez or try again."
                ) from exc
            raise

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Run a read on the read connection."""
        async with self._reader.execute(sql, tuple(params)) as cursor:
            return list(await cursor.fetchall())

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Row | None:
        """Run a read on the read connection and return its first row."""
        async with self._reader.execute(sql, tuple(params)) as cursor:
            return await cursor.fetchone()
