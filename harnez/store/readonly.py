"""Another project's database, read only and in bounded time, for listings that span every project.

A listing across projects reads databases this process did not open for writing: they may belong
to a Harnez running elsewhere, sit on a slow disk, or be half a gigabyte. Each is opened read-only
(`mode=ro`, `query_only`: nothing is migrated, recovered or written), and every read is stopped once
it has taken `budget` seconds, so one slow database costs the listing a bounded time, never a hang.
The object answers `fetchall`/`fetchone` like `Database`, so `SessionTable` and `FullTextSearch`
read it with the same queries as the project's own database.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from harnez.errors import StoreError
from harnez.store.db import until_stopped
from harnez.store.search import FullTextSearch
from harnez.store.sessions import SessionTable

READ_BUDGET = 0.5
"""Seconds one read of another project's database may take before it is stopped."""


class DatabaseGone(StoreError):
    """The database is no longer where the index says (moved or deleted)."""


class ReadOnlyDatabase:
    """Reads of one database through a read-only connection, each bounded by `budget` seconds."""

    def __init__(self, path: Path, budget: float = READ_BUDGET) -> None:
        self.path = Path(path)
        self.budget = budget
        # The tables only read through it (fetchall / fetchone), which is all this class offers.
        self.sessions = SessionTable(self)  # type: ignore[arg-type]
        self.search = FullTextSearch(self)  # type: ignore[arg-type]
        self._conn: sqlite3.Connection | None = None
        self._deadline = 0.0
        self._cancelled = threading.Event()
        """Set when the caller of the read running now was cancelled."""
        self._lock = threading.Lock()

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Run a read; raises DatabaseGone, or StoreError saying why the database could not be read."""
        result: list[sqlite3.Row] = await self._run(sql, tuple(params), False)
        return result

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Row | None:
        """Run a read and return its first row."""
        row: sqlite3.Row | None = await self._run(sql, tuple(params), True)
        return row

    def close(self) -> None:
        """Close the connection (the next read opens it again)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    async def _run(self, sql: str, params: tuple[Any, ...], one: bool) -> Any:
        """A read in a worker thread; a caller cancelled meanwhile stops it there (`until_stopped`)."""
        cancelled = threading.Event()

        async def stop() -> None:
            cancelled.set()

        reading = asyncio.ensure_future(asyncio.to_thread(self._read, sql, params, one, cancelled))
        return await until_stopped(reading, stop)

    def _read(self, sql: str, params: tuple[Any, ...], one: bool, cancelled: threading.Event) -> Any:
        with self._lock:
            self._deadline = time.monotonic() + self.budget
            self._cancelled = cancelled
            try:
                cursor = self._connection().execute(sql, params)
                return cursor.fetchone() if one else cursor.fetchall()
            except sqlite3.Error as exc:
                raise self._failure(exc) from None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            if not self.path.is_file():
                raise DatabaseGone(f"{self.path} is gone (moved or deleted).")
            conn = sqlite3.connect(
                f"file:{quote(os.fsencode(self.path))}?mode=ro",
                uri=True,
                timeout=self.budget,
                check_same_thread=False,
                isolation_level=None,
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA query_only = ON")
            conn.set_progress_handler(self._over_budget, 1000)
            self._conn = conn
        return self._conn

    def _over_budget(self) -> int:
        """SQLite's progress callback: a non-zero answer interrupts the running statement (one that took
        too long, or whose caller was cancelled)."""
        return 1 if self._cancelled.is_set() or time.monotonic() > self._deadline else 0

    def _failure(self, exc: sqlite3.Error) -> StoreError:
        text = str(exc).lower()
        if "interrupted" in text:
            why = f"reading it took longer than {self.budget:g} s"
        elif "no such table" in text or "no such column" in text or "not a database" in text:
            why = "it is not a Harnez database this version can read"
        elif "unable to open" in text and not self.path.exists():
            return DatabaseGone(f"{self.path} is gone (moved or deleted).")
        else:
            why = str(exc).rstrip(".")
        return StoreError(f"Skipped the sessions in {self.path}: {why}.")
