"""Whole write transactions in one call: a write connection of its own, in a thread of its own.

aiosqlite sends each statement to its thread and back through the event loop, and the event loop is
the one the TUI paints with: every trip back waits for whatever the TUI is doing then (a mount, a
frame). A transaction of six statements (BEGIN, a read, three writes, COMMIT) waited six times; an
answer's first words waited 5–11 ms for their commit behind the prompt's mount. `WriteThread.run`
sends a synchronous function that does the whole transaction (BEGIN IMMEDIATE, the statements,
COMMIT) and comes back once.

The database (harnez/store/db.py) serialises this connection's transactions with those of its
aiosqlite write connection under one lock, so the two never wait on each other's SQLite lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


class WriteThread:
    """A write connection used only in its own thread; `run(fn)` runs `fn(conn)` in one transaction there.

    The thread is a pool's single worker: an idle worker ends when the interpreter exits, so a
    connection left open by mistake never keeps the process alive.
    """

    def __init__(self, path: Path, pragmas: Sequence[str]) -> None:
        self._path = path
        self._pragmas = tuple(pragmas)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="harnez-sqlite-write")
        self._conn: sqlite3.Connection | None = None

    async def open(self) -> None:
        """Connect now (in the thread), so a file that cannot be opened fails here, not at a first write."""
        await self._call(self._connect)

    def run(self, fn: Callable[[sqlite3.Connection], T]) -> asyncio.Future[T]:
        """BEGIN IMMEDIATE, `fn(conn)`, COMMIT, in the thread (ROLLBACK when any of it raises); handed
        to the thread now, not at the next turn of the event loop.

        The transaction runs to its end even when the caller is cancelled (a thread cannot be
        stopped): whoever serialises the writes waits for the returned future, not for the caller.
        """
        return asyncio.get_running_loop().run_in_executor(self._pool, self._transaction, fn)

    async def close(self) -> None:
        """Close the connection in its thread, then let the thread go."""
        try:
            await self._call(self._disconnect)
        finally:
            self._pool.shutdown(wait=False)

    async def _call(self, fn: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self._path, isolation_level=None)  # made in the thread that uses it
            conn.row_factory = sqlite3.Row
            for pragma in self._pragmas:
                conn.execute(f"PRAGMA {pragma}").fetchall()
            self._conn = conn
        return self._conn

    def _disconnect(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _transaction(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = fn(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite may already have rolled back (a full disk, an I/O error)
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise
        return result
