"""The database: long-lived write connections (aiosqlite's, and one for whole transactions in one call), a
read connection, and transactions."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from harnez.errors import DatabaseDamagedError, StoreBusyError, StoreError, StoreWriteError
from harnez.store import private
from harnez.store.migrate import migrate
from harnez.store.writer import WriteThread

if TYPE_CHECKING:  # imported where a connection is made: a read-only listing never needs it
    import aiosqlite

BUSY_TIMEOUT_MS = 5000
"""How long one statement waits for another process's write lock (SQLite's busy timeout)."""

STOP_AGAIN = 0.01
"""Seconds between two requests to stop a cancelled read that is still running."""


def pragmas() -> tuple[str, ...]:
    """Every write or read connection's settings (read when it connects)."""
    return (
        "journal_mode = WAL",
        "synchronous = NORMAL",
        "foreign_keys = ON",
        f"busy_timeout = {BUSY_TIMEOUT_MS}",
        "journal_size_limit = 67108864",
    )


T = TypeVar("T")


def inserted_id(cursor: aiosqlite.Cursor | sqlite3.Cursor) -> int:
    """The rowid the INSERT just run on `cursor` made (SQLite sets it for every successful INSERT)."""
    rowid = cursor.lastrowid
    if rowid is None:
        raise StoreError("SQLite reported no row id for an insert; the database may be damaged.")
    return rowid


def is_busy(exc: BaseException) -> bool:
    """Whether a failure only means another process held the write lock (worth trying again)."""
    if isinstance(exc, StoreBusyError):
        return True
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def damaged(path: Path, exc: BaseException) -> DatabaseDamagedError:
    """SQLite met a damaged page: say what that means and how to get the sessions back."""
    return DatabaseDamagedError(
        f"The database {path} is damaged ({str(exc).rstrip('.')}). Harnez stopped before writing to it. "
        f"Restore a backup next to it ({path.name}.v*.bak) or salvage it with `sqlite3 {path} .recover`, "
        "or move it away to start a new one."
    )


def write_failure(path: Path, exc: BaseException, what: str = "save to") -> StoreWriteError:
    """A failed write as the person should hear it: what failed, that the database is intact, what to do."""
    reason = str(exc).rstrip(".") or type(exc).__name__
    text = reason.lower()
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return damaged(path, exc)
    if "full" in text:
        advice = "Free some disk space"
    elif "readonly" in text or "read-only" in text or "permission" in text:
        advice = "Make the database file and its folder writable again"
    elif is_busy(exc):
        advice = "Close the other program that holds the database (another Harnez?)"
    else:
        advice = "Check the disk (`PRAGMA integrity_check` in sqlite3 tells whether the file is sound)"
    return StoreWriteError(
        f"Harnez could not {what} the database {path}: {reason}. What was saved before is intact (the failed "
        f"write was rolled back), but nothing more is saved in this run. {advice}, then continue the session "
        "with `harnez --continue` or `harnez run --resume latest`."
    )


async def until_stopped(job: asyncio.Future[T], stop: Callable[[], Awaitable[None]]) -> T:
    """`await job`; if the caller is cancelled meanwhile, `stop()` it and wait for its end, then raise the
    cancellation (what the stopped job raised or read is dropped: nobody wants it any more).

    A read runs in a database's thread, which a cancelled await does not stop: without this it would
    run to its end and hold back every read behind it.
    """
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        while not job.done():  # again until it ends: a stop that came before the statement began is lost
            await stop()
            with contextlib.suppress(asyncio.CancelledError):  # cancelled again: it is being stopped
                await asyncio.wait([job], timeout=STOP_AGAIN)
        if not job.cancelled():
            job.exception()  # retrieved, so asyncio does not log it as never seen
        raise


def _connection_with_daemon_worker(path: Path) -> aiosqlite.Connection:
    """`aiosqlite.connect(path)`, made in a daemon thread so that its worker thread is a daemon too.

    Python waits for every non-daemon thread before it exits, and aiosqlite's worker is not one: a
    connection left open by mistake would keep the process alive after its work is done. A new
    thread inherits the daemon flag of the thread that creates it, and aiosqlite creates its worker
    with the connection object (the object is the thread up to 0.21, holds it from 0.22 on), so
    creating the object in a daemon thread makes the worker one, through public behaviour only.
    Harnez closes its connections; this makes a missed close cost a WAL checkpoint on the next
    open, not a hung process (tests/unit/store/test_connections.py). Creating the object does no
    I/O (connecting happens on the worker, when awaited): the join costs a thread start.
    """
    import aiosqlite

    made: list[aiosqlite.Connection] = []
    creator = threading.Thread(
        target=lambda: made.append(aiosqlite.connect(path, isolation_level=None)),
        name="harnez-sqlite-connect",
        daemon=True,
    )
    creator.start()
    creator.join()
    return made[0]


class Database:
    """A Harnez database file, migrated to the newest schema when opened."""

    def __init__(
        self, path: Path, writer: aiosqlite.Connection, reader: aiosqlite.Connection, writes: WriteThread
    ) -> None:
        self.path = path
        self.notices: list[str] = []
        """What opening changed that the person should hear of (files made private)."""
        self.on_failure: Callable[[StoreWriteError], None] | None = None
        """Told of the first write that fails for good, wherever it happens (the event log stops)."""
        self._writer = writer
        self._reader = reader
        self._writes = writes
        self._closed = False
        self._lock = asyncio.Lock()
        self._read_lock = asyncio.Lock()
        self._depth: ContextVar[int] = ContextVar(f"harnez-tx-{id(self)}", default=0)

    @classmethod
    async def open(cls, path: Path, migrations: Path | None = None) -> Database:
        """Migrate (refusing a newer schema) and connect."""
        path = Path(path)
        notices = await asyncio.to_thread(private.prepare, path)
        await asyncio.to_thread(migrate, path, migrations)
        writer = await cls._connect(path)
        reader = await cls._connect(path)
        writes = WriteThread(path, pragmas())
        try:
            await writes.open()
        except sqlite3.Error as exc:
            await writes.close()
            await writer.close()
            await reader.close()
            raise StoreError(f"Cannot open the database {path}: {exc}.") from exc
        db = cls(path, writer, reader, writes)
        db.notices = notices
        return db

    @staticmethod
    async def _connect(path: Path) -> aiosqlite.Connection:
        try:
            conn = await _connection_with_daemon_worker(path)
        except sqlite3.Error as exc:
            raise StoreError(f"Cannot open the database {path}: {exc}.") from exc
        conn.row_factory = sqlite3.Row
        # Each pragma's answer is read to its end: a statement left pending would keep SQLite counting a
        # running statement, and an interrupt (`until_stopped`) would then stop every later read too.
        for pragma in pragmas():
            await conn.execute_fetchall(f"PRAGMA {pragma}")
        return conn

    async def close(self) -> None:
        """Checkpoint the WAL and close the connections (their threads would keep the process alive)."""
        self._closed = True
        try:
            await self._writer.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass  # another process may hold the database; the WAL is checkpointed by a later open
        finally:
            try:
                await self._writer.close()
            finally:
                try:
                    await self._reader.close()
                finally:
                    await self._writes.close()

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
            except BaseException as exc:
                await self._rollback()
                failure = self._storage_failure(exc)
                if failure is None:
                    raise
                raise failure from exc
            finally:
                self._depth.reset(token)
            try:
                await self._settle("COMMIT")
            except sqlite3.Error as exc:
                await self._rollback()
                raise (self._storage_failure(exc) or exc) from exc

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn(conn)` in one write transaction, whole, in the write thread (harnez/store/writer.py):
        BEGIN IMMEDIATE, `fn`, COMMIT (ROLLBACK when `fn` raises), one trip from the event loop and back.

        `fn` runs in another thread: it uses only `conn` and what it was given. Failures are those of
        `transaction()` (a StoreBusyError, a StoreWriteError reported to `on_failure`, an IntegrityError
        as it is). A cancelled caller's transaction still runs to its end before the next write starts.
        Not for use inside `transaction()`: it would wait for the lock its caller holds.
        """
        if self._depth.get():
            raise RuntimeError("Database.write() inside transaction() would wait for its own lock")
        if self._closed:
            raise StoreError(f"The database {self.path} is closed: nothing more can be saved in this run.")
        async with self._lock:
            job = self._writes.run(fn)
            try:
                return await asyncio.shield(job)
            except asyncio.CancelledError:
                while not job.done():
                    with contextlib.suppress(asyncio.CancelledError):
                        await asyncio.wait([job])
                if not job.cancelled():
                    job.exception()  # retrieved: nobody waits for it any more
                raise
            except Exception as exc:
                failure = self._storage_failure(exc)
                if failure is None:
                    raise
                raise failure from exc

    async def _rollback(self) -> None:
        """Roll back, unless SQLite already did (it may, after a full disk or an I/O error)."""
        if self._writer.in_transaction:
            await self._settle("ROLLBACK")

    def _storage_failure(self, exc: BaseException) -> StoreError | None:
        """A write's SQLite error as a StoreError; None for a constraint the caller handles.

        A failure for good (not a busy lock) is also reported to `on_failure`, so a full disk met by
        any write — a context record, a title, a task row — stops the whole store, not one caller.
        """
        if isinstance(exc, sqlite3.IntegrityError) or not isinstance(exc, sqlite3.Error):
            return None
        if is_busy(exc):
            return StoreBusyError(
                f"The database {self.path} stayed locked by another process for "
                f"{BUSY_TIMEOUT_MS / 1000:g} s; close the other Harnez or try again."
            )
        failure = write_failure(self.path, exc)
        if self.on_failure is not None:
            self.on_failure(failure)
        return failure

    @asynccontextmanager
    async def _savepoint(self, name: str, depth: int) -> AsyncIterator[None]:
        await self._settle(f"SAVEPOINT {name}")
        token = self._depth.set(depth + 1)
        try:
            yield
        except BaseException:
            if self._writer.in_transaction:  # SQLite may have rolled the whole transaction back
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
            await self._rollback()  # BEGIN did run: leave no transaction behind
            raise
        except sqlite3.Error as exc:
            raise (self._storage_failure(exc) or exc) from exc

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Run a read on the read connection (stopped in the database's thread if the caller is cancelled)."""
        return list(await self._read(lambda: self._reader.execute_fetchall(sql, tuple(params))))

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Row | None:
        """Run a read on the read connection and return its first row."""

        async def first() -> sqlite3.Row | None:
            async with self._reader.execute(sql, tuple(params)) as cursor:
                return await cursor.fetchone()

        return await self._read(first)

    async def _read(self, run: Callable[[], Awaitable[T]]) -> T:
        """Run one read alone on the read connection; a caller cancelled meanwhile interrupts its statement.

        aiosqlite runs the statement in the connection's thread, where a cancelled await would leave it
        running to its end and every later read queued behind it (a picker's query overtaken by the
        next key). Reads take turns (`_read_lock`), so while one is cancelled its statement is the only
        one on the connection: `interrupt()` stops that one, and the read ends before the next begins.
        SQLite ignores an interrupt that comes when no statement runs, so one that comes as the read
        ends reaches no other read.
        """
        async with self._read_lock:
            try:
                return await until_stopped(asyncio.ensure_future(run()), self._reader.interrupt)
            except sqlite3.DatabaseError as exc:
                raise self._read_failure(exc) from exc

    def _read_failure(self, exc: sqlite3.DatabaseError) -> BaseException:
        """A damaged page met while reading; other errors (a bad query) stay what they are."""
        text = str(exc).lower()
        if "malformed" in text or "not a database" in text or "corrupt" in text:
            return damaged(self.path, exc)
        return exc
