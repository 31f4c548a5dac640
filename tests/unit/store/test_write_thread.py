"""`Database.write`: a whole transaction in one call, in the write thread, taking turns with `transaction()`."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

import pytest

import harnez.store.db as db_module
from harnez.errors import StoreBusyError, StoreError
from harnez.store.db import Database


@pytest.fixture
def no_busy_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Connections that fail at once on SQLite's write lock: two writes that did not take turns would
    meet there, where the busy timeout would otherwise hide it."""
    monkeypatch.setattr(db_module, "BUSY_TIMEOUT_MS", 0)


async def _table(db: Database) -> None:
    async with db.transaction() as conn:
        await conn.execute("CREATE TABLE t (who TEXT, n INTEGER)")
        await conn.execute("CREATE TABLE u (n INTEGER UNIQUE)")


async def test_a_write_commits_its_function_s_statements_in_one_transaction_off_the_event_loop(
    db_path: Path,
) -> None:
    db = await Database.open(db_path)
    await _table(db)
    seen: list[tuple[str, bool]] = []

    def insert(conn: sqlite3.Connection) -> int:
        seen.append((threading.current_thread().name, conn.in_transaction))
        conn.executemany("INSERT INTO t VALUES (?, ?)", [("a", 1), ("a", 2)])
        return conn.execute("SELECT COUNT(*) FROM t").fetchone()[0]

    assert await db.write(insert) == 2
    assert seen[0][0].startswith("harnez-sqlite-write") and seen[0][1]
    assert [tuple(r) for r in await db.fetchall("SELECT who, n FROM t ORDER BY n")] == [("a", 1), ("a", 2)]
    await db.close()


async def test_a_write_that_raises_leaves_nothing_and_the_next_one_works(db_path: Path) -> None:
    db = await Database.open(db_path)
    await _table(db)

    def half_then_fail(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO t VALUES ('half', 1)")
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await db.write(half_then_fail)
    with pytest.raises(sqlite3.IntegrityError):  # a constraint reaches the caller as it is
        await db.write(lambda conn: conn.executemany("INSERT INTO u VALUES (?)", [(1,), (1,)]))
    await db.write(lambda conn: conn.execute("INSERT INTO t VALUES ('next', 2)"))
    assert [tuple(r) for r in await db.fetchall("SELECT who FROM t")] == [("next",)]
    assert [tuple(r) for r in await db.fetchall("SELECT n FROM u")] == []
    await db.close()


async def test_writes_and_transactions_take_turns_without_interleaving(
    db_path: Path, no_busy_wait: None
) -> None:
    db = await Database.open(db_path)
    await _table(db)

    def burst(conn: sqlite3.Connection, who: str) -> None:
        for n in range(5):
            conn.execute("INSERT INTO t VALUES (?, ?)", (who, n))
            time.sleep(0.001)

    async def by_write(who: str) -> None:
        for _ in range(4):
            await db.write(lambda conn: burst(conn, who))

    async def by_transaction() -> None:
        for _ in range(4):
            async with db.transaction() as conn:
                for n in range(5):
                    await conn.execute("INSERT INTO t VALUES ('tx', ?)", (n,))
                    await asyncio.sleep(0.001)

    await asyncio.gather(by_write("w1"), by_write("w2"), by_transaction())
    rows = [r[0] for r in await db.fetchall("SELECT who FROM t ORDER BY rowid")]
    assert len(rows) == 60
    runs = [rows[i : i + 5] for i in range(0, 60, 5)]
    assert all(len(set(run)) == 1 for run in runs), runs  # every transaction's five rows together
    await db.close()


async def test_a_cancelled_caller_s_write_still_ends_before_the_next_starts(
    db_path: Path, no_busy_wait: None
) -> None:
    db = await Database.open(db_path)
    await _table(db)
    entered = threading.Event()

    def slow(conn: sqlite3.Connection) -> None:
        entered.set()
        time.sleep(0.2)
        conn.execute("INSERT INTO t VALUES ('slow', 1)")

    job = asyncio.create_task(db.write(slow))
    await asyncio.to_thread(entered.wait, 5)
    job.cancel()
    with pytest.raises(asyncio.CancelledError):
        await job
    async with db.transaction() as conn:  # waits for the slow one's commit: no "database is locked"
        await conn.execute("INSERT INTO t VALUES ('after', 2)")
    assert [r[0] for r in await db.fetchall("SELECT who FROM t ORDER BY rowid")] == ["slow", "after"]
    await db.close()


async def test_a_write_inside_a_transaction_is_refused_rather_than_waiting_for_itself(db_path: Path) -> None:
    db = await Database.open(db_path)
    await _table(db)
    async with db.transaction():
        with pytest.raises(RuntimeError, match="inside transaction"):
            await db.write(lambda conn: None)
    await db.close()


async def test_a_lock_held_by_another_process_gives_a_busy_error_that_says_what_to_do(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db_module, "BUSY_TIMEOUT_MS", 50)
    db = await Database.open(db_path)
    await _table(db)
    other = sqlite3.connect(db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreBusyError, match="close the other Harnez"):
            await db.write(lambda conn: conn.execute("INSERT INTO t VALUES ('x', 1)"))
    finally:
        other.execute("ROLLBACK")
        other.close()
    await db.write(lambda conn: conn.execute("INSERT INTO t VALUES ('x', 1)"))
    await db.close()


async def test_a_write_after_close_is_a_store_error(db_path: Path) -> None:
    db = await Database.open(db_path)
    await _table(db)
    await db.close()
    with pytest.raises(StoreError, match="is closed"):
        await db.write(lambda conn: conn.execute("INSERT INTO t VALUES ('late', 1)"))
