"""Transactions: concurrent tasks never write inside each other's transaction; nesting uses savepoints."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harnez import events as ev
from harnez.store.db import Database


async def test_concurrent_transactions_are_serialised_not_nested(db_path: Path) -> None:
    db = await Database.open(db_path)
    async with db.transaction() as conn:
        await conn.execute("CREATE TABLE t (task TEXT, n INTEGER)")

    async def writer(name: str) -> None:
        for n in range(20):
            async with db.transaction() as conn:
                await conn.execute("INSERT INTO t VALUES (?, ?)", (name, n))
                await asyncio.sleep(0)

    await asyncio.gather(writer("a"), writer("b"), writer("c"))
    rows = await db.fetchall("SELECT COUNT(*) FROM t")
    assert rows[0][0] == 60
    await db.close()


async def test_a_failed_transaction_rolls_back_only_its_own_writes(db_path: Path) -> None:
    db = await Database.open(db_path)
    async with db.transaction() as conn:
        await conn.execute("CREATE TABLE t (n INTEGER)")
    started = asyncio.Event()

    async def failing() -> None:
        async with db.transaction() as conn:
            await conn.execute("INSERT INTO t VALUES (1)")
            started.set()
            await asyncio.sleep(0.01)
            raise RuntimeError("boom")

    async def succeeding() -> None:
        await started.wait()
        async with db.transaction() as conn:
            await conn.execute("INSERT INTO t VALUES (2)")

    results = await asyncio.gather(failing(), succeeding(), return_exceptions=True)
    assert isinstance(results[0], RuntimeError) and results[1] is None
    assert [r[0] for r in await db.fetchall("SELECT n FROM t")] == [2]
    await db.close()


async def test_a_nested_transaction_is_a_savepoint_that_can_fail_alone(db_path: Path) -> None:
    db = await Database.open(db_path)
    async with db.transaction() as conn:
        await conn.execute("CREATE TABLE t (n INTEGER)")
    async with db.transaction() as conn:
        await conn.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(ValueError):
            async with db.transaction() as inner:
                await inner.execute("INSERT INTO t VALUES (2)")
                raise ValueError("inner fails")
        await conn.execute("INSERT INTO t VALUES (3)")
    assert [r[0] for r in await db.fetchall("SELECT n FROM t ORDER BY n")] == [1, 3]
    await db.close()


async def test_cancelling_a_flushing_producer_or_closing_at_once_loses_no_event(db_path: Path) -> None:
    from harnez.events import Event
    from harnez.store import Store

    store = await Store.open(db_path)
    record = await store.sessions.insert("cd" * 16, "/w", None)
    for i in range(3000):
        store.events.append(record.num, record.id, Event(ev.TextDelta(text=str(i))))
    flushing = asyncio.create_task(store.events.flush())
    await asyncio.sleep(0)
    flushing.cancel()
    for i in range(3000, 3500):
        store.events.append(record.num, record.id, Event(ev.TextDelta(text=str(i))))
    await store.close()
    store = await Store.open(db_path)
    events = await store.events.read_after(record.num, record.id)
    assert [e.body.text for e in events] == [str(i) for i in range(3500)]
    await store.close()


async def test_a_cancellation_while_a_transaction_opens_or_commits_leaves_the_connection_usable(
    db_path: Path,
) -> None:
    db = await Database.open(db_path)
    async with db.transaction() as conn:
        await conn.execute("CREATE TABLE t (n INTEGER)")

    async def write(n: int) -> None:
        async with db.transaction() as conn:
            await conn.execute("INSERT INTO t VALUES (?)", (n,))

    for n in range(60):
        task = asyncio.create_task(write(n))
        for _ in range(n % 6):
            await asyncio.sleep(0)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    await write(1000)
    rows = [r[0] for r in await db.fetchall("SELECT n FROM t")]
    assert rows[-1] == 1000 and len(rows) == len(set(rows))
    await db.close()
