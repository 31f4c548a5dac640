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
            pending = aiosqlite.connect(path, isolation_level=None)
            # aiosqlite's worker thread is not a daemon: one connection left open by mistake would
            # keep the process from exiting after its work is done. Harnez closes its connections;
            # this makes a missed close cost a WAL checkpoint on the next open, not a hung process.
            worker = getattr(pending, "_thread", None)
            if worker is not None:
                worker.daemon = True
            conn = await pending
        except sqlite3.Error as exc:
            raise StoreError(f"Cannot open the database {path}: {exc}.") from exc
        conn.row_factory = sqlite3.Row
        await conn.execute("PRAGMA journal_mode = WAL")
        for pragma in ("synchronous = NORMAL", "foreign_keys = ON", f"busy_timeout = {BUSY_TIMEOUT_MS}",
                       "journal_size_limit = 67108864"):
            await conn.execute(f"PRAGMA {pragma}")
        return conn

    async def close(self) -> None:
        """Checkpoint the WAL and close both connections (their threads would keep the process alive)."""
        try:
            await self._writer.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass  # another process may hold the database; the WAL is checkpointed by a later open
        finally:
            try:
                await self._writer.close()
            finally:
                await self._reader.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """BEGIN IMMEDIATE … COMMIT on the write connection; a nested call in the same task is a savepoint.

        Other tasks wait for the transaction to end (the lock), so they never write inside it. The
        statements that open and close a transaction run to completion even when the caller is
        cancelled (aiosqlite executes them in its thread regardless), so the connection never stays
        inside a transaction that nobody owns.
        """
        depth = self._depth.get()
        if depth:
            async with self._savepoint(f"sp{depth}", depth):
                yield self._writer
            return
        async with self._lock:
            await self._begin()
            token = self._depth.set(1)
            try:
                yield self._writer
            except BaseException:
                await self._settle("ROLLBACK")
                raise
            finally:
                self._depth.reset(token)
            try:
                await self._settle("COMMIT")
            except sqlite3.Error:
                await self._settle("ROLLBACK")
                raise

    @asynccontextmanager
    async def _savepoint(self, name: str, depth: int) -> AsyncIterator[None]:
        await self._settle(f"SAVEPOINT {name}")
        token = self._depth.set(depth + 1)
        try:
            yield
        except BaseException:
            await self._settle(f"ROLLBACK TO {name}")
            await self._settle(f"RELEASE {name}")
            raise
        finally:
            self._depth.reset(token)
        await self._settle(f"RELEASE {name}")

    async def _settle(self, sql: str) -> None:
        """Run a statement to its end; a cancellation meanwhile is re-raised after it completed."""
        statement = asyncio.ensure_future(self._writer.execute(sql))
        try:
            await asyncio.shield(statement)
        except asyncio.CancelledError:
            await statement
            raise

    async def _begin(self) -> None:
        try:
            await self._settle("BEGIN IMMEDIATE")
        except asyncio.CancelledError:
            await self._settle("ROLLBACK")  # BEGIN did run: leave no transaction behind
            raise
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
